#!/usr/bin/env bash
# One size grammar (conf/conf_bytes.h) wherever a person types a size: libshim's options
# (SHIM_HOST_BUDGET, SHIM_BUDGET, read by `shim-report config` as libshim reads them) and
# shim-plan --budget accept the same sizes with the same byte counts (40G = 40GiB = 40 * 2^30,
# 40GB = 40 * 10^9) and reject the same bad ones, each with the same "invalid size" reason; a
# bare number below 100000 is bytes to libshim's host_budget and questioned as a budget.
# Percentages: a share in (0%, 100%] for both budgets.
set -u
source "$(dirname "$0")/../check.sh" # plan; check is this file's
# 8 sizes x 2 ... as the lists below give them: 45 in all.
plan 45
BUILD=${BUILD:-build}
scratch
failures=0
check() {
    local name=$1
    shift
    if "$@"; then echo "ok - $name"; else echo "not ok - $name"; failures=$((failures + 1)); fi
}
"$BUILD/shim-plan" --generate transformer:layers=2 -o "$tmp/t.model" || exit 1

# conf_bytes VALUE: the bytes libshim's host_budget option takes VALUE for, or "error: REASON".
conf_bytes() {
    local out
    if ! out=$(env -u SHIM_CONFIG SHIM_HOST_BUDGET="$1" "$BUILD/shim-report" config 2>&1); then
        echo "error: $(sed -n 's/^SHIM_HOST_BUDGET: error: //p' <<<"$out")"
        return
    fi
    sed -n 's/^host_budget = "\{0,1\}\([^" ]*\).*/\1/p' <<<"$out" | python3 -c '
import sys
v = sys.stdin.read().strip()
for u, s in (("PiB", 50), ("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10), ("B", 0)):
    if v.endswith(u):
        print(int(v[: -len(u)]) << s)
        break
else:
    print(int(v))'
}
# plan_bytes VALUE: the budget shim-plan takes VALUE for, or "error: REASON".
plan_bytes() {
    local out
    if ! out=$("$BUILD/shim-plan" "$tmp/t.model" --planner none --budget "$1" 2>&1); then
        if grep -q "^shim-plan: bad --budget '$1': a number without a unit is bytes: did you mean" <<<"$out"; then
            echo question
        else
            echo "error: $(sed -n 's/^shim-plan: bad --budget: //p' <<<"$out")"
        fi
        return
    fi
    sed -n 's/^budget_bytes: //p' <<<"$out"
}

G=$((1 << 30))
while IFS='|' read -r text want; do
    c=$(conf_bytes "$text")
    p=$(plan_bytes "$text")
    if [[ $text =~ ^[0-9]+$ ]] && [ "$text" -lt 100000 ]; then
        # Bytes in the grammar, but a budget of so few is never meant: shim-plan asks which
        # unit was (as libshim's budget option does, conf_size_unit_hint).
        check "\"$text\" = $want bytes in libshim's options ($c); as a budget, shim-plan asks which unit was meant ($p)" \
            [ "$c" = "$want" -a "$p" = question ]
    else
        check "\"$text\" = $want bytes in libshim's options ($c) and in shim-plan ($p)" \
            [ "$c" = "$want" -a "$p" = "$want" ]
    fi
done <<EOF
0|0
4096|4096
7B|7
2K|2048
2KiB|2048
2Ki|2048
2KB|2000
40G|$((40 * G))
40g|$((40 * G))
40Gi|$((40 * G))
40GiB|$((40 * G))
40 GiB|$((40 * G))
40gib|$((40 * G))
40GB|40000000000
1.5G|$((3 * G / 2))
1.5GB|1500000000
0.1KiB|102
512MiB|$((512 << 20))
3T|$((3 << 40))
1P|$((1 << 50))
1PB|1000000000000000
EOF

while IFS= read -r text; do
    c=$(conf_bytes "$text")
    p=$(plan_bytes "$text")
    check "\"$text\" is refused by both, with an \"invalid size\" reason (libshim: ${c:0:60}; shim-plan: ${p:0:60})" \
        bash -c '[[ "$1" == "error: invalid size \""* && "$2" == "error: invalid size \""* ]]' _ "$c" "$p"
done <<'EOF'
40X
40XB
40GiBs
-1
+5
1e3
1.5
1.GiB
.5GiB
 1GiB
1GiB 
0x10
1,5G
GiB
16384PiB
18446744073709551616
1.1234567891GiB
EOF
c=$(conf_bytes 40X)
p=$(plan_bytes 40X)
check "the same reason word for word (\"${c#error: }\")" [ "$c" = "$p" ]
check "  ... and it lists the units, saying which are powers of 1024 and which of 1000" \
    bash -c '[[ "$1" == *"G, Gi, GiB"*"powers of 1024"*"GB"*"powers of 1000"* ]]' _ "$c"

# percentages of the budget: (0%, 100%] for libshim's budget and for shim-plan's
native=$("$BUILD/shim-plan" "$tmp/t.model" --planner none --budget 100% | sed -n 's/^held_peak_bytes: //p')
check "shim-plan 75% is 75% of the native peak (as libshim holds it)" \
    [ "$(plan_bytes 75%)" = "$(python3 -c "print($native * 750000 // 1000000)")" ]
for bad in 0% 150% 1.00001% auto; do
    out=$(SHIM_BUDGET=$bad "$BUILD/shim-report" config 2>&1)
    conf_rc=$?
    p=$(plan_bytes "$bad")
    if [ "$bad" = auto ]; then # libshim's budget option also takes auto; a model has no device
        check "auto: libshim's budget takes it, shim-plan refuses it ($p)" \
            [ $conf_rc -eq 0 -a "${p:0:6}" = "error:" ]
    else
        check "$bad: refused as a budget by libshim and by shim-plan ($p)" \
            [ $conf_rc -ne 0 -a "${p:0:6}" = "error:" ]
    fi
done
[ "$failures" -eq 0 ]
