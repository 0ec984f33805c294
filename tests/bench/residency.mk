# tests/bench/residency — what a budget costs train_sim under the residency manager (not a test:
# `make bench-residency`).
.PHONY: bench-residency
bench-residency:
	tests/bench/residency_bench.sh
