#!/bin/sh
# toml-test invalid cases of TOML 1.0.0: each must be rejected with one FILE:LINE:COL error.
exec python3 "$(dirname "$0")/toml_test.py" invalid
