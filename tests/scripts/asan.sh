#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# asan.sh: the whole ctest suite built with AddressSanitizer and
# UndefinedBehaviorSanitizer; any report stops the process that made it
# (-fno-sanitize-recover=all, halt_on_error), so the test that ran it fails.
#
# usage: asan.sh [BUILD_DIR] [ctest options...]     (default build-asan)
set -euo pipefail
top="$(cd "$(dirname "$0")/../.." && pwd -P)"
build="${1:-$top/build-asan}"
shift || true
echo "asan: building $build with -DBATON_SANITIZE=ON (quiet)"
bash "$top/tests/scripts/build.sh" "$build" -DBATON_SANITIZE=ON >/dev/null
export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:abort_on_error=0"
# a library's known leak, named and dated there
export LSAN_OPTIONS="suppressions=$top/tests/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
cd "$build"
ctest --output-on-failure --timeout 900 -j2 "$@"
