#!/usr/bin/env python3
"""check_report_html.py — checks the DOM of a `shim-report html` page as a browser left it
(chromium --dump-dom) against `shim-report summary --json` and `moves --json` of the same trace.
Prints one "ok - NAME" / "not ok - NAME" line per check (tests/run_tests.sh counts them); exit
status 1 when one failed.

    check_report_html.py --name LABEL --dom DOM --summary SUMMARY.json --moves MOVES.json
                         [--selftest DOM] [--config FILE] [--expect-moves] [--expect-plan]
    check_report_html.py --name LABEL --dom DOM --ranks-summary SUMMARY.json --ranks-text SUMMARY
                         --rank-moves MOVES.json... [--selftest DOM]

The second form checks the page of several traces (html TRACE...) against summary --json
TRACE... and summary TRACE... (for the median step), and each rank's part, as the page of its
trace alone, against its trace's summary object and moves --json (given in rank order).

--dom: the page after its script ran. --selftest: the page opened as PAGE#selftest, where the
script clicks every table header twice, picks every rank in turn (several traces) and moves over
each memory chart (report_html.js).
--config: the text the configuration section must show. --expect-*: the trace must have moves
(or a plan), so that their charts must have drawn.

What the page promises (tools/report/report_html.h): every number it shows is summary --json's, as
data-* attributes and in <script id="shim-data">; tables keep every row.
"""
import argparse
import json
import sys
from html.parser import HTMLParser

from tap_check import Checks

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}


class Node:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent = tag, dict(attrs), parent
        self.children, self.text_parts = [], []

    def text(self):
        return "".join(p if isinstance(p, str) else p.text() for p in self.text_parts)

    def iter(self):
        yield self
        for c in self.children:
            yield from c.iter()

    def find_all(self, tag=None, cls=None, **attrs):
        for n in self.iter():
            if tag is not None and n.tag != tag:
                continue
            if cls is not None and cls not in n.attrs.get("class", "").split():
                continue
            if all(n.attrs.get(k.replace("_", "-")) == v for k, v in attrs.items()):
                yield n

    def find(self, tag=None, cls=None, **attrs):
        return next(self.find_all(tag, cls, **attrs), None)

    def by_id(self, ident):
        return next((n for n in self.iter() if n.attrs.get("id") == ident), None)


class Builder(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", {}, None)
        self.cur = self.root

    def handle_starttag(self, tag, attrs):
        node = Node(tag, attrs, self.cur)
        self.cur.children.append(node)
        self.cur.text_parts.append(node)
        if tag not in VOID:
            self.cur = node

    def handle_startendtag(self, tag, attrs):
        node = Node(tag, attrs, self.cur)
        self.cur.children.append(node)
        self.cur.text_parts.append(node)

    def handle_endtag(self, tag):
        n = self.cur
        while n is not None and n.tag != tag:
            n = n.parent
        if n is not None and n.parent is not None:
            self.cur = n.parent

    def handle_data(self, data):
        self.cur.text_parts.append(data)


def parse(path):
    b = Builder()
    with open(path, encoding="utf-8") as f:
        b.feed(f.read())
    b.close()
    return b.root


check = Checks()


def value(cell):
    """A number cell's data-value as a JSON literal, else the cell's text."""
    v = cell.attrs.get("data-value")
    return json.loads(v) if v is not None else cell.text()


def table_rows(table):
    """The table's rows as dicts by column key (extra columns left out), and its keys."""
    ths = [th for th in table.find_all("th")]
    keys = [th.attrs.get("data-key") for th in ths]
    extra = [th.attrs.get("data-extra") == "1" for th in ths]
    body = table.find("tbody")
    rows = []
    for tr in body.find_all("tr"):
        cells = [c for c in tr.children if c.tag == "td"]
        rows.append({k: value(c) for k, c, x in zip(keys, cells, extra) if not x})
    return rows, [k for k, x in zip(keys, extra) if not x]


def same_rows(label, table, expected):
    if table is None:
        check(f"{label}: the table is there", False)
        return
    rows, keys = table_rows(table)
    check(f"{label}: {len(expected)} rows", len(rows) == len(expected),
          f"{len(rows)} in the page")
    bad = [(i, k, r.get(k), e.get(k)) for i, (r, e) in enumerate(zip(rows, expected))
           for k in keys if r.get(k) != e.get(k)]
    check(f"{label}: every cell is summary --json's ({', '.join(keys)})", not bad,
          "; ".join(f"row {i} {k}: page {p!r}, json {j!r}" for i, k, p, j in bad[:4]))


def check_script(name, dom):
    """The page's script ran to its end without an error and set up every sortable table."""
    html = dom.find("html")
    body = dom.find("body")
    check(f"{name}: the page's script ran to its end (body data-ready)",
          body is not None and body.attrs.get("data-ready") == "1")
    errs = dom.by_id("shim-errors")
    check(f"{name}: no script error (no html data-errors, #shim-errors empty)",
          html is not None and "data-errors" not in html.attrs and errs is not None and
          errs.text().strip() == "", errs.text().strip()[:300] if errs else "no #shim-errors")
    check(f"{name}: every sortable table was set up",
          body is not None and body.attrs.get("data-sortable-tables") ==
          str(len(list(dom.find_all("table", "sortable")))) and
          all(t.attrs.get("data-sortable") == "1" for t in dom.find_all("table", "sortable")))


def data_block(name, dom):
    """The page's data block, or None (and a failed check) when it is not JSON."""
    try:
        return json.loads(dom.by_id("shim-data").text())
    except Exception as e:  # noqa: BLE001 - any failure is the check's
        check(f"{name}: the data block is JSON", False, str(e))
        return None


def check_verdict(name, dom, summary):
    """The verdict is the first thing the page shows (the first visible element of its body, before
    the title), and each of its figures is summary --json's "verdict" value."""
    body = dom.find("body")
    shown = [c for c in (body.children if body else [])
             if c.tag not in ("script", "style") and "hidden" not in c.attrs]
    first = shown[0] if shown else None
    check(f"{name}: the verdict is the first thing on the page (got "
          f"{first.tag + '#' + first.attrs.get('id', '') if first else 'nothing'})",
          first is not None and first.attrs.get("id") == "verdict")
    want = summary.get("verdict", {})
    answer = first.attrs.get("data-answer") if first is not None else None
    check(f"{name}: the verdict says {answer!r}, summary --json's answer ({want.get('answer')!r})",
          answer is not None and answer == want.get("answer") and
          first.attrs.get("data-step-source") == want.get("step_source"))
    figs = list(first.find_all(cls="vfig")) if first is not None else []
    bad = [(f.attrs["data-key"], f.attrs["data-value"], want.get(f.attrs["data-key"], "missing"))
           for f in figs if json.loads(f.attrs["data-value"]) != want.get(f.attrs["data-key"], "missing")]
    keys = {f.attrs["data-key"] for f in figs}
    need = {"resident_peak_bytes", "budget_bytes", "allocated_peak_bytes", "step_ms",
            "native_step_ms", "slowdown", "bytes_moved_per_step", "stall_ms_per_step"}
    check(f"{name}: the verdict's {len(figs)} figures are summary --json's verdict "
          f"(resident peak, budget, allocations' peak, step, native, slowdown, moved, stall)",
          need <= keys and not bad, str(bad[:4]) + (f" missing {sorted(need - keys)}" if need - keys else ""))
    sentence = first.find("p", "answer") if first is not None else None
    check(f"{name}: the verdict's sentence opens with its answer",
          sentence is not None and answer is not None and sentence.text().startswith(answer))


def check_page(a, dom, summary, moves):
    name = a.name
    check_script(name, dom)
    check_verdict(name, dom, summary)
    data = data_block(name, dom)
    if data is None:
        return
    check(f"{name}: the data block's summary is summary --json's", data["summary"] == summary)
    check(f"{name}: the data block's moves totals are moves --json's",
          data["moves_totals"] == moves["totals"])
    check_trace(name, dom, "", data, summary, moves, a)


def check_trace(name, dom, pfx, data, summary, moves, a):
    """One trace's part of a page (the whole page of one trace; a rank's section, its element
    ids prefixed with pfx, on the page of several): data holds its "memory" series and "top"."""
    def by_id(ident):
        return dom.by_id(pfx + ident)

    figs = list(dom.find_all(cls="fig"))
    bad = [(f.attrs["data-key"], f.attrs["data-value"]) for f in figs
           if json.loads(f.attrs["data-value"]) != summary.get(f.attrs["data-key"], "missing")]
    check(f"{name}: the {len(figs)} headline figures are summary --json's", figs and not bad,
          str(bad[:4]))

    # ---- the memory chart ----
    mem = data["memory"]
    fig = by_id("memory-chart")
    check(f"{name}: memory chart: peak and budget are summary --json's",
          fig is not None and int(fig.attrs["data-peak-bytes"]) == summary["peak_device_bytes"] and
          int(fig.attrs["data-budget-bytes"]) == summary["budget_bytes"])
    n = len(mem["t_ms"])
    check(f"{name}: memory chart: {n} samples drawn of {mem['changes']} changes, at most 4 per "
          f"pixel column ({mem['buckets']})",
          fig is not None and n == int(fig.attrs["data-points"]) and
          all(len(mem[k]) == n for k in ("total", "device", "host", "moving")) and
          0 < n <= 4 * mem["buckets"] + 1 and n <= mem["changes"] and
          all(a <= b for a, b in zip(mem["t_ms"], mem["t_ms"][1:])))
    check(f"{name}: memory chart: the series' largest total is the peak "
          f"({max(mem['total'], default=0)})",
          max(mem["total"], default=0) == summary["peak_device_bytes"])
    check(f"{name}: memory chart: device + moving + host is the total where it fits",
          all(d + m + h == t for d, m, h, t in zip(mem["device"], mem["moving"], mem["host"],
                                                      mem["total"]) if m + h <= t))
    areas = list(fig.find_all("path", "area")) if fig else []
    drawn = [a for a in areas if a.attrs.get("d", "").count("H") >= (2 if n > 1 else 1)]
    check(f"{name}: memory chart: three stacked layers drawn (on device, moving, on host)",
          sorted(x.attrs.get("data-layer") for x in drawn) == ["moving", "on device", "on host"],
          str([x.attrs.get("data-layer") for x in areas]))
    budget = fig.find("path", "budget") if fig else None
    dev_of = {x["device"]: x for x in summary.get("devices", [])}
    primary = summary.get("primary_device", 0)
    primary_budget = dev_of[primary]["budget_bytes"] if primary in dev_of else summary["budget_bytes"]
    check(f"{name}: memory chart: the budget line drawn where the device's budget was recorded",
          (budget is not None and budget.attrs.get("d", "").startswith("M")) ==
          bool(mem["budget"]) == (primary_budget > 0))
    peak = fig.find("g", "peak") if fig else None
    check(f"{name}: memory chart: the peak marked",
          (peak is not None and peak.find("circle") is not None) ==
          (summary["peak_device_bytes"] > 0))

    # ---- every other device's memory chart (trace formats 1.6 to 1.8) ----
    others = data.get("device_memory", [])
    shown = sorted(d for d, x in dev_of.items() if d != primary and
                   (x["allocations"] or x["evictions"] or x["restores"]))
    check(f"{name}: a memory chart for each other device with allocations or moves ({shown})",
          [x["device"] for x in others] == shown, str([x["device"] for x in others]))
    for x in others:
        d, dm = x["device"], x["memory"]
        dfig = by_id(x["chart"])
        want = dev_of.get(d, {})
        check(f"{name}: GPU {d}'s chart: its device, peak and budget are its devices entry's",
              dfig is not None and int(dfig.attrs["data-device"]) == d and
              int(dfig.attrs["data-peak-bytes"]) == want.get("peak_bytes") and
              int(dfig.attrs["data-budget-bytes"]) == want.get("budget_bytes"))
        check(f"{name}: GPU {d}'s chart: the series' largest total is its peak, device + moving "
              f"+ host is the total where it fits",
              max(dm["total"], default=0) == want.get("peak_bytes") and
              len(dm["t_ms"]) == int(dfig.attrs["data-points"]) and
              all(a + b + c == t for a, b, c, t in zip(dm["device"], dm["moving"], dm["host"],
                                                          dm["total"]) if b + c <= t))
        dbudget = dfig.find("path", "budget") if dfig else None
        check(f"{name}: GPU {d}'s chart: its budget line where its budget was recorded",
              (dbudget is not None) == bool(dm["budget"]) == (want.get("budget_bytes", 0) > 0))

    # ---- steps ----
    steps = summary["steps"]
    sc = by_id("steps-chart")
    if steps:
        bars = list(sc.find_all("g", "bar")) if sc else []
        check(f"{name}: steps chart: one bar per step, stall and the rest ({len(bars)})",
              len(bars) == min(len(steps), 240) and
              all(len(list(b.find_all("rect"))) == 2 for b in bars))
        if len(steps) <= 240:
            got = [(int(b.attrs["data-step"]), json.loads(b.attrs["data-wall-us"]),
                    json.loads(b.attrs["data-stall-us"])) for b in bars]
            want = [(s["step"], s["wall_us"], s["stall_us"]) for s in steps]
            check(f"{name}: steps chart: each bar's wall and stall are summary --json's",
                  got == want, f"{got[:2]} vs {want[:2]}")
    else:
        check(f"{name}: no steps, no steps chart", sc is None)
    if steps:
        same_rows(f"{name}: steps table", by_id("steps-table"), steps)
    else:
        check(f"{name}: no steps, a note instead of the table",
              by_id("steps-table") is not None and by_id("steps-table").tag == "p")

    # ---- moves ----
    totals = moves["totals"]
    mc = by_id("moves-chart")
    if a.expect_moves:
        check(f"{name}: the trace has moves ({totals['moves']})", totals["moves"] > 0)
    if totals["moves"]:
        lanes = {(int(g.attrs["data-device"]), g.attrs["data-reason"]): int(g.attrs["data-moves"])
                 for g in mc.find_all("g", "lane")} if mc else {}
        want = {}
        for m in moves["moves"]:
            r = m["reason"] if m["reason"] in totals["by_reason"] else "other"
            want[(m["device"], r)] = want.get((m["device"], r), 0) + 1
        check(f"{name}: moves chart: one lane per device and reason, with moves --json's counts",
              lanes == want, f"{lanes} vs {want}")
        check(f"{name}: moves chart: the lanes' counts are moves --json's totals by device",
              {str(d): sum(c for (dd, _), c in lanes.items() if dd == d)
               for d in {d for d, _ in lanes}} == totals["by_device"])
        rects = [r for r in mc.find_all("rect") if "data-count" in r.attrs]
        drawn = by_id("moves-drawn")
        check(f"{name}: moves chart: {len(rects)} bars hold all {totals['moves']} moves",
              0 < len(rects) <= totals["moves"] and
              sum(int(r.attrs["data-count"]) for r in rects) == totals["moves"] and
              drawn is not None and int(drawn.attrs["data-rects"]) == len(rects))
        same_rows(f"{name}: moves by reason", by_id("moves-by-reason"),
                  [{"reason": r, "moves": c} for r, c in totals["by_reason"].items()])
        same_rows(f"{name}: moves by outcome", by_id("moves-by-outcome"),
                  [{"outcome": o, "moves": c} for o, c in totals["by_outcome"].items()])
        # the most moved allocations, named as moves --json names them
        per = {}
        for mv in moves.get("moves", []):
            if mv.get("name") is None:
                continue
            r = per.setdefault(mv["unit_id"], {"alloc_id": mv["unit_id"], "moves": 0,
                                                "bytes_to_host": 0, "bytes_to_device": 0,
                                                "name": mv["name"]})
            r["moves"] += 1
            r["bytes_to_" + ("host" if mv["event"] == "evict" else "device")] += mv["bytes"]
        want = sorted(per.values(), key=lambda r: (-(r["bytes_to_host"] + r["bytes_to_device"]),
                                                    r["alloc_id"]))[:data["top"]]
        if want:
            same_rows(f"{name}: most moved allocations, by name", by_id("moves-by-allocation"), want)
    else:
        check(f"{name}: no moves, no moves chart", mc is None)

    # ---- the plan ----
    plans, psteps = summary["plans"], summary["plan_steps"]
    pc = by_id("plan-chart")
    if a.expect_plan:
        check(f"{name}: the trace has a plan and steps under it ({len(plans)}, {len(psteps)})",
              plans and psteps)
    if psteps:
        pairs = list(pc.find_all("g", "pair")) if pc else []
        check(f"{name}: plan chart: predicted and achieved per step, time and bytes "
              f"({len(pairs)} pairs)",
              len(pairs) == 2 * min(len(psteps), 240) and
              all(len(list(p.find_all("rect"))) == 2 for p in pairs))
        same_rows(f"{name}: steps under a plan", by_id("plan-steps-table"), psteps)
    else:
        check(f"{name}: no plan steps, no plan chart", pc is None)
    if plans:
        same_rows(f"{name}: plans", by_id("plans-table"), plans)

    # ---- devices (trace format 1.6): a table only with allocations on several ----
    devices = summary.get("devices", [])
    if len(devices) > 1:
        same_rows(f"{name}: devices", by_id("devices-table"), devices)
        note = by_id("devices-note")
        check(f"{name}: the devices note names the primary device",
              note is not None and f"device {summary['primary_device']}'s" in note.text())
    else:
        check(f"{name}: one device, no devices table", by_id("devices-table") is None)

    # ---- top allocations and kernels ----
    top = data["top"]
    if summary["top_allocations"]:
        same_rows(f"{name}: top allocations", by_id("allocations-table"),
                  summary["top_allocations"])
    if summary["kernels"]:
        same_rows(f"{name}: top kernels", by_id("kernels-table"), summary["kernels"][:top])

    # ---- configuration ----
    if a.config:
        with open(a.config, encoding="utf-8") as f:
            want = f.read()
        cfg = by_id("config-text")
        check(f"{name}: the configuration shown is the one the trace recorded",
              cfg is not None and cfg.text() == want)


# The grouped charts of the ranks' page: chart id, and the value of a step in summary --json's
# steps list (None: no bar).
RANK_CHARTS = {
    "ranks-wall-chart": lambda st: st["wall_us"],
    "ranks-peak-chart": lambda st: st["peak_device_bytes"],
    "ranks-moved-chart": lambda st: st["bytes_to_host"] + st["bytes_to_device"],
    "ranks-stall-chart": lambda st: st["stall_us"],
}


def text_row(path, row):
    """The cells of a row of `summary TRACE...`'s totals table, as JSON literals (null for -)."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            parts = line.split()
            if parts and parts[0] == row:
                return [None if c == "-" else json.loads(c) for c in parts[1:]]
    return None


def check_ranks(a, dom, ranks_sum, rank_moves):
    """The page of several traces against summary --json TRACE... (and its text, for the median
    step), and each rank's part against that rank's own summary and moves --json."""
    name = a.name
    check_script(name, dom)
    data = data_block(name, dom)
    if data is None:
        return
    traces = ranks_sum["traces"]
    check(f"{name}: the data block's summary is summary --json TRACE...'s",
          data["summary"] == ranks_sum)
    check(f"{name}: ranks in the data block in rank order ({ranks_sum['ranks']})",
          [r["rank"] for r in data["ranks"]] == ranks_sum["ranks"] and
          [r["pid"] for r in data["ranks"]] == [t["pid"] for t in traces])

    # ---- the overview: one row per rank, summary TRACE...'s figures ----
    medians = text_row(a.ranks_text, "median_step_ms")
    check(f"{name}: the data block's median step per rank is summary TRACE...'s ({medians})",
          medians is not None and [r["median_step_ms"] for r in data["ranks"]] == medians)
    keys = ("rank", "pid", "iterations", "peak_device_bytes", "evictions", "cancelled_evictions",
            "restores", "bytes_to_host", "bytes_to_device", "stalls", "stall_us", "trace")
    want = [dict({k: t[k] for k in keys}, median_step_ms=m)
            for t, m in zip(traces, medians or [None] * len(traces))]
    same_rows(f"{name}: ranks table", dom.by_id("ranks-table"), want)

    # ---- the grouped bars: per step number, one bar per rank that has the step ----
    moved = any(t["evictions"] + t["cancelled_evictions"] + t["restores"] + t["stalls"]
                for t in traces)
    numbers = sorted({st["step"] for t in traces for st in t["steps"]})
    for chart, value in RANK_CHARTS.items():
        fig = dom.by_id(chart)
        drawn = chart in ("ranks-wall-chart", "ranks-peak-chart") or moved
        if not numbers or not drawn:
            check(f"{name}: {chart}: not drawn", fig is None)
            continue
        got = {}
        for g in (fig.find_all("g", "group") if fig else []):
            got[int(g.attrs.get("data-step", -1))] = {
                int(r.attrs["data-rank"]): json.loads(r.attrs["data-value"])
                for r in g.find_all("rect")}
        exp = {n: {r: value(st) for r, t in zip(ranks_sum["ranks"], traces)
                   for st in t["steps"] if st["step"] == n and value(st) is not None}
               for n in numbers}
        check(f"{name}: {chart}: {len(numbers)} steps, each rank's bar is summary --json's",
              got == exp, f"page {list(got.items())[:2]} json {list(exp.items())[:2]}")

    # ---- the selector: rank 0's part shown, the others hidden ----
    parts = list(dom.find_all("section", "rank"))
    nav = dom.by_id("rank-select")
    check(f"{name}: one part per rank, a button for each and one for all ({len(parts)})",
          len(parts) == len(traces) and nav is not None and
          len(list(nav.find_all("button"))) == len(traces) + 1)
    check(f"{name}: the selector shows rank index 0 alone",
          [("hidden" in p.attrs) for p in parts] == [False] + [True] * (len(parts) - 1))

    # ---- each rank's part: as the page of its trace alone ----
    for k, (part, t) in enumerate(zip(data["ranks"], traces)):
        label = f"{name} {part['label']}"
        section = dom.by_id(part["id_prefix"] + "section")
        if section is None or k >= len(rank_moves):
            check(f"{label}: its part and its moves --json", False)
            continue
        with open(rank_moves[k]) as f:
            moves = json.load(f)
        check(f"{label}: the data block's moves totals are moves --json's",
              part["moves_totals"] == moves["totals"])
        check_trace(label, section, part["id_prefix"],
                    {"memory": part["memory"], "device_memory": part["device_memory"],
                     "top": data["top"]}, t, moves, a)


def check_selftest(a, dom):
    body = dom.find("body")
    html = dom.find("html")
    st = body.attrs.get("data-selftest") if body is not None else None
    check(f"{a.name}#selftest: every header sorts both ways, every rank can be shown, the memory readouts show "
          f"({body.attrs.get('data-selftest-checks') if body is not None else '-'} checks)",
          st == "ok", str(st))
    check(f"{a.name}#selftest: no script error",
          html is not None and "data-errors" not in html.attrs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--name", required=True)
    ap.add_argument("--dom", required=True)
    ap.add_argument("--summary")
    ap.add_argument("--moves")
    ap.add_argument("--ranks-summary", help="summary --json TRACE...: the page is of several")
    ap.add_argument("--ranks-text", help="summary TRACE... (its median_step_ms row)")
    ap.add_argument("--rank-moves", nargs="*", default=[],
                    help="moves --json of each trace, in rank order")
    ap.add_argument("--selftest")
    ap.add_argument("--config")
    ap.add_argument("--expect-moves", action="store_true")
    ap.add_argument("--expect-plan", action="store_true")
    a = ap.parse_args()
    try:
        if a.ranks_summary:
            with open(a.ranks_summary) as f:
                check_ranks(a, parse(a.dom), json.load(f), a.rank_moves)
        else:
            with open(a.summary) as f:
                summary = json.load(f)
            with open(a.moves) as f:
                moves = json.load(f)
            check_page(a, parse(a.dom), summary, moves)
    except Exception as e:  # noqa: BLE001 - a page the checks cannot walk fails them
        check(f"{a.name}: the page has the structure the checks read", False, repr(e))
    if a.selftest:
        check_selftest(a, parse(a.selftest))
    sys.exit(1 if check.failures else 0)


if __name__ == "__main__":
    main()
