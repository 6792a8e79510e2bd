#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# bench.sh: build and run the benchmarks in tests/bench; prints figures
# against the targets in DESIGN.md ("Performance targets"), with a Node
# client's figure on the same recorded stream beside baton's, then the
# search/ls/show times on a store of 10,000 generated conversations. Never
# fails on speed.
#
# usage: bench.sh [BUILD_DIR]
set -euo pipefail
top="$(cd "$(dirname "$0")/../.." && pwd -P)"
build="${1:-$top/build}"
bash "$top/tests/scripts/build.sh" "$build" >/dev/null
"$build/tests/bench/bench-pipeline"
if command -v node >/dev/null 2>&1; then
    node "$top/tests/bench/reference-node.js" "$top/fixtures/pi/0.73.1/large.jsonl.gz"
else
    echo "  reference: node is not installed, skipped"
fi
"$build/tests/bench/bench-store"
