#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# build.sh: configure and build baton and its tests into BUILD_DIR
# (default: build/ at the top of the repository).
#
# usage: build.sh [BUILD_DIR] [extra cmake -D options...]
set -euo pipefail

top="$(cd "$(dirname "$0")/../.." && pwd -P)"
build="${1:-$top/build}"
shift || true
cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build "$build" -j "$(nproc)"
