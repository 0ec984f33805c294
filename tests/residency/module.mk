# tests/residency — the residency manager end to end: train_sim under budgets, fault injection
# over every driver call libshim makes, and random stream timing (scripts; need train_sim and
# libshim).
TESTS += tests/residency/test_budget.sh tests/residency/test_fault_loop.sh tests/residency/test_jitter.sh
