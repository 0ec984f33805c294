#!/usr/bin/env python3
"""check_calls.py — finds check calls whose condition falls partly outside the call.

Usage: check_calls.py SCRIPT...  Prints "FILE:LINE: why" for each check (or checker) call
that is followed on the same logical line by an unquoted &&, ||, | or ; (the shell ends the
call there: what follows is not checked), or that runs only when a condition before it holds
(COND && check ...: the plan no longer counts it). Logical lines join backslash
continuations and quoted strings that span lines; here-document bodies and comments are
skipped. Exit 0 when none is found, 1 otherwise, 2 on a usage error.
"""
import re
import sys

CHECKS = {"check", "checker"}
# Words that may come before a command without being its name.
PREFIX = {"then", "do", "else", "elif", "if", "while", "until", "!", "{", "(", "time"}
# Words after "check ...;" that end a block, so the ";" does not start another command.
CLOSERS = {"fi", "done", "esac", "}", ")", "else", "elif", "then", "do", ""}
OPS = ["&&", "||", ";;", "|&", ";", "|", "&"]


def commands(text):
    """Yields (line, words, op_before, op_after) for each simple command of the script."""
    i, n, line = 0, len(text), 1
    words, word, start, before = [], None, None, "\n"
    heredocs = []
    out = []

    def end_word():
        nonlocal word
        if word is not None:
            words.append(word)
            word = None

    def end_cmd(op):
        nonlocal words, start, before
        end_word()
        out.append([start or line, words, before, op])
        words, start, before = [], None, op

    def skip_quoted(j, close, escapes=False):
        """Index after the closing quote of a string that starts before j ($'...': escapes)."""
        nonlocal line
        while j < n and text[j] != close:
            if (close == '"' or escapes) and text[j] == "\\":
                j += 1
            elif close == '"' and text.startswith("$(", j):
                j = skip_subst(j + 2)
                continue
            if j < n and text[j] == "\n":
                line += 1
            j += 1
        return j + 1

    def skip_subst(j):
        """Index after the ) that closes a $( opened before j."""
        nonlocal line
        depth = 1
        while j < n and depth:
            c = text[j]
            if c in "'\"":
                j = skip_quoted(j + 1, c)
                continue
            if c == "\\":
                j += 2
                continue
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
            elif c == "\n":
                line += 1
            j += 1
        return j

    while i < n:
        c = text[i]
        if c == "\\" and i + 1 < n and text[i + 1] == "\n":
            i += 2
            line += 1
            continue
        if c == "\n":
            end_cmd("\n")
            line += 1
            i += 1
            for tag in heredocs:  # skip each here-document body
                while i < n:
                    eol = text.find("\n", i)
                    eol = n if eol < 0 else eol
                    body = text[i:eol]
                    i = eol + 1
                    line += 1
                    if body.strip() == tag:
                        break
            heredocs = []
            continue
        if c in " \t":
            end_word()
            i += 1
            continue
        if c == "#" and word is None:
            while i < n and text[i] != "\n":
                i += 1
            continue
        op = next((o for o in OPS if text.startswith(o, i)), None)
        if op:
            end_cmd(op)
            i += len(op)
            continue
        if start is None:
            start = line
        if word is None:
            word = ""
        if text.startswith("<<", i) and not text.startswith("<<<", i):
            m = re.match(r"<<-?\s*(['\"]?)([A-Za-z_][A-Za-z_0-9]*)\1", text[i:])
            if m:
                heredocs.append(m.group(2))
                word += m.group(0)
                i += len(m.group(0))
                continue
        if c in "'\"":
            j = skip_quoted(i + 1, c)
            word += text[i:j]
            i = j
        elif text.startswith("$'", i):
            j = skip_quoted(i + 2, "'", escapes=True)
            word += text[i:j]
            i = j
        elif text.startswith("$(", i):
            j = skip_subst(i + 2)
            word += text[i:j]
            i = j
        elif c == "\\":
            word += text[i : i + 2]
            i += 2
        else:
            word += c
            i += 1
    end_cmd("\n")
    return out


def name_of(words):
    k = words.index("in") + 1 if words[:1] == ["case"] and "in" in words else 0
    while k < len(words) and (
        words[k] in PREFIX
        or re.match(r"^[A-Za-z_][A-Za-z_0-9]*=", words[k])  # an assignment
        or re.match(r"^\(?[^()]*\)$", words[k])  # a case pattern
    ):
        k += 1
    return words[k].lstrip("(") if k < len(words) else ""


def scan(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    cmds = commands(text)
    # A function that hands its arguments on to check (exact() { ... check "$@" ... }) is a
    # check too.
    wrappers = set(re.findall(r"^\s*(\w+)\s*\(\)\s*\{[^}]*?\bcheck \"\$@\"", text, re.M))
    found = []
    for k, (line, words, before, after) in enumerate(cmds):
        if name_of(words) not in CHECKS | wrappers:
            continue
        nxt = name_of(cmds[k + 1][1]) if k + 1 < len(cmds) else ""
        if after in ("&&", "||", "|", "|&", "&") or (after == ";" and nxt not in CLOSERS):
            found.append(f"{path}:{line}: the condition goes on past '{after}': only what comes before it is checked")
        if before in ("&&", "||"):
            found.append(f"{path}:{line}: the check runs only when the condition before '{before}' holds")
    return found


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    found = [f for p in argv[1:] for f in scan(p)]
    for f in found:
        print(f)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
