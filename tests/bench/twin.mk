# tests/bench/twin — the back-test: the code the H100 ran (libshim at dbfd80c) on the simulated
# device's twins of the H100's two PyTorch jobs, against RESULTS-gpu.md (not a test:
# `make bench-twin`; tests/bench/RESULTS-twin.md).
.PHONY: bench-twin
bench-twin:
	tests/bench/twin_bench.sh

# tests/bench/host_bound_bench.sh — the current code on the twins: the plan's native estimate and
# libshim's step against native (not a test: `make bench-host-bound`;
# tests/bench/RESULTS-host-bound.md).
.PHONY: bench-host-bound
bench-host-bound:
	tests/bench/host_bound_bench.sh
