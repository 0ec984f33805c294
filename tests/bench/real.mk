# tests/bench/real — what a budget costs any iteration model replayed under libshim (not a test:
# `make bench-real` writes tests/bench/RESULTS-real.md for generated models;
# tests/bench/real_bench.sh [-o FILE] MODEL... for model files of your own).
.PHONY: bench-real
bench-real:
	tests/bench/real_bench.sh -o tests/bench/RESULTS-real.md
