#!/usr/bin/env bash
# The "old driver" build of the simulator (module.mk: SIMGPU_OLD_HIDDEN) lacks its hidden entry
# points through every door: dlsym finds none of them, and cuGetProcAddress answers not found
# for a base name all of whose variants are hidden, while the full build answers every one.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
B="$root/${BUILD:-build}"
if [ -n "${SAN:-}" ]; then # python cannot load a sanitizer-built library without its runtime
    echo "1..1"
    echo "skip - the old driver's exports are checked in the plain build only"
    exit 0
fi
python3 - "$B/simgpu/libcuda.so.1" "$B/simgpu/old/libcuda.so.1" "$B/simgpu/old/simgpu.map" \
    "$root/tests/simgpu/simgpu_entries.h" <<'PY'
import ctypes, re, sys
full_path, old_path, map_path, entries_path = sys.argv[1:]
hidden = re.search(r"local:(.*?)\*;", open(map_path).read(), re.S).group(1).replace(";", " ").split()
entries = re.findall(r"X\((\w+), (\w+), \d+, \w\)", open(entries_path).read())
base_of = dict(entries)
# The plan: the map's check, one per hidden entry point, one per base name all of whose variants
# are hidden, and the old driver's own exports.
lone = [s for s in hidden if s in base_of and
        not any(b == base_of[s] and e not in hidden for e, b in entries)]
print(f"1..{1 + len(hidden) + len(lone) + 1}")
failures = 0
def check(name, ok):
    global failures
    print(("ok - " if ok else "not ok - ") + name)
    failures += not ok
check(f"the old driver's map hides {len(hidden)} entry points ({' '.join(hidden)})", len(hidden) >= 5)
full, old = ctypes.CDLL(full_path), ctypes.CDLL(old_path)
NOT_FOUND, SUCCESS = 500, 0
def proc(lib, base):
    fn = ctypes.c_void_p()
    status = ctypes.c_int(-1)
    rc = lib.cuGetProcAddress_v2(base.encode(), ctypes.byref(fn), 13000, ctypes.c_uint64(0),
                                 ctypes.byref(status))
    return rc, fn.value
for sym in hidden:
    check(f"{sym}: dlsym finds it in the full build, not in the old one",
          hasattr(full, sym) and not hasattr(old, sym))
    base = base_of.get(sym)
    if base is None or any(b == base and s not in hidden for s, b in entries):
        continue  # another variant of the base name is still there
    rc_full, fn_full = proc(full, base)
    rc_old, fn_old = proc(old, base)
    check(f"cuGetProcAddress({base}): the full build answers it ({rc_full}), the old one "
          f"CUDA_ERROR_NOT_FOUND ({rc_old}) with a NULL pointer",
          rc_full == SUCCESS and fn_full and rc_old == NOT_FOUND and not fn_old)
rc, fn = proc(old, "cuMemAlloc")
check(f"the old driver still answers what it exports (cuMemAlloc: {rc})", rc == SUCCESS and fn)
sys.exit(1 if failures else 0)
PY
