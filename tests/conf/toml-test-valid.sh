#!/bin/sh
# toml-test valid cases of TOML 1.0.0: each must decode to its expected JSON.
exec python3 "$(dirname "$0")/toml_test.py" valid
