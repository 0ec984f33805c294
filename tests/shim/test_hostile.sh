#!/usr/bin/env bash
# tests/shim/test_hostile.sh — the hostile-input campaign (tests/shim/hostile.sh) at the size `make
# test` can afford; `make hostile` runs it in full.
exec "$(dirname "$0")/hostile.sh" ci
