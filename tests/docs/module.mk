# tests/docs — the README stays true: its figures against tests/bench/RESULTS-*.md, its command
# blocks run verbatim, its option reference (tests/conf/readme_options.sh) against conf/.
TESTS += $(sort $(wildcard tests/docs/test_*.sh))
