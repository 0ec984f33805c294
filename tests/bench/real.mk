# tests/bench/real — what a budget costs any iteration model replayed under libshim (not a test:
# `make bench-real` writes tests/bench/RESULTS-real.md for generated models;
# tests/bench/real_bench.sh [-o FILE] MODEL... for model files of your own).
.PHONY: bench-real
bench-real:
	tests/bench/real_bench.sh -o tests/bench/RESULTS-real.md

# `make bench-dlrm-ranks`: the DLRM job's ranks (../shared/traces) and the ranks derived from them
# at 75%, with the spread of libshim against the offline prediction (prints; RESULTS-real.md,
# run 7, holds a run and what it shows).
.PHONY: bench-dlrm-ranks
bench-dlrm-ranks:
	tests/bench/dlrm_ranks_bench.sh
