#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# fuzz.sh: build the libFuzzer targets with clang (ASan+UBSan) and run each
# for a fixed time, as many at once as there are cores, seeded from fixtures/ and tests/fuzz/regressions/. A
# crash, leak or sanitizer report fails the gate; its input is copied into
# tests/fuzz/regressions/<target>/ so it becomes a regression input.
#
# usage: fuzz.sh [SECONDS_PER_TARGET] [BUILD_DIR]     (default 60, build-fuzz)
set -uo pipefail

top="$(cd "$(dirname "$0")/../.." && pwd -P)"
secs="${1:-60}"
build="${2:-$top/build-fuzz}"
command -v clang >/dev/null || { echo "fuzz: clang is missing (tests/scripts/deps.sh installs it)"; exit 1; }
CC=clang cmake -S "$top" -B "$build" -DBATON_FUZZ=ON -DBATON_TESTS=OFF \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null || exit 1
cmake --build "$build" -j "$(nproc)" >/dev/null || { echo "fuzz: build failed"; exit 1; }

# shellcheck source=tests/scripts/scratch.sh
source "$top/tests/scripts/scratch.sh"
work="$(scratch_dir fuzz)" || exit 1
trap 'rm -rf "$work"' EXIT

# fuzz_one BIN: one target for $secs; its report goes to $work/TARGET.report,
# and a line "failed" to $work/TARGET.failed if it found anything.
fuzz_one() {
    local bin=$1 target corpus fam c log rc runs crashes a
    target="${bin##*/fuzz-}"
    corpus="$work/$target"
    mkdir -p "$corpus"
    cp "$top"/tests/fuzz/regressions/"$target"/* "$corpus"/ 2>/dev/null
    case "$target" in
    parser-*)
        # a family's target (BT_CODER_ON(name, family)) takes its coders' fixtures
        fam="${target#parser-}"
        for c in "$fam" $(sed -n "s/^BT_CODER_ON(\([a-z0-9_]*\), $fam)\$/\1/p" "$top/src/coders.def"); do
            cp "$top"/fixtures/"$c"/*/*.jsonl "$corpus"/ 2>/dev/null
        done ;;
    framer) cp "$top"/fixtures/*/*/*.jsonl "$corpus"/ 2>/dev/null ;;
    event-parse) cp "$top"/fixtures/*/*/*.events.jsonl "$corpus"/ 2>/dev/null ;;
    markdown) cp "$top"/docs/*.md "$corpus"/ 2>/dev/null ;;
    esac
    log="$work/$target.log"
    (cd "$work" && "$bin" -max_total_time="$secs" -max_len=65536 -timeout=10 \
        -artifact_prefix="$work/$target-" "$corpus" >"$log" 2>&1)
    rc=$?
    runs=$(grep -Eo 'Done [0-9]+ runs' "$log" | grep -Eo '[0-9]+' | tail -n 1)
    crashes=0
    {
        for a in "$work/$target-"*; do
            [ -e "$a" ] || continue
            crashes=$((crashes + 1))
            mkdir -p "$top/tests/fuzz/regressions/$target"
            cp "$a" "$top/tests/fuzz/regressions/$target/"
            echo "fuzz: $target found ${a##*/}, kept in tests/fuzz/regressions/$target/"
        done
        if [ "$rc" -ne 0 ] || [ "$crashes" -ne 0 ]; then
            echo failed >"$work/$target.failed"
            tail -n 40 "$log"
        fi
        echo "gate fuzz-$target: ${runs:-0} executions in ${secs}s, $crashes crashes"
    } >"$work/$target.report"
}

# A fuzzer runs on one thread: as many at once as there are cores, the
# reports in the targets' order.
bins=("$build"/tests/fuzz/fuzz-*)
at_once=$(nproc)
for ((i = 0; i < ${#bins[@]}; i += at_once)); do
    for bin in "${bins[@]:i:at_once}"; do fuzz_one "$bin" & done
    wait
    for bin in "${bins[@]:i:at_once}"; do cat "$work/${bin##*/fuzz-}.report"; done
done
failed=0
for bin in "${bins[@]}"; do
    t=${bin##*/fuzz-}
    [ -e "$work/$t.report" ] || { echo "fuzz: $t gave no report"; failed=1; }
    [ -e "$work/$t.failed" ] && failed=1
done
exit $failed
