#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# bench.sh: build and run the benchmarks in tests/bench; prints figures
# against the targets in DESIGN.md ("Performance targets"). Never fails on
# speed.
#
# usage: bench.sh [BUILD_DIR]
set -euo pipefail
top="$(cd "$(dirname "$0")/../.." && pwd -P)"
build="${1:-$top/build}"
bash "$top/tests/scripts/build.sh" "$build" >/dev/null
"$build/tests/bench/bench-pipeline"
