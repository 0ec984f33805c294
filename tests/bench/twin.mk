# tests/bench/twin — the back-test: the code the H100 ran (libshim at dbfd80c) on the simulated
# device's twins of the H100's two PyTorch jobs, against RESULTS-gpu.md (not a test:
# `make bench-twin`; tests/bench/RESULTS-twin.md).
.PHONY: bench-twin
bench-twin:
	tests/bench/twin_bench.sh
