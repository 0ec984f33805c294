#!/usr/bin/env python3
"""tests/mutate/mutation.py — reads the mutation list (tests/mutate/mutations.txt) for
mutate.sh and test_mutations_list.sh.

  mutation.py count LIST            the number of entries
  mutation.py get LIST N FIELD      entry N's field (1-based; tests: one filter a line)
  mutation.py check LIST N ROOT     entry N applies to ROOT: its file exists and its `from` text
                                    occurs exactly once (else a message, exit 1)
  mutation.py apply LIST N ROOT     rewrites entry N's file under ROOT with the mutation
  mutation.py report LIST ROOT TESTS DIR
                                    for each entry N, DIR/N.file (its file), DIR/N.apply (why it
                                    does not apply; empty when it does) and DIR/N.tests (its
                                    filters that select none of the test paths listed in TESTS;
                                    empty when each selects one); prints the count (one process
                                    for the whole list: test_mutations_list.sh)

An entry is a block of `key: value` lines (blank lines between entries, # comments): file,
from, to, tests (space-separated TEST= filters), why. A value is the text after ": " to the
end of the line; \\n in from/to stands for a line break, \\\\ for a backslash."""
import os
import sys

KEYS = ("file", "from", "to", "tests", "why")


def unescape(s):
    out, i = [], 0
    while i < len(s):
        if s[i] == "\\" and i + 1 < len(s) and s[i + 1] in "n\\":
            out.append("\n" if s[i + 1] == "n" else "\\")
            i += 2
        else:
            out.append(s[i])
            i += 1
    return "".join(out)


def parse(path):
    entries, cur, errors = [], None, []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if line.startswith("#"):
                continue
            if not line.strip():
                cur = None
                continue
            key, sep, value = line.partition(": ")
            if not sep or key not in KEYS:
                errors.append(f"{path}:{lineno}: expected one of {', '.join(KEYS)} then ': '")
                continue
            if cur is None:
                cur = {"line": lineno}
                entries.append(cur)
            if key in cur:
                errors.append(f"{path}:{lineno}: '{key}' twice in one entry")
            cur[key] = unescape(value) if key in ("from", "to") else value
    for e in entries:
        missing = [k for k in KEYS if k not in e]
        if missing:
            errors.append(f"{path}:{e['line']}: entry lacks {', '.join(missing)}")
        elif e["from"] == e["to"]:
            errors.append(f"{path}:{e['line']}: from and to are the same text")
    if errors:
        sys.exit("\n".join(errors))
    return entries


def check(e, root):
    path = os.path.join(root, e["file"])
    if not os.path.isfile(path):
        return f"{e['file']}: no such file"
    with open(path, encoding="utf-8") as f:
        n = f.read().count(e["from"])
    if n != 1:
        return f"{e['file']}: the text {e['from']!r} occurs {n} times, not once"
    return None


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    cmd, entries = argv[1], parse(argv[2])
    if cmd == "count":
        print(len(entries))
        return 0
    if cmd == "report":
        root, tests, out = argv[3], open(argv[4]).read().split(), argv[5]
        for n, e in enumerate(entries, 1):
            lost = [f for f in e["tests"].split() if not any(f in t for t in tests)]
            for ext, text in (("file", e["file"]), ("apply", check(e, root) or ""),
                              ("tests", " ".join(f"TEST={f} selects no test" for f in lost))):
                with open(os.path.join(out, f"{n}.{ext}"), "w", encoding="utf-8") as f:
                    f.write(text + "\n" if text else "")
        print(len(entries))
        return 0
    n = int(argv[3])
    if not 1 <= n <= len(entries):
        sys.exit(f"no entry {n} (the list has {len(entries)})")
    e = entries[n - 1]
    if cmd == "get":
        print("\n".join(e["tests"].split()) if argv[4] == "tests" else e[argv[4]])
        return 0
    problem = check(e, argv[4])
    if problem:
        print(f"entry {n} (line {e['line']}): {problem}")
        return 1
    if cmd == "apply":
        path = os.path.join(argv[4], e["file"])
        with open(path, encoding="utf-8") as f:
            text = f.read()
        with open(path, "w", encoding="utf-8") as f:
            f.write(text.replace(e["from"], e["to"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
