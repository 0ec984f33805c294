#!/usr/bin/env python3
"""figures_check.py — every surface of one traced run prints the same figures.

    figures_check.py EXIT_LOG RUN_ERR SUMMARY_TXT SUMMARY_JSON PAGE MOVES_TXT MOVES_JSON

EXIT_LOG: libshim's log of the run (its two "exit:" lines); RUN_ERR: shim-run's standard error
(the log again, then its summary of the trace); SUMMARY_TXT, SUMMARY_JSON: shim-report summary
and summary --json of the trace; PAGE: shim-report html of it; MOVES_TXT, MOVES_JSON: shim-report
moves and moves --json. Each surface is read into one dict of figures (the verdict, the step time
against native and its lower bound, the steady state per step and over how many steps, the
warm-up, the moves by reason and outcome) and compared with the exit line's, figure by figure:
one "ok"/"not ok" line per surface, each disagreement named. A figure printed with one decimal
agrees with a JSON value (three decimals) within half of its last digit. Exit 0 when every
surface agrees, 1 otherwise.
"""
import html
import json
import re
import sys

MIB = 2**20
NUM = r"(\d+(?:\.\d+)?)"


def words_figures(lines):
    """The figures in the words of shim_trace_figures.h, wherever they are among lines."""
    text = "\n".join(lines)
    f = {}
    m = re.search(r"(fitted|did not fit): resident peak " + NUM + r" MiB (?:within|over) the " +
                  NUM + r" MiB budget \(allocations peaked at " + NUM + r" MiB", text)
    if m:
        f.update(answer=m.group(1), resident_mib=float(m.group(2)), budget_mib=float(m.group(3)),
                 alloc_mib=float(m.group(4)))
    m = re.search(r"\bstep " + NUM + r" ms (?:under the budget )?against " + NUM +
                  r" ms native, " + NUM + r"x(?:, at least " + NUM + r"x for any plan)?", text)
    if m:
        f.update(step_ms=float(m.group(1)), native_ms=float(m.group(2)),
                 slowdown=float(m.group(3)))
        if m.group(4):
            f["bound_x"] = float(m.group(4))
    m = re.search(r"steady state under the plan \((\d+) steps? from step (\d+)\): " + NUM +
                  r" MiB moved and " + NUM + r" ms stalled per step, of " + NUM +
                  r" ms of wall time per step \(([^)]*)\)", text)
    if m:
        f.update(steady=int(m.group(1)), steady_from=int(m.group(2)),
                 moved_mib=float(m.group(3)), stall_ms=float(m.group(4)),
                 wall_ms=float(m.group(5)), wall_clock=m.group(6))
    m = re.search(r"warm-up apart \((\d+) other steps?, and the time outside any step\): " + NUM +
                  r" MiB moved, " + NUM + r" ms stalled", text)
    if m:
        f.update(warmup=int(m.group(1)), warmup_mib=float(m.group(2)),
                 warmup_stall_ms=float(m.group(3)))
    m = re.search(r"(\d+) moves? \((\d+) to the host, (\d+) to the device\)(?:: by reason "
                  r"([a-z0-9 ,]*))?(?:; by outcome ([a-z0-9 ,]*))?", text)
    if m:
        f.update(moves=int(m.group(1)), to_host=int(m.group(2)), to_device=int(m.group(3)))
        for key, group in (("reason", 4), ("outcome", 5)):
            for item in (m.group(group) or "").split(", "):
                if item:
                    name, n = item.rsplit(" ", 1)
                    f[key + ":" + name] = int(n)
    return f


def exit_lines(path):
    return [l.split("info: exit: ", 1)[1] for l in open(path).read().splitlines()
            if "info: exit: " in l]


def json_figures(v, moves):
    """The figures of summary --json's verdict and moves objects, as the words would print them
    (MiB from bytes; the rest as they are)."""
    f = {}
    if v.get("answer") in ("fitted", "did not fit"):
        f.update(answer=v["answer"], resident_mib=v["resident_peak_bytes"] / MIB,
                 budget_mib=v["budget_bytes"] / MIB, alloc_mib=v["allocated_peak_bytes"] / MIB)
    if v.get("step_ms") is not None and v.get("native_step_ms") is not None:
        f.update(step_ms=v["step_ms"], native_ms=v["native_step_ms"], slowdown=v["slowdown"])
        if v.get("bound_slowdown") is not None:
            f["bound_x"] = v["bound_slowdown"]
    if v.get("steady_steps"):
        f.update(steady=v["steady_steps"], steady_from=v["steady_from_step"],
                 moved_mib=v["bytes_moved_per_step"] / MIB, stall_ms=v["stall_ms_per_step"],
                 wall_ms=v["wall_ms_per_step"], warmup=v["warmup_steps"],
                 warmup_mib=v["warmup_bytes_moved"] / MIB, warmup_stall_ms=v["warmup_stall_ms"])
    if moves:
        f.update(moves=moves["started"], to_host=moves["to_host"], to_device=moves["to_device"])
        for key in ("reason", "outcome"):
            for name, n in moves["by_" + key].items():
                if n:
                    f[key + ":" + name] = n
    return f


def page_figures(path):
    """The page's verdict: its sentences (data-words) and its figures (data-key/data-value, as
    summary --json's verdict keys), and its tables of moves by reason and outcome."""
    page = open(path).read()
    said = [html.unescape(t) for t in re.findall(r'<p class="answer">([^<]*)</p>', page)]
    said += [html.unescape(t) for t in re.findall(r'<p class="vwords" data-words="[a-z_]+">([^<]*)</p>', page)]
    f = words_figures(said)
    v = {k: (None if x == "null" else float(x))
         for k, x in re.findall(r'class="vfig" data-key="([a-z_]+)" data-value="([^"]*)"', page)}
    answer = re.search(r'class="verdict [a-z]+" data-answer="([^"]*)"', page)
    v["answer"] = answer.group(1) if answer else None
    tables = {}
    for key in ("reason", "outcome"):
        t = re.search(r'id="moves-by-' + key + r'".*?</table>', page, re.S)
        for name, n in re.findall(r'<tr><td class="text">([a-z]+)</td><td data-value="(\d+)">',
                                  t.group(0) if t else ""):
            if int(n):
                tables[key + ":" + name] = int(n)
    return f, json_figures(v, None), tables


def moves_json_figures(path):
    t = json.load(open(path))["totals"]
    f = {"moves": t["moves"]}
    for key in ("reason", "outcome"):
        for name, n in t["by_" + key].items():
            if n:
                f[key + ":" + name] = n
    return f


def tolerance(key):
    if key in ("slowdown", "bound_x"):
        return 0.0051
    if key.endswith("_mib") or key.endswith("_ms") or key in ("stall_ms", "wall_ms"):
        return 0.0501
    return 0


def differ(want, got, keys):
    bad = []
    for k in keys:
        if k not in got:
            bad.append(f"{k}: missing (the exit line says {want.get(k)})")
        elif k not in want:
            bad.append(f"{k}: {got[k]} (the exit line has none)")
        elif isinstance(want[k], str) or tolerance(k) == 0:
            if want[k] != got[k]:
                bad.append(f"{k}: {got[k]} (the exit line says {want[k]})")
        elif abs(float(want[k]) - float(got[k])) > tolerance(k):
            bad.append(f"{k}: {got[k]} (the exit line says {want[k]})")
    return bad


def main():
    exit_log, run_err, sum_txt, sum_json, page, moves_txt, moves_json = sys.argv[1:8]
    want = words_figures(exit_lines(exit_log))
    verdict_keys = sorted(k for k in want if ":" not in k and k not in ("moves", "to_host", "to_device"))
    move_keys = sorted(k for k in want if ":" in k or k in ("moves", "to_host", "to_device"))
    numbers = sorted(set(verdict_keys) - {"wall_clock"})
    needed = {"answer", "step_ms", "native_ms", "slowdown", "bound_x", "steady", "steady_from",
              "moved_mib", "stall_ms", "wall_ms", "warmup", "warmup_mib", "warmup_stall_ms",
              "moves", "reason:planned", "outcome:done"}
    bad = 0

    def say(name, problems):
        nonlocal bad
        if problems:
            bad += 1
            print(f"not ok - {name}: " + "; ".join(problems))
        else:
            print(f"ok - {name}")

    say("the exit lines hold every figure", [f"{k}: missing" for k in sorted(needed - set(want))]
        + ([] if want.get("stall_ms", 0) <= want.get("wall_ms", 0) else
           ["the stall per step exceeds the wall time it is part of"]))
    run = [l for l in open(run_err).read().splitlines() if not l.startswith("libshim[")]
    say("shim-run's summary", differ(want, words_figures(run), verdict_keys + move_keys))
    say("summary (text)", differ(want, words_figures(open(sum_txt).read().splitlines()),
                                 verdict_keys + move_keys))
    s = json.load(open(sum_json))
    say("summary --json: the figures", differ(want, json_figures(s["verdict"], s["moves"]),
                                              numbers + move_keys))
    say("summary --json: the words", differ(want, words_figures(list(s["verdict"]["words"].values())),
                                            verdict_keys + move_keys))
    said, figures, tables = page_figures(page)
    say("html: the verdict's words", differ(want, said, verdict_keys + move_keys))
    say("html: the verdict's figures", differ(want, figures, numbers))
    say("html: the moves by reason and outcome", differ(want, tables, [k for k in move_keys if ":" in k]))
    total = [l for l in open(moves_txt).read().splitlines() if l.startswith("total: ")]
    say("moves (text): the totals line", differ(want, words_figures(total), move_keys))
    say("moves --json: the totals", differ(want, moves_json_figures(moves_json),
                                           [k for k in move_keys if k not in ("to_host", "to_device")]))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
