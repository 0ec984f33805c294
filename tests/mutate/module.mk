# tests/mutate — make mutate: source mutations that the tests must catch (mutate.sh, the list
# mutations.txt; not part of make test, which only checks that the list still applies).
#   make mutate                 every mutation of the list, each against its own tests
#   make mutate MUTATE=3,7      entries 3 and 7 only
# test-build builds what `make test TEST=...` would run, without running it.
TESTS += tests/mutate/test_mutations_list.sh

MUTATE ?=
.PHONY: mutate test-build
test-build: $(ALL_TARGETS) $(SELECTED_TESTS)
mutate:
	BUILD=$(BUILD) tests/mutate/mutate.sh tests/mutate/mutations.txt $(subst $(comma), ,$(MUTATE))
comma := ,
# print-tests: every test make test runs, one a line (test_mutations_list.sh checks the filters).
.PHONY: print-tests
print-tests:
	@printf '%s\n' $(TESTS)
