#!/usr/bin/env python3
"""toml_test.py — runs build/toml-decode over the toml-test cases listed for TOML 1.0.0.

Usage: toml_test.py valid|invalid [DECODER]. Prints "ok - CASE" / "not ok - CASE: why" per
case and a closing count line; exits 1 on any miss, or when the suite cannot be found.
Valid cases must decode to JSON equal to the expected file (compared semantically, as the
suite's README says); invalid cases must exit 1 with exactly one "<stdin>:LINE:COL: error:"
line on stderr and no sanitizer report.
"""
import json
import math
import os
import re
import subprocess
import sys

ERROR_LINE = re.compile(r"^<stdin>:\d+:\d+: error: \S.*$")
DATETIME = re.compile(r"^(\d{4}-\d{2}-\d{2})?[Tt ]?(\d{2}:\d{2}:\d{2})?(\.\d+)?"
                      r"([Zz]|[+-]\d{2}:\d{2})?$")


def norm_datetime(s):
    m = DATETIME.match(s)
    if not m:
        return s
    date, time, frac, off = m.groups()
    out = date or ""
    if time:
        out += ("T" if date else "") + time + "." + ((frac or ".")[1:] + "000")[:3]
    if off:
        out += "Z" if off in ("Z", "z", "+00:00", "-00:00") else off
    return out


def same_scalar(typ, want, got):
    if typ == "integer":
        return int(want) == int(got)
    if typ == "float":
        w, g = float(want), float(got)
        return (math.isnan(w) and math.isnan(g)) or w == g
    if typ.startswith("datetime") or typ.endswith("-local"):
        return norm_datetime(want) == norm_datetime(got)
    return want == got


def is_tagged(v):
    return (isinstance(v, dict) and set(v) == {"type", "value"}
            and isinstance(v["type"], str) and isinstance(v["value"], str))


def same(want, got, path="$"):
    """Returns None when equal, else a description of the first difference."""
    if is_tagged(want):
        if not is_tagged(got) or got["type"] != want["type"]:
            return f"{path}: expected {want}, got {got}"
        ok = same_scalar(want["type"], want["value"], got["value"])
        return None if ok else f"{path}: expected {want['value']!r}, got {got['value']!r}"
    if isinstance(want, dict):
        if not isinstance(got, dict) or set(want) != set(got):
            keys = sorted(got) if isinstance(got, dict) else got
            return f"{path}: expected keys {sorted(want)}, got {keys}"
        for k in want:
            d = same(want[k], got[k], f"{path}.{k}")
            if d:
                return d
        return None
    if isinstance(want, list):
        if not isinstance(got, list) or len(want) != len(got):
            return f"{path}: expected an array of {len(want)}, got {got}"
        for i, (w, g) in enumerate(zip(want, got)):
            d = same(w, g, f"{path}[{i}]")
            if d:
                return d
        return None
    return None if want == got else f"{path}: expected {want!r}, got {got!r}"


def decode(decoder, path):
    with open(path, "rb") as f:
        return subprocess.run([decoder], stdin=f, capture_output=True, timeout=60)


def check_valid(decoder, root, case):
    r = decode(decoder, os.path.join(root, case))
    if r.returncode != 0:
        return f"rejected (exit {r.returncode}): {r.stderr.decode(errors='replace').strip()}"
    with open(os.path.join(root, case[:-5] + ".json"), encoding="utf-8") as f:
        want = json.load(f)
    try:
        got = json.loads(r.stdout.decode("utf-8"))
    except ValueError as e:
        return f"output is not JSON: {e}"
    return same(want, got)


def check_invalid(decoder, root, case):
    r = decode(decoder, os.path.join(root, case))
    err = r.stderr.decode(errors="replace")
    lines = err.splitlines()
    if r.returncode != 1:
        return f"exit {r.returncode} (expected 1): {err.strip()[:300]}"
    if len(lines) != 1 or not ERROR_LINE.match(lines[0]):
        return f"expected one '<stdin>:LINE:COL: error:' line, got: {err.strip()[:300]}"
    return None


def main():
    kind = sys.argv[1] if len(sys.argv) > 1 else ""
    if kind not in ("valid", "invalid"):
        print("usage: toml_test.py valid|invalid [DECODER]", file=sys.stderr)
        return 2
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.dirname(os.path.dirname(here))
    build = os.environ.get("BUILD", "build")
    decoder = sys.argv[2] if len(sys.argv) > 2 else os.path.join(repo, build, "toml-decode")
    shared = os.environ.get("SHARED", os.path.join(repo, "..", "shared"))
    root = os.path.join(shared, "toml-test")
    listing = os.path.join(root, "files-toml-1.0.0")
    if not os.path.isdir(root):
        # The conformance data lives in the shared folder beside the checkout (CI has it).
        print(f"1..1\nskip - toml-test {kind}: {root} is absent (the shared folder beside the checkout)")
        return 77
    if not os.path.isfile(listing) or not os.access(decoder, os.X_OK):
        print(f"1..1\nnot ok - toml-test {kind}: missing {listing} or {decoder}")
        return 1
    with open(listing, encoding="utf-8") as f:
        names = [line.strip() for line in f]
    cases = [c for c in names if c.startswith(kind + "/") and c.endswith(".toml")]
    check = check_valid if kind == "valid" else check_invalid
    print(f"1..{len(cases)}")  # the plan: one line per listed case (tests/run_tests.sh)
    failed = 0
    for case in cases:
        why = check(decoder, root, case)
        if why:
            failed += 1
            print(f"not ok - {case}: {why}")
        else:
            print(f"ok - {case}")
    print(f"toml-test {kind}: {len(cases) - failed} passed, {failed} failed, of {len(cases)} "
          f"{kind} cases listed in files-toml-1.0.0")
    return 1 if failed or not cases else 0


if __name__ == "__main__":
    sys.exit(main())
