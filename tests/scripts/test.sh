#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test.sh: the whole test suite, from a fresh Debian machine: installs the
# missing Debian packages, builds, installs the pinned coder CLIs from npm
# into the test cache, and runs every ctest (unit, golden, integration,
# live). Live tests whose prerequisites are missing report "Skipped", never
# "Passed".
#
# usage: test.sh [ctest options...]     e.g. test.sh -L unit
# env:   BATON_CACHE  cache for npm packages (default ~/.cache/baton)
set -euo pipefail

top="$(cd "$(dirname "$0")/../.." && pwd -P)"
build="$top/build"

bash "$top/tests/scripts/deps.sh"
bash "$top/tests/scripts/build.sh" "$build"

if codex_bin="$(bash "$top/tests/scripts/install-codex.sh")"; then
    export BATON_TEST_CODEX_BIN="$codex_bin"
else
    echo "test: the codex CLI could not be installed; live codex tests will be skipped" >&2
fi

cd "$build"
ctest --output-on-failure --timeout 600 -j2 "$@"
