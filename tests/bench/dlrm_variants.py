#!/usr/bin/env python3
"""tests/bench/dlrm_variants.py MODEL OUTDIR — ranks of a DLRM job that ../shared/traces does not
hold, derived from one it does: MODEL is a rank's model (shim-plan --import et ET --kineto
KINETO), and each variant changes only what a rank of the same job may have otherwise, writing
OUTDIR/NAME-VARIANT.model (NAME: MODEL's name without .model):

  rows0.5, rows1.5   the embedding shard holds half, or one and a half times, the rows: the
                     table and its optimizer state (per-element Adagrad: one element per weight,
                     the same bytes) scaled alike, in whole rows; each lookup reads what it read
                     (the same indices);
  rowwise            the same table with row-wise Adagrad: one state element (4 bytes) a row,
                     read one element per looked-up row (tools/import/IMPORT.md, "Sparse reads");
  reads4             four times the indices a step: each lookup and each of its backward's reads
                     four times the bytes (up to the table's), as a rank whose shard the batch
                     hits harder; kernel times as measured (the lookups' own time is not scaled:
                     that is why the variant is named for the reads alone);
  apart              not another rank but the control: the optimizer state one row short, so that
                     libshim's host_resident, which keeps every allocation of a listed size on
                     the host, keeps the table alone, as the plan does (run on a model and on its
                     reads4 variant, it measures what keeping both costs).

The table is the model's largest allocation; its optimizer state, the allocation of the same size
and the same touches. The row width is the largest read of one touch over the lookups' indices:
64 bytes (16 floats) in the DLRM traces here, checked against the table's bytes (a whole number
of rows). Prints one line per variant written; exits 1 when MODEL has no such pair."""
import os
import re
import sys

src, outdir = sys.argv[1], sys.argv[2]
lines = open(src).read().splitlines()
allocs = [(i, l.split()) for i, l in enumerate(lines) if l.startswith("alloc ")]
big = max(int(f[1]) for _, f in allocs)
pair = [(i, f) for i, f in allocs if int(f[1]) == big]
if len(pair) != 2 or pair[0][1][2:] != pair[1][1][2:]:
    sys.exit("%s: no table and optimizer state of one size with the same touches" % src)
ROW = 64  # bytes of one row: 16 floats (the DLRM traces' embedding dimension)
if big % ROW:
    sys.exit("%s: the table's %d bytes are not whole %d-byte rows" % (src, big, ROW))
rows = big // ROW
name = os.path.basename(src).removesuffix(".model")


def touches(fields, scale_read, cap):
    """The touch fields with each OP@BYTES read scaled (capped at cap), whole touches kept."""
    out = []
    for t in fields:
        m = re.fullmatch(r"(\d+)@(\d+)", t)
        out.append(t if not m else "%s@%d" % (m.group(1), min(cap, scale_read(int(m.group(2))))))
    return out


def write(variant, table, state):
    """table, state: (bytes, read scale) of the two allocations."""
    new = list(lines)
    for (i, f), (size, scale) in zip(pair, (table, state)):
        new[i] = " ".join(["alloc", str(size)] + f[2:4] + touches(f[4:], scale, size))
    path = os.path.join(outdir, "%s-%s.model" % (name, variant))
    with open(path, "w") as out:
        out.write("# %s of %s (tests/bench/dlrm_variants.py)\n" % (variant, os.path.basename(src)))
        out.write("\n".join(new) + "\n")
    print(path)


same = lambda b: b
for s in (0.5, 1.5):
    size = int(rows * s) * ROW
    write("rows%g" % s, (size, same), (size, same))
write("rowwise", (big, same), (rows * 4, lambda b: max(1, b // ROW * 4)))
write("reads4", (big, lambda b: 4 * b), (big, lambda b: 4 * b))
write("apart", (big, same), (big - ROW, same))
