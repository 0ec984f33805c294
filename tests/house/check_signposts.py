#!/usr/bin/env python3
"""check_signposts.py — the comments that tell a reader where things are must be true.

    check_signposts.py ROOT [FILE...]

Reads the C sources and headers, shell scripts, make fragments and Python files of the checkout
at ROOT (the files git tracks, or the FILEs given, paths relative to ROOT) and reports:

  heading:  a comment in a header that heads a group of declarations with a source file's name
            ("/* shim_resid_chunks.c */", "/* shim_resid_chunks.c — pools */") over a prototype
            of a function that file does not define: a heading may stand only over what the
            file under it defines;
  file:     a comment that cites a file the repository lacks: a path with a folder
            ("tests/bench/RESULTS-gpu.md") must exist from ROOT, from the citing file's folder
            or from a folder above it; a bare name ("shim_resid_slab.c") must be some file's name.
            Another project's file, cited with its owner ("NCCL's src/include/alloc.h",
            "PyTorch's c10/cuda/CUDACachingAllocator.cpp"), is not ours to find;
  name:     a comment that cites one of our functions, types or macros the repository lacks: a
            name with one of the project's prefixes and at least two parts (shim_plan_recording,
            resid_take_device, PLAN_RULES_GRANULE) must be a name some code (outside comments
            and strings) uses.

Prints one line per finding, "FILE:LINE: KIND: what", then a count; exits 1 on any finding, 2 on
a usage error. Standard library only.
"""
import os
import re
import subprocess
import sys

PREFIXES = ("shim", "resid", "plan", "conf", "report", "simgpu", "util", "import", "base",
            "SHIM", "RESID", "PLAN", "CONF", "REPORT", "SIMGPU", "UTIL", "IMPORT", "BASE")
CODE_EXT = (".c", ".h", ".cu")
SCRIPT_EXT = (".sh", ".mk", ".py")
CITABLE_EXT = ("c", "h", "cu", "md", "sh", "mk", "py", "toml", "css", "js", "map", "json")
FILE_RE = re.compile(r"(?<![\w./-])((?:[\w.-]+/)*[\w-]+(?:\.[\w-]+)*\.(?:%s))(?![\w/])" %
                     "|".join(CITABLE_EXT))
NAME_RE = re.compile(r"\b((?:%s)_[A-Za-z0-9]+_[A-Za-z0-9_]*[A-Za-z0-9])\b" % "|".join(PREFIXES))
OWNER_RE = re.compile(r"[\w-]+'s\s+$")
# A cited path that stands for many (test_NAME.sh, ROOM/NAME.c), or a file a run writes
# (work/job.toml, out/NAME.json) is no citation of a file in the repository.
PLACEHOLDER_RE = re.compile(r"(^|[^A-Za-z])(NAME|ROOM|FILE|DIR|MODEL|PID|RANK|KIND|X)($|[^A-Za-z])")
RUNTIME_DIRS = ("work", "out", "tmp", "traces", "build", "$work", "$out")
HEADING_RE = re.compile(r"^/\*\s*(?:-+\s*)?([\w-]+\.c)\b(?:\s*(?:\*/|[—:-].*))?$")
PROTO_RE = re.compile(r"^[A-Za-z_][\w \t\*]*?\b([a-z_][a-z0-9_]*)\s*\(")


def tracked(root):
    out = subprocess.run(["git", "-C", root, "ls-files"], capture_output=True, text=True)
    if out.returncode != 0:
        return None
    return [f for f in out.stdout.split("\n") if f]


def split_c(text, keep_strings=False):
    """(comments, code) of C text: the comments as (line, text), the code as one text, its
    strings blanked unless keep_strings."""
    comments, code = [], []
    i, n, line = 0, len(text), 1
    buf, buf_line = [], 1
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            comments.append((line, text[i:j]))
            line += text.count("\n", i, j)
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            comments.append((line, text[i:j]))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                if text[j] == "\\":
                    j += 1
                if j < n and text[j] == "\n":
                    line += 1
                j += 1
            code.append((line, text[i:j + 1] if keep_strings else " "))
            i = j + 1
        else:
            if c == "\n":
                line += 1
            code.append((line, c))
            i += 1
    return comments, "".join(t for _, t in code)


def split_script(text):
    """Comment lines (#...) of a shell, make or Python file, and the rest as code."""
    comments, code = [], []
    for k, raw in enumerate(text.split("\n"), 1):
        m = re.search(r"(^|\s)#(?!!)", raw)
        if m and not raw.lstrip().startswith("#include"):
            comments.append((k, raw[m.end():]))
            code.append(raw[:m.start()])
        else:
            code.append(raw)
    return comments, "\n".join(code)


def definitions(text):
    """Names of the functions a C file defines (not static ones excluded: every definition)."""
    _, code = split_c(text)
    names = set()
    for m in re.finditer(r"\b([a-z_][a-z0-9_]*)\s*\(([^;{}()]|\([^;{}()]*\))*\)\s*\{", code):
        names.add(m.group(1))
    return names


def main():
    if len(sys.argv) < 2 or not os.path.isdir(sys.argv[1]):
        print("usage: check_signposts.py ROOT [FILE...]", file=sys.stderr)
        return 2
    root = os.path.abspath(sys.argv[1])
    every = tracked(root)
    if every is None:
        every = [os.path.relpath(os.path.join(d, f), root)
                 for d, _, fs in os.walk(root) if "/build" not in d and "/.git" not in d
                 for f in fs]
    every = [f for f in every if os.path.isfile(os.path.join(root, f))]
    files = sys.argv[2:] or [f for f in every if f.endswith(CODE_EXT + SCRIPT_EXT)]
    basenames = {}
    for f in every:
        basenames.setdefault(os.path.basename(f), []).append(f)
    texts, parts = {}, {}
    used = set()
    for f in every:
        if not f.endswith(CODE_EXT + SCRIPT_EXT):
            continue
        try:
            t = open(os.path.join(root, f), encoding="utf-8", errors="replace").read()
        except OSError:
            continue
        texts[f] = t
        parts[f] = split_c(t) if f.endswith(CODE_EXT) else split_script(t)
        code = split_c(t, True)[1] if f.endswith(CODE_EXT) else parts[f][1]
        used.update(re.findall(r"\b[A-Za-z_]\w*\b", code))
    external = set()
    for f, t in texts.items():
        external.update(os.path.basename(h) for h in re.findall(r"#\s*include\s*<([^>]+)>", t))
    cuda_inc = os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "include")
    if os.path.isdir(cuda_inc):
        external.update(os.listdir(cuda_inc))
    made = set()  # files the build makes (named in a make fragment) or a test writes
    for f in every:
        if f.endswith((".mk", "Makefile")):
            code = split_script(open(os.path.join(root, f), errors="replace").read())[1]
            made.update(re.findall(r"[\w-]+\.(?:%s)\b" % "|".join(CITABLE_EXT), code))
    stems = {os.path.splitext(b)[0] for b in basenames}
    defs_cache = {}
    findings = []

    def defined_in(name_c):
        out = set()
        for f in basenames.get(name_c, []):
            if f not in defs_cache:
                defs_cache[f] = definitions(texts.get(f, ""))
            out |= defs_cache[f]
        return out

    for f in files:
        if f not in parts:
            continue
        comments, _ = parts[f]
        here = os.path.dirname(f)
        for line, text in comments:
            for m in FILE_RE.finditer(text):
                path = m.group(1).rstrip(".")
                before = text[:m.start()]
                if (OWNER_RE.search(before) or path.startswith(("http", "www.")) or
                        PLACEHOLDER_RE.search(path) or path.split("/")[0] in RUNTIME_DIRS or
                        os.path.basename(path) in external or os.path.basename(path) in made):
                    continue
                if "/" in path:
                    ups = [here]
                    d = here
                    while d:
                        d = os.path.dirname(d)
                        ups.append(d)
                    if not any(os.path.exists(os.path.join(root, u, path)) for u in ups):
                        findings.append("%s:%d: file: cites %s, which the repository lacks" %
                                        (f, line + text.count("\n", 0, m.start()), path))
                elif path not in basenames:
                    findings.append("%s:%d: file: cites %s, which the repository lacks" %
                                    (f, line + text.count("\n", 0, m.start()), path))
            for m in NAME_RE.finditer(text):
                name = m.group(1)
                if text[m.end():m.end() + 1] == "." and name in stems:
                    continue  # a file's name: the file check's
                if name not in used and not PLACEHOLDER_RE.search(name):
                    findings.append("%s:%d: name: cites %s, which no code uses" %
                                    (f, line + text.count("\n", 0, m.start()), name))
        if not f.endswith(".h"):
            continue
        heading = None
        for k, raw in enumerate(texts[f].split("\n"), 1):
            s = raw.strip()
            h = HEADING_RE.match(s)
            if h and not raw.startswith(" "):
                heading = (h.group(1), k)
                continue
            if s.startswith("/*") and k == 1:
                continue
            if raw.startswith("#endif") or raw.startswith("#ifndef"):
                continue
            p = PROTO_RE.match(raw)
            if (heading and p and not raw.startswith((" ", "\t", "#", "static", "typedef",
                                                       "struct", "enum", "union", "extern"))
                    and raw.rstrip().endswith((",", ";", "("))):
                name = p.group(1)
                if name not in defined_in(heading[0]):
                    findings.append("%s:%d: heading: %s (line %d) heads %s, which %s does not "
                                    "define" % (f, k, heading[0], heading[1], name, heading[0]))
    for line in findings:
        print(line)
    print("check_signposts: %d files read, %d findings" % (len(files), len(findings)))
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
