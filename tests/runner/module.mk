# tests/runner — the test runner's own tests (tests/run_tests.sh on tiny fake tests) and the
# static guard that every check call holds its whole condition (tests/check.sh).
TESTS += $(sort $(wildcard tests/runner/test_*.sh))
