#!/usr/bin/env python3
"""readme_examples.py — the command blocks of a Markdown file, for test_readme_examples.sh.

    readme_examples.py FILE             one line per block: LINE<TAB>run|skip<TAB>REASON-or-TITLE
    readme_examples.py FILE LINE        the block that starts at LINE, verbatim (its commands)

A block is a fenced block (``` ... ```) or an indented one (4 spaces, after a blank line). A
block that needs a GPU, a file a reader brings, or runs long is marked by the comment
<!-- example: skip (REASON) --> on the lines just before it (blank lines between are allowed);
the reason must be given. Every other block is run, in the order of the file.
"""
import re
import sys

MARK = re.compile(r"^<!-- example: skip \((.+)\) -->$")


def blocks(lines):
    """(first line number, the block's lines, the skip reason or None)."""
    out, i, n = [], 0, len(lines)
    while i < n:
        line = lines[i]
        if line.startswith("```"):
            j = i + 1
            while j < n and not lines[j].startswith("```"):
                j += 1
            out.append((i + 2, lines[i + 1:j], reason(lines, i)))
            i = j + 1
        elif line.startswith("    ") and (i == 0 or lines[i - 1].strip() == ""):
            j = i
            while j < n and (lines[j].startswith("    ") or
                             (lines[j].strip() == "" and j + 1 < n and lines[j + 1].startswith("    "))):
                j += 1
            out.append((i + 1, [l[4:] for l in lines[i:j]], reason(lines, i)))
            i = j
        else:
            i += 1
    return out


def reason(lines, i):
    """The skip reason marked above line i, or None."""
    k = i - 1
    while k >= 0 and lines[k].strip() == "":
        k -= 1
    m = MARK.match(lines[k].strip()) if k >= 0 else None
    return m.group(1) if m else None


def main():
    lines = open(sys.argv[1]).read().split("\n")
    found = blocks(lines)
    if len(sys.argv) == 3:
        block = next(b for b in found if b[0] == int(sys.argv[2]))
        print("\n".join(block[1]))
        return 0
    for first, body, why in found:
        title = next((l.strip() for l in body if l.strip()), "")
        print(f"{first}\t{'skip' if why else 'run'}\t{why or title}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
