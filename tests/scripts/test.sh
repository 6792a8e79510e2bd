#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test.sh: the whole test suite, from a fresh Debian machine: installs the
# missing Debian packages, builds with -Werror, installs the pinned coder
# CLIs from npm into the test cache (pi on both lines, 0.73.1 and 1.x with
# Node 22), runs every ctest (unit, golden, integration, corpus, live), then
# the other gates: static checks, the suite under ASan+UBSan, under
# valgrind, and the fuzzers for a fixed time. Each gate starts with
# "=== gate NAME"; a summary ends the log: each gate's result and time, and
# for a failed ctest gate the cases that failed. Live tests whose
# prerequisites are missing report "Skipped", never "Passed".
#
# usage: test.sh                    every gate
#        test.sh [ctest options]    only the ctest suite, e.g. test.sh -L unit
# env:   BATON_CACHE  cache for npm packages (default ~/.cache/baton)
#        BATON_FUZZ_SECONDS  time per fuzz target (default 60)
set -uo pipefail

top="$(cd "$(dirname "$0")/../.." && pwd -P)"
build="$top/build"
scripts="$top/tests/scripts"
summary=()
failed=0

gate() { # NAME COMMAND...: run a gate, keep its result for the summary
    local name="$1" start=$SECONDS rc
    shift
    echo "=== gate $name"
    "$@"
    rc=$?
    local what=""
    [ $rc -eq 0 ] || case "$name" in
        tests) what="$(failed_tests "$build")" ;;
        asan) what="$(failed_tests "$top/build-asan")" ;;
    esac
    summary+=("$(printf '%-12s %-6s %4ss%s' "$name" "$([ $rc -eq 0 ] && echo passed || echo FAILED)" $((SECONDS - start)) "$what")")
    [ $rc -eq 0 ] || failed=1
    return $rc
}

# A build says one line; its output goes to a log, whose end is shown when
# it fails (as in demo.sh).
quiet_build() { # DIR LOG [cmake options...]
    local dir="$1" log="$2"
    shift 2
    printf 'test: building %s (log: %s)... ' "$dir" "$log"
    if bash "$scripts/build.sh" "$dir" "$@" >"$log" 2>&1; then
        echo done
    else
        echo "failed; the end of $log:"
        tail -n 40 "$log" | sed 's/^/    /'
        return 1
    fi
}

# The ctest cases that failed in a build directory, for the summary.
failed_tests() { # DIR
    local f="$1/Testing/Temporary/LastTestsFailed.log"
    [ -s "$f" ] && printf ' (%s)' "$(cut -d: -f2- "$f" | paste -sd, -)"
}

logs="${BATON_CACHE:-$HOME/.cache/baton}/logs"
mkdir -p "$logs"
bash "$scripts/deps.sh" || exit 1
gate build quiet_build "$build" "$logs/build.log" -DBATON_WERROR=ON || exit 1

if codex_bin="$(bash "$scripts/install-codex.sh")"; then
    export BATON_TEST_CODEX_BIN="$codex_bin"
else
    echo "test: the codex CLI could not be installed; live codex tests will be skipped" >&2
fi
if pi_bin="$(bash "$scripts/install-pi.sh")"; then
    export BATON_TEST_PI_BIN="$pi_bin"
else
    echo "test: the pi CLI could not be installed; live pi tests will be skipped" >&2
fi
# pi 1.x under a Node 22 from the npm registry (Debian's node is 20)
if pi1_bin="$(bash "$scripts/install-pi.sh" --v1)"; then
    export BATON_TEST_PI1_BIN="$pi1_bin"
else
    echo "test: pi 1.x or Node 22 could not be installed; live-pi-1 will be skipped" >&2
fi
if claude_bin="$(bash "$scripts/install-claude.sh")"; then
    export BATON_TEST_CLAUDE_BIN="$claude_bin"
else
    echo "test: the claude CLI could not be installed; live claude tests will be skipped" >&2
fi
# the ACP coders (docs/acp.md)
for acp in gemini opencode copilot; do
    if acp_bin="$(bash "$scripts/install-$acp.sh")"; then
        export "BATON_TEST_${acp^^}_BIN=$acp_bin"
    else
        echo "test: the $acp CLI could not be installed; live $acp tests will be skipped" >&2
    fi
done

# the official ACP SDK: the client of the `baton acp` tests, and its schema
if acp_sdk="$(bash "$scripts/install-acp-sdk.sh")"; then
    export BATON_TEST_ACP_SDK="$acp_sdk"
else
    echo "test: the ACP SDK could not be installed; the baton acp tests that need it will be skipped" >&2
fi

run_ctest() { (cd "$build" && ctest --output-on-failure --timeout 600 -j2 "$@"); }

if [ $# -gt 0 ]; then
    run_ctest "$@"
    exit $?
fi

gate tests run_ctest
gate lint bash "$scripts/lint.sh" "$build"
gate asan bash "$scripts/asan.sh" "$top/build-asan"
gate valgrind bash "$scripts/valgrind.sh" "$build"
gate fuzz bash "$scripts/fuzz.sh" "${BATON_FUZZ_SECONDS:-60}" "$top/build-fuzz"

echo "=== summary"
printf '%s\n' "${summary[@]}"
n_failed=$(printf '%s\n' "${summary[@]}" | grep -c FAILED)
echo "gates: $((${#summary[@]} - n_failed)) passed, $n_failed failed"
exit $failed
