# tests/residency — the residency manager end to end: train_sim under budgets, fault injection
# over every driver call libshim makes, random stream timing, and threads_sim's many threads on
# their own streams (scripts; need train_sim, threads_sim and libshim).
TESTS += tests/residency/test_budget.sh tests/residency/test_fault_loop.sh \
	tests/residency/test_jitter.sh tests/residency/test_threads.sh
