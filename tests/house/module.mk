# tests/house — the rooms of shim/ and tools/ and the order of their dependencies
# (check_rooms.sh), checked on the build and against back-edges planted on purpose.
TESTS += $(sort $(wildcard tests/house/test_*.sh))
