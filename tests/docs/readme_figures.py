#!/usr/bin/env python3
"""readme_figures.py — checks one figure that README.md (or a docs/ page) quotes from a results
file in tests/bench/ against that file.

    readme_figures.py ROOT NAME     check figure NAME (exit 0 when it agrees, 1 otherwise,
                                    printing the quote and what the results file says)
    readme_figures.py ROOT --list   the names, one a line

Each figure is one entry of FIGURES: where it is quoted (a file and a regular expression whose
groups are the figures), and a function that reads the results file and returns what the quote
must say, as the same strings. To quote a new figure, add an entry; to change a figure, change
the quote or the results file (the bench rewrites its tables; the analysis below a results
file's "<!-- analysis -->" mark is written by hand).
"""
import os
import re
import sys


def tables(path):
    """The Markdown tables of a file, in order: each a list of rows, each a dict by header."""
    out, cur, header = [], None, None
    for line in open(path):
        line = line.rstrip("\n")
        if not line.startswith("|"):
            cur = header = None
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if header is None:
            header, cur = cells, []
            out.append(cur)
        elif not all(set(c) <= set("-: ") for c in cells):
            cur.append(dict(zip(header, cells)))
    return out


def num(text):
    """The first number in text: "25.7 ns" -> 25.7, "2.04x" -> 2.04, "5239" -> 5239.0."""
    return float(re.search(r"-?\d+(?:\.\d+)?", text.replace(",", "")).group())


def bench(root, name):
    return os.path.join(root, "tests", "bench", name)


def recording_row(root, start):
    rows = tables(bench(root, "RESULTS-recording.md"))[0]
    return next(r for r in rows if r["measure"].startswith(start))


def recording_instructions(root):
    return [str(int(num(recording_row(root, "instructions per launch")["with shim (recording)"])))]


def recording_instructions_64(root):
    v = int(num(recording_row(root, "the same, 64 pointer")["with shim (recording)"]))
    return ["{:,}".format(v)]


def recording_ns(root):
    return [str(round(num(recording_row(root, "wall time per launch")["shim's own cost"])))]


def residency_rows(root):
    rows = tables(bench(root, "RESULTS-residency.md"))[0]
    return [r for r in rows if r["mode"] in ("async", "exact") and not r["budget"].startswith("100%")]


def residency_plan_pct(root):
    """The quoted bound on |achieved / predicted - 1| over the async and exact rows at 75% and
    50%: the largest deviation, rounded up to half a percent."""
    worst = max(abs(num(r["scheduled us/iter"]) / num(r["plan predicts"]) - 1)
                for r in residency_rows(root))
    half = -(-worst * 200 // 1) / 2  # ceil to 0.5
    return [("%g" % half)]


def residency_bound(root):
    return ["%.2f" % max(num(r["scheduled / bound"]) for r in residency_rows(root))]


def gpu_tables(root):
    return tables(bench(root, "RESULTS-gpu.md"))


def gpu_budget_range(root):
    """"(LOx-HIx native)": the fastest and slowest budgeted run of every PyTorch table."""
    v = [num(r["/ native"]) for t in gpu_tables(root)[1:] for r in t
         if "75%" in r.get("run", "") or "50%" in r.get("run", "")]
    return ["%.1f" % min(v), "%d" % round(max(v))]


def gpu_mlp_default(root):
    """The MLP's default-budget rows of the latest MLP table (the last before the transformer's)."""
    mlp = [t for t in gpu_tables(root)[1:] if any("caching" in r.get("run", "") for r in t)][-1]
    v = {num(r["/ native"]) for r in mlp if "default budget" in r["run"]}
    return ["%.2f" % v.pop()] if len(v) == 1 else ["not one figure: %s" % sorted(v)]


def gpu_transformer_runs(root):
    """"eager at 75% and 50%, compiled at 75%" and "cudaMallocAsync only": the transformer's
    table has no caching-allocator row, and these budgets."""
    t = next(t for t in gpu_tables(root)[1:] if any(r.get("run", "").startswith("eager") for r in t))
    text = open(bench(root, "RESULTS-gpu.md")).read()
    only_async = "cudaMallocAsync only" in text and not any("caching" in r["run"] for r in t)
    seen = {}
    for r in t:
        m = re.match(r"(eager|compiled), libshim, (\d+)%", r["run"])
        if m:
            seen.setdefault(m.group(1), []).append(m.group(2) + "%")
    return ["eager at " + " and ".join(seen.get("eager", [])) + ", compiled at " +
            " and ".join(seen.get("compiled", [])), "cudaMallocAsync" if only_async else "both"]


def vmm_rows(root):
    rows = tables(bench(root, "RESULTS-vmm-cost.md"))[0]
    return [r for r in rows if r["mode"] in ("async", "exact") and r["budget"] in ("75%", "50%")]


def vmm_after(root):
    v = [num(r["/ plan"]) for r in vmm_rows(root) if r["VMM calls"].startswith("cost")]
    return ["%.2f" % min(v), "%.2f" % max(v)]


def vmm_before(root):
    """The hand-written comparison table below the analysis mark: the "before" column."""
    t = tables(bench(root, "RESULTS-vmm-cost.md"))[1]
    v = [float(re.search(r"\(([\d.]+)x\)", r["before: us/iter (/ plan told 10 us)"]).group(1))
         for r in t if "100%" not in r["mode, budget"]]
    return ["%.1f" % min(v), "%.1f" % max(v)]


# name: (quoting file, pattern whose groups are the quote, the figures the results file gives)
FIGURES = {
    "recording: instructions per launch (README)":
        ("README.md", r"(\d+) instructions per launch with two pointer", recording_instructions),
    "recording: instructions with 64 pointers (README)":
        ("README.md", r"instructions per launch with two pointer parameters, ([\d,]+) with 64",
         recording_instructions_64),
    "recording: ns per launch (README)":
        ("README.md", r"about (\d+) ns and \d+ instructions per launch", recording_ns),
    "recording: instructions per launch (docs/recording.md)":
        ("docs/recording.md", r"(\d+) instructions per launch with two", recording_instructions),
    "recording: instructions with 64 pointers (docs/recording.md)":
        ("docs/recording.md", r"parameters, ([\d,]+) instructions with 64",
         recording_instructions_64),
    "recording: ns per launch (docs/recording.md)":
        ("docs/recording.md", r"about (\d+) ns and", recording_ns),
    "residency: within N% of the plan":
        ("README.md", r"within ([\d.]+)% of the\s+plan's prediction", residency_plan_pct),
    "residency: within Nx of the lower bound":
        ("README.md", r"within ([\d.]+)x of the planner's lower bound", residency_bound),
    "gpu: budgeted runs' range against native":
        ("README.md", r"\(([\d.]+)x-([\d.]+)x native\)", gpu_budget_range),
    "gpu: the MLP at the default budget":
        ("README.md", r"the MLP ran at ([\d.]+)x native", gpu_mlp_default),
    "gpu: the transformer's runs and allocator":
        ("README.md", r"transformer\s+encoder with (\w+) only \((eager at [^)]*)\)",
         lambda root: gpu_transformer_runs(root)[::-1]),
    "vmm-cost: before, against the plan":
        ("README.md", r"took ([\d.]+)x-([\d.]+)x their plan", vmm_before),
    "vmm-cost: now, against the plan":
        ("README.md", r"their plan take ([\d.]+)x-([\d.]+)x", vmm_after),
}


def main():
    root = sys.argv[1]
    if sys.argv[2] == "--list":
        print("\n".join(FIGURES))
        return 0
    name = sys.argv[2]
    where, pattern, expected = FIGURES[name]
    text = open(os.path.join(root, where)).read()
    m = re.search(pattern, text)
    quote = list(m.groups()) if m else None
    want = expected(root)
    if quote is None:
        print(f"{where}: no quote matching {pattern!r}")
        return 1
    if quote != want:
        print(f"{where} quotes {quote}; the results file gives {want}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
