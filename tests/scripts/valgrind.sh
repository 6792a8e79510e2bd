#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# valgrind.sh: the test suites under valgrind memcheck. The unit tests, the
# golden tests and the fuzz regression replays run under memcheck
# themselves; integration-cli and corpus run as usual, with every baton
# process they start run under memcheck (BATON_TEST_WRAPPER, see
# tests/support/support.h), and so do serve-api and serve-sse with
# baton-serve; and a baton killed mid-turn is recovered by a
# baton under memcheck (crash-recovery). A test fails on its own failures,
# on any memcheck error (invalid access, uninitialised value, definite or
# indirect leak) and on any file descriptor the program itself left open at
# exit (--track-fds; descriptors inherited from the caller do not count).
# The suites run in two lanes side by side (memcheck uses one core).
# Builds BUILD_DIR first (Debug when it is new). Logs and outputs go to
# BUILD_DIR/valgrind/.
#
# usage: valgrind.sh [BUILD_DIR]        (default: build-vg/ at the top)
# env:   BATON_VALGRIND_LANES=1   one lane (the default on one core)
#        BATON_VALGRIND_LIMIT     seconds per executable (default 600)
set -uo pipefail

top="$(cd "$(dirname "$0")/../.." && pwd -P)"
# shellcheck source=tests/scripts/lines.sh
source "$top/tests/scripts/lines.sh"
build="${1:-$top/build-vg}"
case "$build" in /*) ;; *) build="$PWD/$build" ;; esac
logs="$build/valgrind"

command -v valgrind >/dev/null 2>&1 || {
    echo "valgrind: valgrind is not installed (tests/scripts/deps.sh installs it)" >&2
    exit 1
}
case "$logs" in *[[:space:]]*)
    # BATON_TEST_WRAPPER is split on spaces: the log path must not hold any
    echo "valgrind: build directory '$build' contains white space" >&2
    exit 1 ;;
esac

# Build: configure as Debug if new, otherwise rebuild as configured.
if [ -f "$build/CMakeCache.txt" ]; then
    if grep -q '^BATON_SANITIZE:BOOL=ON' "$build/CMakeCache.txt"; then
        echo "valgrind: $build is a sanitizer build; valgrind cannot run those" >&2
        exit 1
    fi
    cmake --build "$build" -j "$(nproc)" >/dev/null || { echo "valgrind: build failed" >&2; exit 1; }
else
    bash "$top/tests/scripts/build.sh" "$build" -DCMAKE_BUILD_TYPE=Debug >/dev/null ||
        { echo "valgrind: build failed" >&2; exit 1; }
fi
rm -rf "$logs"
mkdir -p "$logs"

# Memcheck's options. Children forked by a program under test stay silent
# until they exec, and what they exec runs natively.
# shellcheck disable=SC2054 # the commas belong to --errors-for-leak-kinds
vg=(valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect
    --track-fds=yes --child-silent-after-fork=yes --trace-children=no)
if [ -f "$top/tests/valgrind.supp" ]; then
    vg+=(--suppressions="$top/tests/valgrind.supp")
fi
# seconds per executable: a hang fails instead of eating the CI budget.
# integration-overhead, the slowest, passed within 300 s in CI but went
# past it on a machine busy with other builds (a fresh clone's test.sh,
# 2026-12-02): 600 leaves room for that. BATON_VALGRIND_LIMIT overrides.
limit="${BATON_VALGRIND_LIMIT:-600}"

# Cases that cannot pass under valgrind whatever baton does: they still run
# (and their baton processes are still checked), but their result does not
# count. "executable:case" -> why.
declare -A excluded=(
    [integration-cli:test_sigint_cancels]="sends SIGINT 700 ms after start; under memcheck baton needs ~1.2-1.4 s to reach the turn and install its handlers (natively 20 ms), so the default action kills it first"
    [integration-cli:test_sigterm_and_sighup_cancel]="sends SIGTERM/SIGHUP 600 ms after start; same as test_sigint_cancels"
)

skipped=()

now() { echo "${EPOCHREALTIME/,/.}"; }
secs() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f s", b - a }'; }

# The problems in one memcheck log, one line each (nothing if clean): the
# error count, and every descriptor open at exit that was not inherited.
# A process a signal ended had no chance to free or close anything: its
# leaks and descriptors do not count, its invalid accesses and uses of
# uninitialised values do.
log_problems() {
    awk '
        /Process terminating with default action of signal/ { killed = 1 }
        /ERROR SUMMARY: [1-9]/ && !killed { sub(/^==[0-9]+== /, ""); print "memcheck: " $0 }
        killed && /== (Invalid (read|write|free)|Conditional jump|Use of uninitialised|Syscall param)/ {
            sub(/^==[0-9]+== /, ""); print "memcheck (before the signal): " $0
        }
        fd != "" { if ($0 !~ /inherited from parent/ && !killed) print "fd left open at exit: " fd; fd = "" }
        /== Open .*[0-9]+:/ { fd = $0; sub(/^==[0-9]+== /, "", fd) }
    ' "$1"
}

# Show a memcheck log without its banner.
show_log() {
    echo "    --- $1"
    grep -v -e 'Copyright (C)' -e 'Using Valgrind-' -e 'rerun with -h' -e '^==[0-9]*== *$' "$1" |
        head -n 80 | sed 's/^/    /'
}

# Failed cmocka cases of an output, one name a line.
failed_cases() {
    sed -n 's/^\[  FAILED  \] \([^ ]*\)$/\1/p' "$1" | sort -u
}

# verdict NAME RC OUT LOG... : print NAME's result and count it.
verdict() {
    local name=$1 rc=$2 out=$3 t0=$4
    shift 4
    local problems=() bad_logs=() ignored=() c p
    if [ "$rc" -ne 0 ]; then
        local unexpected=() cases=()
        lines_of cases failed_cases "$out" || problems+=("cannot read the failed cases of $out")
        for c in "${cases[@]}"; do
            [ -n "$c" ] || continue
            if [ -n "${excluded[$name:$c]:-}" ]; then ignored+=("$c"); else unexpected+=("$c"); fi
        done
        # cmocka exits with the number of failed cases
        if [ ${#unexpected[@]} -gt 0 ] || [ "$rc" -ne ${#ignored[@]} ]; then
            case "$rc" in
            99) problems+=("memcheck errors (exit 99)") ;;
            124 | 137) problems+=("did not finish in $limit s") ;;
            *) problems+=("exit $rc${unexpected[*]:+: failed ${unexpected[*]}}") ;;
            esac
        fi
    fi
    local log n=0 unjudged=0 signalled=0
    for log in "$@"; do
        [ -f "$log" ] || continue
        n=$((n + 1))
        grep -q 'ERROR SUMMARY:' "$log" || unjudged=$((unjudged + 1))
        grep -q 'Process terminating with default action' "$log" && signalled=$((signalled + 1))
        local found=0 said=()
        if ! lines_of said log_problems "$log"; then
            said=("cannot read it")
        fi
        for p in "${said[@]}"; do
            problems+=("${log##*/}: $p")
            found=1
        done
        [ $found -eq 0 ] || bad_logs+=("$log")
    done
    local what
    what=$(secs "$t0")
    if [ $n -gt 1 ]; then
        what="$what, $n processes under memcheck"
        [ $signalled -eq 0 ] || what="$what, $signalled ended by a signal"
        [ $unjudged -eq 0 ] || what="$what, $unjudged killed before their summary (not checked)"
    fi
    # the lanes run side by side: one report in one write, one result line
    local report
    report=$(
        if [ ${#problems[@]} -eq 0 ]; then
            echo "$name: passed ($what)"
        else
            echo "$name: FAILED ($what)"
            printf '    %s\n' "${problems[@]:0:12}"
            [ ${#problems[@]} -le 12 ] || echo "    ... and $((${#problems[@]} - 12)) more problems"
            for log in "${bad_logs[@]:0:2}"; do show_log "$log"; done
            [ ${#bad_logs[@]} -le 2 ] || echo "    ... and $((${#bad_logs[@]} - 2)) more logs with problems"
            if [ "$rc" -ne 0 ] && [ "$rc" -ne 99 ]; then
                echo "    --- output: $out"
                tail -n 40 "$out" | sed 's/^/    /'
            fi
        fi
        for c in "${ignored[@]}"; do
            echo "    excluded case $c failed (ignored): ${excluded[$name:$c]}"
        done
    )
    printf '%s\n' "$report"
    if [ ${#problems[@]} -eq 0 ]; then echo "passed $name"; else echo "failed $name"; fi >>"$results"
}

# An executable under memcheck: run_direct NAME DIR COMMAND...
run_direct() {
    local name=$1 dir=$2
    shift 2
    local t0 rc
    t0=$(now)
    (cd "$dir" && timeout -k 10 "$limit" "${vg[@]}" --log-file="$logs/$name.log" "$@") \
        >"$logs/$name.out" 2>&1
    rc=$?
    verdict "$name" "$rc" "$logs/$name.out" "$t0" "$logs/$name.log"
}

# A test executable whose baton processes run under memcheck.
run_wrapped() {
    local name=$1 dir=$2
    shift 2
    local t0 rc c
    for c in "${!excluded[@]}"; do
        if [ "${c%%:*}" = "$name" ]; then echo "$name: excluding ${c#*:}: ${excluded[$c]}"; fi
    done
    mkdir -p "$logs/$name"
    t0=$(now)
    (cd "$dir" &&
        BATON_TEST_WRAPPER="${vg[*]} --log-file=$logs/$name/baton.%p.log" \
            timeout -k 10 "$limit" "$@") >"$logs/$name.out" 2>&1
    rc=$?
    verdict "$name" "$rc" "$logs/$name.out" "$t0" "$logs/$name"/*.log
}

# crash-recovery: integration-crash's kill points (30-2430 ms) mostly fall
# before a baton under memcheck has stored anything, so here a native baton
# is killed mid-turn (after its fourth event) and the next commands, which
# recover the run, are the ones under memcheck.
crash_recovery() {
    local name=crash-recovery t0 d rc=0 conv gc pid _
    t0=$(now)
    d=$(mktemp -d "$logs/crash-XXXXXX")
    export BATON_HOME="$d/home" BATON_CODEX_BIN="$build/tests/fake-coder/fake-coder" \
        FAKE_CODER_REPLAY="$top/fixtures/codex/0.171.0/shell-declined.jsonl" \
        FAKE_CODER_DELAY_MS=40 FAKE_CODER_NEVER_EXIT=1 FAKE_CODER_GRANDCHILD=1 \
        FAKE_CODER_PIDFILE="$d/gc.pid" NO_COLOR=1
    # the file exists before the wait reads it: the background job's own
    # redirection may come after the first read (a failed read ended the
    # wait at once, killing baton before it had stored anything)
    : >"$d/run.out"
    "$build/baton" run --json '[[shell:echo baton-ok]]' >>"$d/run.out" 2>"$d/run.err" &
    pid=$!
    for _ in $(seq 200); do
        [ "$(wc -l <"$d/run.out")" -ge 4 ] && break
        sleep 0.05
    done
    kill -KILL "$pid"
    wait "$pid" 2>/dev/null
    conv=$(sed -n '1s/.*"conversation":"\([^"]*\)".*/\1/p' "$d/run.out")
    {
        echo "killed after $(wc -l <"$d/run.out") events; conversation $conv"
        timeout -k 10 "$limit" "${vg[@]}" --log-file="$logs/$name.ls.log" "$build/baton" ls ||
            echo "baton ls: exit $?"
        timeout -k 10 "$limit" "${vg[@]}" --log-file="$logs/$name.show.log" \
            "$build/baton" show --json "$conv" || echo "baton show: exit $?"
    } >"$logs/$name.out" 2>&1
    unset BATON_HOME BATON_CODEX_BIN FAKE_CODER_REPLAY FAKE_CODER_DELAY_MS \
        FAKE_CODER_NEVER_EXIT FAKE_CODER_GRANDCHILD FAKE_CODER_PIDFILE NO_COLOR
    grep -q ': exit ' "$logs/$name.out" && rc=1
    grep -q '"state":"interrupted"' "$logs/$name.out" ||
        { echo "the run was not recovered as interrupted" >>"$logs/$name.out"; rc=1; }
    gc=$(cat "$d/gc.pid" 2>/dev/null)
    if [ -n "$gc" ] && kill -0 "$gc" 2>/dev/null; then
        echo "the coder's grandchild $gc outlived recovery" >>"$logs/$name.out"
        kill -KILL "$gc"
        rc=1
    fi
    rm -rf "$d"
    verdict "$name" "$rc" "$logs/$name.out" "$t0" "$logs/$name.ls.log" "$logs/$name.show.log"
}

start=$(now)
# The tests ctest knows in $build, one a line.
list_tests() {
    ctest --test-dir "$build" -N | sed -n 's/^ *Test *#[0-9]*: \(.*\)$/\1/p'
}
tests=()
if ! lines_of tests list_tests; then
    echo "valgrind: ctest -N failed in $build" >&2
    exit 1
fi
if [ ${#tests[@]} -eq 0 ]; then
    echo "valgrind: ctest lists no tests in $build" >&2
    exit 1
fi
results="$logs/results" # "passed NAME" or "failed NAME", a line each
: >"$results"

# The executables under memcheck directly: unit, golden, fuzz replays.
direct_suites() {
    local t coder exe target args fam c
    for t in "${tests[@]}"; do
        case "$t" in unit-*) run_direct "$t" "$build/tests/unit" "$build/tests/unit/$t" ;; esac
    done
    for t in "${tests[@]}"; do
        case "$t" in golden-*) ;; *) continue ;; esac
        coder=${t#golden-}
        run_direct "$t" "$build/tests/golden" "$build/tests/golden/golden" "$coder" \
            "$top/fixtures/$coder"
    done
    # fuzz-regressions, one replay program at a time (ctest runs them through sh)
    for exe in "$build"/tests/replay-*; do
        target=${exe##*/replay-}
        args=("$top/tests/fuzz/regressions/$target")
        # a family's replay (BT_CODER_ON(name, family)) takes its coders' fixtures
        if [ "${target#parser-}" != "$target" ]; then
            fam=${target#parser-}
            for c in "$fam" $(sed -n "s/^BT_CODER_ON(\([a-z0-9_]*\), $fam)\$/\1/p" "$top/src/coders.def"); do
                [ -d "$top/fixtures/$c" ] && args+=("$top/fixtures/$c")
            done
        fi
        run_direct "fuzz-regressions:$target" "$build/tests" "$exe" "${args[@]}"
    done
}

integration() { # NAME: an integration executable, its baton processes wrapped
    run_wrapped "$1" "$build/tests/integration" "$build/tests/integration/$1"
}

# baton serve: baton-serve itself under memcheck (servetest.py runs it
# directly when BATON_TEST_WRAPPER is set), and every CLI call of the
# tests; its detached workers run natively, as the integration tests' do
# (baton execs itself, outside the wrapper; the ASan gate covers them)
py_suite() { # NAME SCRIPT: a Python suite of tests/serve or tests/acp
    run_wrapped "$1" "$build" env BATON_BIN="$build/baton" \
        BATON_FAKE_CODER="$build/tests/fake-coder/fake-coder" BATON_TEST_TMPDIR="$build" \
        PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 "$top/$2"
}
serve_suite() { # api, sse, security, turns or work
    py_suite "serve-$1" "tests/serve/test_$1.py"
}

# Memcheck runs a program on one thread, and these suites mostly run one
# baton at a time: two lanes side by side use both cores of a CI machine.
# Each holds about half the time (seconds under memcheck in CI, 2026-12-03).
lane_one() {
    run_wrapped corpus "$build/tests/corpus" "$build/tests/corpus/corpus" \
        "$top/tests/corpus/cases" # 305
    integration integration-overhead # 200
    integration integration-service  # 107
    serve_suite api                  # 91
    # serve's own accept, the connection limit, header deadlines
    serve_suite security
    # worktree, diff, keep, fan-out (a request waiting for several workers), groups
    serve_suite work
    # the store-failure shim (LD_PRELOAD) reaches the baton under memcheck too
    integration integration-rebuild # 44
    # measured 2026-12-04 beside the other lane's suites: 238 and 72 s
    integration integration-args   # 238
    integration integration-rm-acp # 72
    # the model lists: a thread and a coder process per listing
    if [ -n "${BATON_TEST_ACP_SDK:-}" ]; then
        py_suite acp-models tests/acp/test_models.py
    else
        echo "acp-models: skipped (BATON_TEST_ACP_SDK is not set: tests/scripts/install-acp-sdk.sh)"
        echo "skipped acp-models" >>"$results"
    fi
}
lane_two() {
    direct_suites # 95
    # about 100 baton processes under memcheck against a store of 10,000
    # conversations: a limit of its own
    limit=600 integration integration-browse # 227
    integration integration-cli              # 90
    integration integration-handoff          # 87
    serve_suite sse                          # 77
    serve_suite turns                        # turn slots: waiting, cancel
    serve_suite ask                          # approval ask through the API
    integration integration-watchdog         # 52
    integration integration-store-files      # 36
    crash_recovery                           # 9
    integration integration-show             # 164
    integration integration-approval         # requests after Ctrl-C and cancel
    integration integration-steer            # steer: delivered, refused, queued
    serve_suite steer                        # POST .../steer
    integration integration-channel          # the run owner's socket, followers, SIGKILL
    integration integration-ask              # --approval ask: approve, answer, inline, late
    integration integration-rm               # 64
    integration integration-acp              # 27
    integration integration-changes          # libgit2 in every turn
    integration integration-snapshots        # baton's snapshot store, migration, bounds
    integration integration-worktree         # worktrees made and pruned
    integration integration-keep             # commits, merges, checkouts
    integration integration-fanout           # groups, parallel workers
    # baton acp's threads (a turn per prompt) under memcheck; without the
    # ACP SDK (BATON_TEST_ACP_SDK) the suite says it is skipped, and so
    # does this gate
    if [ -n "${BATON_TEST_ACP_SDK:-}" ]; then
        py_suite acp-agent tests/acp/test_agent.py
    else
        echo "acp-agent: skipped (BATON_TEST_ACP_SDK is not set: tests/scripts/install-acp-sdk.sh)"
        echo "skipped acp-agent" >>"$results"
        skipped+=(acp-agent) # lane_two runs in this shell
    fi
    # a turn's changes as a tool call, the worktree option
    if [ -n "${BATON_TEST_ACP_SDK:-}" ]; then
        py_suite acp-work tests/acp/test_work.py
    else
        echo "acp-work: skipped (BATON_TEST_ACP_SDK is not set: tests/scripts/install-acp-sdk.sh)"
        echo "skipped acp-work" >>"$results"
        skipped+=(acp-work)
    fi
}
lanes="${BATON_VALGRIND_LANES:-$(($(nproc) >= 2 ? 2 : 1))}"
if [ "$lanes" -ge 2 ]; then
    echo "valgrind: two lanes side by side (BATON_VALGRIND_LANES=1: one after the other)"
    lane_one &
    one=$!
    lane_two
    wait "$one"
else
    lane_one
    lane_two
fi
echo "integration-store-permissions: skipped (it runs baton through setpriv as another user, outside the wrapper)"
skipped+=(integration-store-permissions)
echo "integration-crash: skipped (SIGKILLs baton 30-2430 ms into a run; a baton under memcheck has stored nothing by then, so every point would pass vacuously; crash-recovery stands in)"
skipped+=(integration-crash)

# a new integration suite has to be placed in a lane (or skipped, saying why)
for t in "${tests[@]}"; do
    case "$t" in integration-* | serve-api | serve-sse | serve-work | acp-agent | acp-models | acp-work | corpus) ;; *) continue ;; esac
    grep -q " $t\$" "$results" || [[ " ${skipped[*]} " == *" $t "* ]] ||
        { echo "valgrind: $t is in no lane of tests/scripts/valgrind.sh"; echo "failed $t" >>"$results"; }
done
passed=$(grep -c '^passed ' "$results")
failed=$(grep -c '^failed ' "$results")
echo "valgrind: $(secs "$start") in all; logs in $logs"
echo "valgrind: $passed passed, $failed failed${skipped:+ (${#skipped[@]} skipped: ${skipped[*]})}"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
