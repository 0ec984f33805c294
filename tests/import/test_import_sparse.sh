#!/usr/bin/env bash
# tests/import/test_import_sparse.sh — embedding lookups read rows, not tables (issue 24): on a
# hand-made ET + Kineto trace (tests/import/sparse_trace.py) an FBGEMM TBE lookup and an
# aten::embedding_bag touch their tables with OP@BYTES, BYTES = indices x row width x itemsize
# reckoned here by hand; the fused backward (CppNode<...>) touches the tables and their
# optimizer state from its own kernels, not from the fill_ kernel of an operator under it; an
# upper-bound row width is noted; without an ET nothing changes; on dlrm-rank0 the dense TBE's
# backward no longer touches the 2.56 GB tables.
set -u
source "$(dirname "$0")/import_env.sh"
plan $((9 + $([ -d "$traces" ] && echo 3 || echo 1)))

tables() { grep "^alloc $1 " "$2" | cut -d' ' -f5- | sort | uniq -c | sed 's/^ *//'; }

python3 "$here/sparse_trace.py" "$tmp/s.et.json" "$tmp/s.kineto.json" 16
"$shimplan" --import et "$tmp/s.et.json" --kineto "$tmp/s.kineto.json" -o "$tmp/s.model" \
    2>"$tmp/s.err"
# TBE: 300 indices x 8 floats x 4 bytes = 9600 bytes of the weights and of momentum1 (as many
# floats as the weights); ops: 0 to, 1 the lookup, 2 embedding_bag, 3 mm, 4 and 6 the backward's
# own kernels, 5 fill_ under its zeros_like.
check "TBE: weights and momentum1 (4000000 bytes each) read 9600 bytes at the lookup and the backward's own kernels ($(tables 4000000 "$tmp/s.model"))" \
    test "$(tables 4000000 "$tmp/s.model")" = "2 1@9600 4@9600 6@9600"
check "embedding_bag: 50 indices x 10 floats x 4 bytes = 2000 bytes of its [500, 10] table" \
    grep -qx "alloc 20000 -1 -1 2@2000" "$tmp/s.model"
check "the fill_ kernel under the backward (op 5) touches no table, but the buffer it fills" \
    all bash -c "! grep -Eq '^alloc 4000000 .* 5(@[0-9]+)?( |\$)' '$tmp/s.model'" '&&' \
    grep -qx "alloc 256 5 5 5" "$tmp/s.model"
check "a note says 2 lookups, none guessed" \
    grep -q "2 embedding lookups read the rows .*; 0 of them with tables of mixed widths" "$tmp/s.err"
check "a note says the custom backward was linked to its forward" \
    grep -q "1 of 1 custom autograd backward nodes" "$tmp/s.err"

python3 "$here/sparse_trace.py" "$tmp/m.et.json" "$tmp/m.kineto.json" 12
"$shimplan" --import et "$tmp/m.et.json" --kineto "$tmp/m.kineto.json" -o "$tmp/m.model" \
    2>"$tmp/m.err"
check "mixed widths (total_D 12 < 2 x max_D 8): the widest row stands for every row (9600 bytes)" \
    test "$(tables 4000000 "$tmp/m.model")" = "2 1@9600 4@9600 6@9600"
check "mixed widths: the note says the width is guessed" \
    grep -q "1 of them with tables of mixed widths, read at the widest row" "$tmp/m.err"

"$shimplan" --import et "$tmp/s.et.json" -o "$tmp/a.model" 2>"$tmp/a.err"
# Alone, the operations are 0 the lookup, 1 embedding_bag, 2 mm, 3 fill_ (aten::to launches
# nothing; the backward's own kernels are not in an ET: the operator under it stands in).
check "ET alone: the same reads at the lookup and at the operator under the backward" \
    test "$(tables 4000000 "$tmp/a.model")" = "2 0@9600 3@9600"
check "ET alone: embedding_bag reads 2000 bytes" grep -qx "alloc 20000 -1 -1 1@2000" "$tmp/a.model"

dlrm_checks() {
    "$shimplan" --import kineto "$traces/dlrm-rank0.kineto.json.gz" -o "$tmp/k.model" 2>/dev/null
    check "dlrm-rank0, Kineto alone: no touch gives read bytes" \
        all [ -s "$tmp/k.model" ] '&&' bash -c "! grep -q @ '$tmp/k.model'"
    "$shimplan" --import et "$traces/dlrm-rank0.et.json.gz" \
        --kineto "$traces/dlrm-rank0.kineto.json.gz" -o "$tmp/d.model" 2>/dev/null
    # 768 indices x max_D 16 x 4 bytes (total_D 48 = 3 tables x 16: exact).
    check "dlrm-rank0: the two 2,562,598,592-byte tables read 49152 bytes at the lookup (op 22)" \
        test "$(grep -c '^alloc 2562598592 -1 -1 22@49152 ' "$tmp/d.model")" = 2
    check "dlrm-rank0: the dense TBE's backward (ops 131-145) and the fill_ kernels (151, 152, 155, 158, 159) do not touch them" \
        python3 -c '
import sys
bad = {*range(131, 146), 151, 152, 155, 158, 159}
for line in open(sys.argv[1]):
    t = line.split()
    if t[:1] == ["alloc"] and t[1] == "2562598592":
        ops = {int(x.split("@")[0]) for x in t[4:]}
        sys.exit(1 if ops & bad or not {161, 162} <= ops else 0)
sys.exit(1)' "$tmp/d.model"
}
# The recorded traces live in the shared folder beside the checkout; a clone alone skips them.
if [ ! -d "$traces" ]; then
    echo "skip - the recorded traces: $traces is absent (the shared folder beside the checkout)"
else
    dlrm_checks
fi
[ "$fails" -eq 0 ]
