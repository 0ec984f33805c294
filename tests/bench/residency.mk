# tests/bench/residency — what a budget costs train_sim under the residency manager (not a test:
# `make bench-residency`).
.PHONY: bench-residency
bench-residency:
	tests/bench/residency_bench.sh

# What the host cost of VMM calls (SIMGPU_VMM_HOST_COST, the H100's measured figures) does to the
# same runs (`make bench-vmm-cost`; tests/bench/RESULTS-vmm-cost.md).
.PHONY: bench-vmm-cost
bench-vmm-cost:
	tests/bench/vmm_cost_bench.sh
