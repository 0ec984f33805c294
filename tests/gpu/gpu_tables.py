#!/usr/bin/env python3
"""gpu_tables.py — the results of make gpu-check as one markdown file, a table per part.

    gpu_tables.py WORK [--twins FILE] [-o FILE]

WORK is the folder tests/gpu/gpu_check.sh ran in:
  header.txt        "key: value" lines (card, driver, torch, date, commit, command);
  skipped.txt       "PART<TAB>why" for each part not run;
  times.tsv         "PART<TAB>seconds" for each part run;
  vmm_handles.txt   part 1: vmm_handles' output (its tables follow its "## GPU facts" line);
  manifest.tsv      parts 2 and 3: a line per PyTorch run, as tests/gpu/torch_budget.sh writes
                    it (NAME, JOB, CASE, STATUS, SECONDS, BUDGET, ALLOC), and per run NAME.json (the
                    job's JSON line), NAME.err, and under libshim NAME.log and NAME.summary.json
                    (shim-report summary --json of its trace).
--twins FILE: the simulated twins' predictions, JOB<TAB>CASE<TAB>RATIO a line (the predicted
step time against native; "#" starts a comment line); a missing file gives "n/a" beside every
measurement, a line that is not of that form an error naming the file and line (and is left
out). Every ratio in the tables is taken between runs of this one command.

Prints the markdown (and writes it to FILE with -o); exits 0 unless WORK cannot be read.
Standard library only.
"""
import json
import os
import sys

MIB = 1 << 20
PART2_JOBS = ("mlp", "transformer")
CASE_LABEL = {
    "native": "native",
    "save-on-cpu": "native, save_on_cpu (by hand)",
    "default": "libshim, default budget",
    "soc": "libshim at save_on_cpu's peak reserved",
}


def case_label(case):
    if case in CASE_LABEL:
        return CASE_LABEL[case]
    return "libshim, %s%% of the peak" % case if case.isdigit() else case


def read_lines(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read().splitlines()
    except OSError:
        return None


def read_json(path):
    """The last line of path that parses as a JSON object (a job may print warnings first)."""
    for line in reversed(read_lines(path) or []):
        line = line.strip()
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                continue
    return None


def read_summary(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def read_twins(path, notes):
    """{(job, case): ratio} from the predictions file; each bad line noted with its place."""
    twins = {}
    lines = read_lines(path) if path else None
    if lines is None:
        return twins
    for i, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = line.split("\t")
        try:
            if len(parts) < 3 or not parts[0] or not parts[1]:
                raise ValueError
            ratio = float(parts[2])
            if not ratio > 0:
                raise ValueError
        except ValueError:
            notes.append("%s:%d: expected JOB<TAB>CASE<TAB>RATIO (a ratio > 0), got %r; line "
                         "left out" % (path, i, line[:80]))
            continue
        twins[(parts[0], parts[1])] = ratio
    return twins


class Run:
    """One PyTorch run: its manifest line and the files it left."""

    def __init__(self, work, fields):
        fields = fields + [""] * (7 - len(fields))
        self.name, self.job, self.case, self.status, secs, self.budget, self.alloc = fields[:7]
        self.seconds = int(secs) if secs.isdigit() else None
        self.out = read_json(os.path.join(work, self.name + ".json")) if self.ok else None
        self.summary = read_summary(os.path.join(work, self.name + ".summary.json"))
        log = read_lines(os.path.join(work, self.name + ".log")) or []
        exits = [ln.split("exit: ", 1)[1] for ln in log if "exit: " in ln]
        self.exit_line = exits[-1] if exits else None
        self.err = read_lines(os.path.join(work, self.name + ".err")) or []

    @property
    def ok(self):
        return self.status == "0"

    @property
    def shimmed(self):
        return self.case not in ("native", "save-on-cpu")

    def get(self, key):
        return self.out.get(key) if self.out else None

    def verdict(self):
        v = (self.summary or {}).get("verdict") or {}
        return v

    def plan(self):
        plans = (self.summary or {}).get("plans") or []
        return plans[-1] if plans else None

    def budget_bytes(self):
        b = (self.summary or {}).get("budget_bytes")
        if b:
            return b
        if self.budget.endswith("MiB") and self.budget[:-3].isdigit():
            return int(self.budget[:-3]) * MIB
        return None

    def why_not(self):
        """Why the run gave no figures: its status and the error's last line."""
        if self.status == "skipped":
            return "not started: the command's time was spent"
        if self.status == "timeout":
            return "timed out"
        if self.ok:
            return "no JSON line"
        last = [ln for ln in self.err if ln.strip()]
        return "exit status %s%s" % (self.status, (": " + last[-1].strip()[:160]) if last else "")


def wall(run):
    return run.seconds if run.seconds is not None else ""


def fmt_ms(v):
    return "%.2f" % v if isinstance(v, (int, float)) else ""


def fmt_x(a, b):
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b > 0:
        return "%.2fx" % (a / b)
    return ""


def fmt_mib(b):
    return "{:,}".format(int(b) // MIB) if isinstance(b, (int, float)) and b > 0 else ""


def losses_vs(run, native):
    """How run's per-step losses compare with native's."""
    mine, theirs = run.get("losses"), native.get("losses") if native else None
    if not isinstance(mine, list) or not isinstance(theirs, list):
        return ""
    if mine == theirs:
        return "identical"
    if len(mine) != len(theirs):
        return "%d steps against %d" % (len(mine), len(theirs))
    worst = max(abs(a - b) / max(abs(b), 1e-30) for a, b in zip(mine, theirs))
    return "max relative difference %.2g" % worst


def checksum_vs(run, native):
    mine = run.get("checksum")
    if run is native or native is None:
        return mine or ""
    theirs = native.get("checksum")
    return "= native" if mine == theirs else "**differs** (%s, native %s)" % (mine, theirs)


def twin_cells(twins, run, measured):
    """The twin's predicted ratio for run and the measured ratio against it."""
    if not twins:
        return ["n/a", "n/a"]
    p = twins.get((run.job, run.case))
    if p is None:
        return ["n/a", "n/a"]
    return ["%.2fx" % p, fmt_x(measured, p) if isinstance(measured, float) else ""]


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return out


def verdict_words(run):
    v = run.verdict()
    if v.get("answer"):
        return v["answer"]
    if run.exit_line:
        return run.exit_line.split(":", 1)[0]
    return ""


def part2_rows(runs, twins):
    native = next((r for r in runs if r.case == "native" and r.out), None)
    by_hand = next((r for r in runs if r.case == "save-on-cpu" and r.out), None)
    base = native.get("step_ms") if native else None
    soc_ms = by_hand.get("step_ms") if by_hand else None
    rows = []
    for r in runs:
        if not r.out:
            rows.append([case_label(r.case), fmt_mib(r.budget_bytes()) if r.shimmed else ""] +
                        ["" for _ in range(13)] +
                        [r.why_not(), wall(r)])
            continue
        ms = r.get("step_ms")
        ratio = ms / base if isinstance(ms, (int, float)) and base else None
        plan = r.plan() if r.shimmed else None
        plan_cell = plan_x = ""
        if plan and plan.get("predicted_us"):
            plan_cell = "%.2f (%s)" % (plan["predicted_us"] / 1e3,
                                       fmt_x(plan["predicted_us"], plan.get("native_us")))
            plan_x = fmt_x(ms, plan["predicted_us"] / 1e3)
        v = r.verdict()
        moved = v.get("bytes_moved_per_step") if r.shimmed else None
        rows.append([
            case_label(r.case),
            fmt_mib(r.budget_bytes()) if r.shimmed else "",
            fmt_ms(ms), fmt_x(ms, base), fmt_x(ms, soc_ms),
            plan_cell, plan_x,
        ] + twin_cells(twins, r, ratio) + [
            losses_vs(r, native) if r is not native else "-",
            checksum_vs(r, native),
            fmt_mib(v.get("resident_peak_bytes")) if r.shimmed else "",
            fmt_mib(r.get("peak_reserved")),
            "%.1f" % (moved / MIB) if isinstance(moved, (int, float)) else "",
            verdict_words(r) if r.shimmed else "",
            "" if r.ok else r.why_not(),
            wall(r),
        ])
    return rows


PART2_HEADER = ["run", "budget MiB", "step ms", "/ native", "/ save_on_cpu's", "plan predicts ms",
                "/ plan", "twin predicts", "/ twin", "losses vs native", "checksum",
                "resident peak MiB (trace)", "PyTorch peak reserved MiB", "moved MiB per step",
                "libshim's verdict", "failed", "wall s"]


def budget_kept(run):
    """Whether run, under libshim, kept its budget: libshim's verdict, and PyTorch's own count
    where PyTorch maps the memory itself (expandable segments, which libshim leaves alone)."""
    words = verdict_words(run)
    budget = run.budget_bytes()
    reserved = run.get("peak_reserved")
    own_vmm = "expandable_segments:True" in (run.get("alloc_conf") or "")
    if own_vmm and budget and isinstance(reserved, int) and reserved > budget:
        return "no: PyTorch reserved %s MiB of its own VMM, over the budget (libshim: %s)" % (
            fmt_mib(reserved), words or "no verdict")
    if words == "fitted":
        return "yes (fitted)"
    return "no (%s)" % words if words else "unknown (no verdict)"


def part3_rows(runs, twins):
    rows = []
    natives = {(r.job, r.alloc): r for r in runs if r.case == "native" and r.out}
    for r in runs:
        native = natives.get((r.job, r.alloc))
        if not r.out:
            rows.append([r.job, case_label(r.case), "", fmt_mib(r.budget_bytes())] +
                        ["" for _ in range(11)] + [r.why_not(), wall(r)])
            continue
        ms = r.get("step_ms")
        base = native.get("step_ms") if native else None
        ratio = ms / base if isinstance(ms, (int, float)) and base else None
        s = r.summary or {}
        iters = s.get("iterations") or 0
        graphs = "%.1f" % (s.get("graph_launches", 0) / iters) if r.shimmed and iters else ""
        rows.append([
            r.job, case_label(r.case),
            "%s (%s)" % (r.get("allocator") or "?", r.get("alloc_conf") or "unset"),
            fmt_mib(r.budget_bytes()) if r.shimmed else "",
            fmt_ms(ms), fmt_x(ms, base),
        ] + twin_cells(twins, r, ratio) + [
            losses_vs(r, native) if r is not native else "-",
            checksum_vs(r, native),
            budget_kept(r) if r.shimmed else "",
            fmt_mib(r.verdict().get("resident_peak_bytes")) if r.shimmed else "",
            fmt_mib(r.get("peak_reserved")),
            fmt_mib(r.get("device_used_max")),
            graphs,
            "" if r.ok else r.why_not(),
            wall(r),
        ])
    return rows


PART3_HEADER = ["job", "run", "allocator (PYTORCH_CUDA_ALLOC_CONF)", "budget MiB", "step ms",
                "/ native", "twin predicts", "/ twin", "losses vs native", "checksum",
                "budget kept?", "resident peak MiB (trace)", "PyTorch peak reserved MiB",
                "device used at step ends MiB (max)", "graph launches per step (trace)",
                "failed", "wall s"]


def exit_lines(runs):
    """libshim's exit line of each run under it that started."""
    out = []
    for r in runs:
        if not r.shimmed or r.status == "skipped":
            continue
        if r.exit_line:
            out.append("- `%s`: %s" % (r.name, r.exit_line))
        else:
            out.append("- `%s`: no exit line (%s)" % (r.name, r.why_not()))
    return out


def run_notes(runs):
    """What the jobs' standard error says that the tables do not: skipped CUDA graphs."""
    out = []
    for r in runs:
        said = [ln.strip() for ln in r.err if "skipping cudagraphs" in ln.lower()]
        if said:
            out.append("- `%s`: %s" % (r.name, said[0][:200]))
    return out


def part1(work):
    lines = read_lines(os.path.join(work, "vmm_handles.txt"))
    if lines is None:
        return None
    out = [ln for ln in lines if ln.startswith(("not ok", "skip"))]
    if out:
        out = ["Lines the program printed besides its figures:", ""] + \
              ["    " + ln for ln in out] + [""]
    start = next((i for i, ln in enumerate(lines) if ln.startswith("## GPU facts")), None)
    if start is None:
        return out + ["vmm_handles printed no tables (see gpu-check.log)."]
    # Its own headings (###) sit one level lower here, under the part's.
    return out + ["Figures: " + lines[start][3:]] + \
        ["#" + ln if ln.startswith("###") else ln for ln in lines[start + 1:]]


def kv(path):
    d = {}
    for line in read_lines(path) or []:
        if ": " in line:
            k, v = line.split(": ", 1)
            d[k.strip()] = v.strip()
    return d


def render(work, twins_path):
    notes = []
    twins = read_twins(twins_path, notes)
    head = kv(os.path.join(work, "header.txt"))
    skipped = {}
    for line in read_lines(os.path.join(work, "skipped.txt")) or []:
        part, _, why = line.partition("\t")
        skipped.setdefault(part, []).append(why)
    times = {}
    for line in read_lines(os.path.join(work, "times.tsv")) or []:
        part, _, secs = line.partition("\t")
        times[part] = secs
    runs = [Run(work, ln.split("\t")) for ln in read_lines(os.path.join(work, "manifest.tsv")) or []
            if ln.strip()]

    # Headings from ## down, to paste into tests/bench/RESULTS-gpu.md under its title.
    md = ["## make gpu-check on %s" % head.get("card", "an unknown card"), ""]
    for key in ("card", "driver", "cuda", "torch", "cpus", "date", "commit", "command"):
        if key in head:
            md.append("- %s: %s" % (key, head[key]))
    if twins:
        said = "%s (%d)" % (twins_path, len(twins))
    elif twins_path and os.path.exists(twins_path):
        said = "none in %s: n/a beside every figure" % twins_path
    else:
        said = "none (%s: n/a beside every figure)" % (
            "%s not found" % twins_path if twins_path else "no file given")
    md.append("- twins' predictions: " + said)
    md += ["- ratios: every one is taken between runs of this command, on this card", ""]
    md += ["- " + n for n in notes] + ([""] if notes else [])

    def section(part, title, body):
        md.extend(["### %s. %s" % (part, title), ""])
        if part in times:
            md.extend(["(%s s of wall time)" % times[part], ""])
        for why in skipped.get(part, []):
            md.extend(["Skipped: %s" % why, ""])
        md.extend(body)
        while md[-1] == "":
            md.pop()
        md.append("")

    p1 = part1(work)
    section("1", "VMM facts (tests/gpu/vmm_handles.cu)", p1 if p1 is not None else [])

    body = []
    for job in PART2_JOBS:
        mine = [r for r in runs if r.job == job]
        if not mine:
            continue
        body += ["#### %s" % job, ""] + table(PART2_HEADER, part2_rows(mine, twins)) + [""]
        body += exit_lines(mine) + [""]
    section("2", "PyTorch jobs under budgets, and save_on_cpu at the same memory", body)

    rest = [r for r in runs if r.job not in PART2_JOBS]
    body = []
    if rest:
        body = table(PART3_HEADER, part3_rows(rest, twins)) + [""] + exit_lines(rest) + \
            run_notes(rest)
    section("3", "CUDA graphs (torch.compile reduce-overhead) and expandable segments at 75%",
            body)
    if not runs and p1 is None:
        md.append("no GPU: nothing measured")
    return "\n".join(md).rstrip() + "\n"


def main(argv):
    args, twins, out = [], None, None
    i = 0
    while i < len(argv):
        if argv[i] in ("--twins", "-o") and i + 1 < len(argv):
            if argv[i] == "--twins":
                twins = argv[i + 1]
            else:
                out = argv[i + 1]
            i += 2
            continue
        args.append(argv[i])
        i += 1
    if len(args) != 1 or not os.path.isdir(args[0]):
        sys.stderr.write("usage: gpu_tables.py WORK [--twins FILE] [-o FILE] (WORK: a folder)\n")
        return 2
    text = render(args[0], twins)
    if out:
        with open(out, "w", encoding="utf-8") as f:
            f.write(text)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
