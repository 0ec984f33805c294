# tests/bench/real — what a budget costs any iteration model replayed under libshim (not a test:
# `make bench-real`, or tests/bench/real_bench.sh MODEL... for model files of your own).
.PHONY: bench-real
bench-real:
	tests/bench/real_bench.sh
