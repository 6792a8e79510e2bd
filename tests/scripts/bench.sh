#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# bench.sh: the benchmarks of tests/bench, against the design's performance
# targets (listed at the top of docs/performance.md). Whole processes timed
# side by side in one sitting (tests/bench/bench-time.c: medians of 7 or
# more runs, each figure with its difference and ratio to its reference),
# what a user pays:
#   fixed       baton run with the fake coder vs the fake coder alone: the
#               fixed cost of a turn, and baton's own peak RSS
#   steps       where that turn's time goes: the BATON_TRACE_PERF marks of
#               21 such turns, the median and p90 of each step, from spawn
#               to reaped (tests/bench/steps.sh)
#   codex       the real codex against the stand-in model: baton run (native
#               binary, npm launcher) vs a direct C client of app-server
#               (bench-drive), codex exec --json, and @openai/codex-sdk
#   pi          the real pi against the stand-in: baton run vs bench-drive
#               vs pi's own RpcClient
#   claude      the real claude against the stand-in: baton run vs claude
#               -p stream-json fed the same prompt line from a file
#   throughput  baton run -c pi on the recorded 42 MB pi stream (replayed
#               by the fake coder) vs cat, a cJSON reader, Node, Python
#   latency     coder writes a line -> the event is on baton's stdout
#               (FAKE_CODER_STAMP), vs the fake coder read directly
#   disk        bytes kept per turn: store growth and run files
#   pipeline    in-process read path (bench-pipeline)
#   store       search/ls/show on 10,000 generated conversations
#   serve       one baton serve (tests/bench/serve-bench.py): coder line ->
#               SSE frame with 1 conversation and 1 follower, with 2
#               conversations and 5 followers (each with a
#               baton run turn beside them, its stdout), then under
#               the issue's load (20 runs, 103 followers, a baton run
#               beside it): events lost, latency, serve's RSS and CPU
#   control     a control request (cancel) to a running turn until the
#               coder reads it (tests/bench/control-bench.py): stored and
#               woken through the run owner's channel, and `baton cancel`
# then a summary table (markdown) of the figures, as in docs/performance.md.
# Figures only: no timing is ever asserted; a missing coder or package is
# reported as "skipped: reason" and the run goes on; exit status 0 unless the
# build fails or an argument is wrong.
#
# usage: bench.sh [--rev REV] [--runs N] [SECTION...]   (default: all)
#   --rev REV  measure the baton of commit REV (exported with git archive and
#              built apart, under the cache, one build per state of src/,
#              runners/, parsers/ and CMakeLists.txt, the 8 used last kept);
#              everything else (fake coder,
#              stand-in, bench tools) comes from this checkout's build; the
#              in-process sections (pipeline, store) always measure the
#              checkout's own build
#   --vs REV   also time the baton of commit REV in the same sitting, in
#              the sections that use the fake coder (fixed, steps,
#              throughput, latency): a before/after of a change to baton
#   --runs N   runs per command for the real coders (default 21, pi 15)
# Environment: BATON_CACHE (default ~/.cache/baton): npm caches (npm, npm-pi,
# npm-claude, npm-bench) and the scratch directory bench/; BENCH_KEEP=1 keeps
# the scratch directory.
set -uo pipefail

top="$(cd "$(dirname "$0")/../.." && pwd -P)"
build="$top/build"
cache="${BATON_CACHE:-$HOME/.cache/baton}"
# shellcheck source=tests/scripts/lines.sh
source "$top/tests/scripts/lines.sh"
rev=""
vs_rev=""
runs_real=21
runs_pi=15
sections=()
while [ $# -gt 0 ]; do
    case "$1" in
    --rev) rev="${2:?--rev needs a commit}"; shift 2 ;;
    --vs) vs_rev="${2:?--vs needs a commit}"; shift 2 ;;
    --runs) runs_real="${2:?--runs needs a number}"; runs_pi="$2"; shift 2 ;;
    -h | --help) sed -n '4,45p' "$0"; exit 0 ;;
    fixed | steps | codex | pi | claude | throughput | latency | disk | pipeline | store | serve | control) sections+=("$1"); shift ;;
    *) echo "bench.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
done
[ ${#sections[@]} -gt 0 ] ||
    sections=(fixed steps codex pi claude throughput latency disk pipeline store serve control)
want() {
    local s
    for s in "${sections[@]}"; do [ "$s" = "$1" ] && return 0; done
    return 1
}

# ---- build --------------------------------------------------------------

echo "bench: building $build" >&2
bash "$top/tests/scripts/build.sh" "$build" >/dev/null || { echo "bench.sh: build failed" >&2; exit 1; }
baton="$build/baton"
# The baton of commit $1, built apart under the cache; prints its path.
baton_at() {
    local sha key rdir
    sha="$(git -C "$top" rev-parse --verify "$1^{commit}")" || return 1
    # commits with the same sources share a build
    key="$(git -C "$top" rev-parse "$sha:src" "$sha:runners" "$sha:parsers" \
        "$sha:CMakeLists.txt" 2>/dev/null | sha1sum | cut -c1-12)"
    rdir="$cache/bench/rev-$key"
    if [ ! -x "$rdir/build/baton" ]; then
        echo "bench: building baton at ${sha:0:12} in $rdir" >&2
        rm -rf "$rdir" && mkdir -p "$rdir/src" &&
            git -C "$top" archive "$sha" | tar -x -C "$rdir/src" &&
            cmake -S "$rdir/src" -B "$rdir/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
                -DBATON_TESTS=OFF >/dev/null &&
            cmake --build "$rdir/build" -j "$(nproc)" --target baton >/dev/null || return 1
    fi
    touch "$rdir"
    # keep the 8 builds used last (about 9 MB each)
    find "$cache/bench" -maxdepth 1 -name 'rev-*' -printf '%T@ %p\n' | sort -rn | tail -n +9 |
        cut -d' ' -f2- | while IFS= read -r old; do rm -rf "$old"; done
    echo "$rdir/build/baton"
}
short() { git -C "$top" rev-parse --short=12 "$1^{commit}"; }
if [ -n "$rev" ]; then
    baton="$(baton_at "$rev")" || { echo "bench.sh: build of $rev failed" >&2; exit 1; }
    measured="$(short "$rev") (--rev $rev)"
else
    measured="$(git -C "$top" rev-parse --short=12 HEAD)"
    if [ -n "$(git -C "$top" status --porcelain -- src runners parsers CMakeLists.txt)" ]; then
        measured="$measured + uncommitted changes in src/runners/parsers"
    fi
fi
baton_b="" vs_label=""
if [ -n "$vs_rev" ]; then
    baton_b="$(baton_at "$vs_rev")" || { echo "bench.sh: build of $vs_rev failed" >&2; exit 1; }
    vs_label="$(short "$vs_rev")"
fi
bt="$build/tests/bench"
fake="$build/tests/fake-coder/fake-coder"
standin_bin="$build/tests/standin/baton-standin"
fx="$top/fixtures"
prompt="Say hello banana"

mkdir -p "$cache/bench" || exit 1
run="$(mktemp -d "$cache/bench/run.XXXXXX")" || exit 1
standin_pid=""
cleanup() {
    [ -n "$standin_pid" ] && kill "$standin_pid" 2>/dev/null && wait "$standin_pid" 2>/dev/null
    if [ "${BENCH_KEEP:-}" = 1 ]; then echo "bench: kept $run" >&2; else rm -rf "$run"; fi
}
trap cleanup EXIT
tsv="$run/results.tsv"
summary="$run/summary.md"
: >"$tsv"
: >"$summary"
mkdir -p "$run/work"

echo "baton measured: $measured ($baton)"
[ -n "$baton_b" ] && echo "beside it: baton at $vs_label ($baton_b)"
echo "machine: $(nproc) cores, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1), $(uname -sr)"
echo "date: $(date -u +%Y-%m-%dT%H:%MZ), load average $(cut -d' ' -f1-3 /proc/loadavg)"
load0="$(cut -d' ' -f1 /proc/loadavg)"
awk -v l="$load0" 'BEGIN { exit !(l > 0.5) }' &&
    echo "warning: the machine is busy (load $load0): figures will be noisy"

# ---- helpers --------------------------------------------------------------

# One summary row: figure | baton | reference | difference | target | command
row() {
    printf '| %s | %s | %s | %s | %s | `bash tests/scripts/bench.sh %s` |\n' "$@" >>"$summary"
}

# A field of the last TSV line of a label: tsvf LABEL COLUMN (1-based).
tsvf() {
    awk -F'\t' -v l="$1" -v c="$2" '$1 == l { v = $c } END { print v }' "$tsv"
}

# "12.3 ms" from a median, or "failed".
ms() {
    local v
    v="$(tsvf "$1" 4)"
    [ -n "$v" ] && printf '%.1f ms' "$v" || printf 'failed'
}

# "+1.2 ms (x1.10)" of a label against its reference.
vs() {
    local d r
    d="$(tsvf "$1" 10)" r="$(tsvf "$1" 11)"
    [ -n "$d" ] && printf '%+.1f ms (x%.2f)' "$d" "$r" || printf '-'
}

# The same, with the difference of the fastest runs too ("; min +1.0 ms"):
# for noisy turns of real coders, where medians of 21 runs still wander.
vs_min() {
    local ref a b
    vs "$1"
    ref="$(tsvf "$1" 9)" a="$(tsvf "$1" 6)"
    [ -n "$ref" ] && b="$(tsvf "$ref" 6)" && [ -n "$a" ] && [ -n "$b" ] &&
        awk -v a="$a" -v b="$b" 'BEGIN { printf "; fastest runs %+.1f ms", a - b }'
}

# -e K=V arguments for bench-time from an env script's KEY=VALUE lines.
env_args() {
    local line
    while IFS= read -r line; do
        [ -n "$line" ] && printf -- '-e\n%s\n' "$line"
    done
}

# ENV_SCRIPT DIR PORT: the script's KEY=VALUE lines as env_args makes them
# into the array cenv/penv/clenv (lines_of NAME env_of ...); a script that
# fails stops the bench with its reason, never a run in the user's home.
env_of() {
    local out
    out="$(bash "$@")" || return
    env_args <<<"$out"
}
need_env() { # NAME ENV_SCRIPT DIR PORT
    local name=$1
    shift
    lines_of "$name" env_of "$@" && return
    echo "bench: ${1##*/} failed (its reason is above); stopping" >&2
    exit 1
}

# Each section ends with the CPU time other processes used while it ran
# (all CPUs' busy time in /proc/stat less this script's children's):
# figures taken while something else keeps the cores busy are not
# comparable. The largest share goes into the summary.
busy_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat; }
# utime stime cutime cstime of this shell (fields after the ")" of comm)
own_ticks() { sed 's/.*) //' "/proc/$$/stat" | awk '{ print $12 + $13 + $14 + $15 }'; }
sec_name="" sec_t0=0 sec_busy0=0 sec_own0=0 others_max=0
section_end() {
    [ -n "$sec_name" ] || return 0
    local t1 b1 o1
    t1="$(date +%s.%N)" b1="$(busy_ticks)" o1="$(own_ticks)"
    local pct
    pct="$(awk -v t="$t1" -v t0="$sec_t0" -v b="$((b1 - sec_busy0))" -v o="$((o1 - sec_own0))" \
        'BEGIN { w = (t - t0) * 100; p = w > 0 ? (b - o) / w * 100 : 0; printf "%.0f", p < 0 ? 0 : p }')"
    echo "  [other processes used ${pct}% of one core during this section]"
    [ "$pct" -gt "$others_max" ] && others_max="$pct"
    sec_name=""
}
section() {
    section_end
    printf '\n== %s\n' "$*"
    sec_name="$*" sec_t0="$(date +%s.%N)" sec_busy0="$(busy_ticks)" sec_own0="$(own_ticks)"
}

# "4.3 MiB, 5.6 ms CPU": the own peak RSS and CPU time of a polled (-m) row.
own_of() {
    local k c
    k="$(tsvf "$1" 13)" c="$(tsvf "$1" 14)"
    [ -n "$k" ] && awk -v k="$k" -v c="$c" 'BEGIN { printf "%.1f MiB, %.1f ms CPU", k / 1024, c }'
}

# Start the stand-in model once; sets $port.
port=""
start_standin() {
    [ -n "$port" ] && return 0
    [ -x "$standin_bin" ] || { echo "  skipped: no $standin_bin"; return 1; }
    "$standin_bin" --port-file "$run/standin.port" >"$run/standin.out" 2>&1 &
    standin_pid=$!
    for _ in $(seq 100); do
        [ -s "$run/standin.port" ] && break
        sleep 0.05
    done
    port="$(head -n 1 "$run/standin.port" 2>/dev/null)"
    [ -n "$port" ] || { echo "  skipped: the stand-in did not start"; return 1; }
}

# Bytes in a baton home: "<store> <run files> <store files as they lie>".
# The store is baton.db once its WAL is checkpointed into it (done on a
# copy, with Python's sqlite3): what a turn keeps, apart from the WAL that
# baton leaves between commands (bounded by its checkpoint threshold). As
# they lie: baton.db + -wal + -shm. Without python3 both are the latter.
home_bytes() {
    local raw=0 runs=0 f db
    for f in "$1"/baton.db "$1"/baton.db-wal "$1"/baton.db-shm; do
        [ -f "$f" ] && raw=$((raw + $(stat -c %s "$f")))
    done
    db="$raw"
    if command -v python3 >/dev/null 2>&1 && [ -f "$1/baton.db" ]; then
        rm -rf "$run/ckpt" && mkdir -p "$run/ckpt" &&
            cp "$1/baton.db" "$run/ckpt/" &&
            { [ ! -f "$1/baton.db-wal" ] || cp "$1/baton.db-wal" "$run/ckpt/"; } &&
            python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
c.close()' "$run/ckpt/baton.db" 2>>"$run/disk.err" &&
            db="$(stat -c %s "$run/ckpt/baton.db")"
    fi
    if [ -d "$1/runs" ]; then
        runs=$(find "$1/runs" -type f -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
    fi
    echo "$db $runs $raw"
}

text_replay="$fx/codex/0.171.0/text.jsonl"
text_input="$fx/codex/0.171.0/text.input.jsonl"
# The same baton command for every codex turn: approval never and the
# model, as bench-drive and the fixture's recorded requests have them.
baton_turn=(run --json --approval never -m baton-test "$prompt")

# ---- 1a. fixed overhead with the fake coder --------------------------------

if want fixed; then
    section "fixed overhead of a turn: fake coder replaying fixtures/codex/0.171.0/text.jsonl"
    fixed_b=()
    [ -n "$baton_b" ] && fixed_b=("baton run (fake coder) at $vs_label" -r "baton run (fake coder)"
        -e "FAKE_CODER_REPLAY=$text_replay" -e "BATON_CODEX_BIN=$fake"
        -e "BATON_HOME=$run/home-fixed-b" -E "$run/fixed.err" -C "$run/work"
        -- "$baton_b" "${baton_turn[@]}" ";")
    "$bt/bench-time" -n 21 -w 3 -T "$tsv" \
        "fake coder alone" -i "$text_input" -e "FAKE_CODER_REPLAY=$text_replay" \
        -- "$fake" app-server --listen stdio:// ";" \
        "baton run (fake coder)" -e "FAKE_CODER_REPLAY=$text_replay" -e "BATON_CODEX_BIN=$fake" \
        -e "BATON_HOME=$run/home-fixed" -E "$run/fixed.err" -C "$run/work" \
        -- "$baton" "${baton_turn[@]}" ";" \
        "${fixed_b[@]}" \
        "baton --version" -r "fake coder alone" -- "$baton" --version ";" \
        "/bin/true" -- /bin/true
    echo "  (rss of a baton run is its own: the fake coder's peak RSS is the 'fake coder alone' row)"
    row "fixed overhead of a turn, fake coder (median of 21)" "$(ms "baton run (fake coder)")" \
        "fake coder alone: $(ms "fake coder alone")" "$(vs "baton run (fake coder)")" \
        "< 5 ms" fixed
    rss="$(tsvf "baton run (fake coder)" 8)"
    [ -n "$rss" ] && rss="$(awk -v k="$rss" 'BEGIN { printf "%.1f MiB", k / 1024 }')"
    frss="$(tsvf "fake coder alone" 8)"
    [ -n "$frss" ] && frss="$(awk -v k="$frss" 'BEGIN { printf "%.1f MiB", k / 1024 }')"
    row "peak RSS of baton itself (wait4 maxrss, fake coder)" "${rss:-failed}" \
        "fake coder alone: ${frss:-failed}" "-" "< 8 MiB" fixed
fi

# ---- 1a'. the same turn in a git repository: its two snapshots ------------------
# every turn in a git working tree snapshots it before and after (src/repo.h):
# libgit2 reads the tree through baton's own index cache, so the cost grows
# with the files there, stat'ed each time
make_repo() { # DIR FILES: a committed repository of FILES small files
    local d=$1 n=$2 i f
    mkdir -p "$d" && (cd "$d" && git init -q &&
        for ((i = 0; i < n / 100; i++)); do
            mkdir "d$i" && for ((f = 0; f < 100; f++)); do echo "line $f" >"d$i/f$f.txt"; done
        done && git add -A && git -c user.name=b -c user.email=b@example.org commit -qm files)
}
if want fixed; then
    section "a turn in a git repository: the snapshots before and after it"
    make_repo "$run/git-1k" 1000 && make_repo "$run/git-20k" 20000
    "$bt/bench-time" -n 21 -w 3 -T "$tsv" \
        "baton run, no git" -e "FAKE_CODER_REPLAY=$text_replay" -e "BATON_CODEX_BIN=$fake" \
        -e "BATON_HOME=$run/home-git" -E "$run/fixed.err" -C "$run/work" \
        -- "$baton" "${baton_turn[@]}" ";" \
        "baton run, git, 1,000 files" -r "baton run, no git" -e "FAKE_CODER_REPLAY=$text_replay" \
        -e "BATON_CODEX_BIN=$fake" -e "BATON_HOME=$run/home-git" -E "$run/fixed.err" \
        -C "$run/git-1k" -- "$baton" "${baton_turn[@]}" ";" \
        "baton run, git, 20,000 files" -r "baton run, no git" -e "FAKE_CODER_REPLAY=$text_replay" \
        -e "BATON_CODEX_BIN=$fake" -e "BATON_HOME=$run/home-git" -E "$run/fixed.err" \
        -C "$run/git-20k" -- "$baton" "${baton_turn[@]}" ";"
    for n in "1,000" "20,000"; do
        row "a turn in a git repository of $n files (two snapshots)" \
            "$(ms "baton run, git, $n files")" "no git: $(ms "baton run, no git")" \
            "$(vs "baton run, git, $n files")" "-" fixed
    done
fi

# ---- 1b. where the fixed turn's time goes ------------------------------------

if want steps; then
    section "where a turn's time goes: BATON_TRACE_PERF marks of 21 fake-coder turns (median, p90 of each step)"
    steps_b=()
    [ -n "$baton_b" ] && steps_b=("$vs_label=$baton_b")
    bash "$top/tests/bench/steps.sh" -n 21 -w 3 "$bt/bench-time" "$run/steps" "$fake" \
        "$text_replay" "${measured%% *}=$baton" "${steps_b[@]}"
fi

# ---- 1c/1d. real coders against the stand-in --------------------------------

if want codex; then
    section "codex 0.171.0 against the stand-in: one text turn"
    if ! codex="$(bash "$top/tests/scripts/install-codex.sh" 2>"$run/install-codex.err")"; then
        echo "  skipped: codex is not installed ($(tail -n 1 "$run/install-codex.err"))"
    elif start_standin; then
        launcher="${codex%%/node_modules/*}/node_modules/.bin/codex"
        cenv=()
        need_env cenv "$top/tests/live/codex-env.sh" "$run/codex-home" "$port"
        sdk_dir="$cache/npm-bench/node_modules/@openai/codex-sdk"
        # The newest @openai/codex-sdk (0.163.0) pins @openai/codex 0.163.0;
        # the optional platform packages (its own native codex) are left out:
        # codexPathOverride points it at the pinned 0.171.0 binary.
        sdk_version=0.163.0
        sdk=()
        if ! command -v node >/dev/null 2>&1; then
            echo "  @openai/codex-sdk skipped: node is not installed"
        elif [ "$(sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' "$sdk_dir/package.json" 2>/dev/null | head -n 1)" = "$sdk_version" ] ||
            npm install --prefix "$cache/npm-bench" --save-exact --no-audit --no-fund \
                --no-update-notifier --loglevel=error --omit=optional \
                "@openai/codex-sdk@$sdk_version" >"$run/npm-sdk.log" 2>&1; then
            sdk=(";" "@openai/codex-sdk $sdk_version" "${cenv[@]}" -E "$run/codex.err" -C "$run/work"
                -- "$(command -v node)" "$top/tests/bench/sdk-codex.mjs" "$sdk_dir" "$codex"
                baton-test "$prompt"
                ";" "node + import of the SDK, no turn" -r "@openai/codex-sdk $sdk_version"
                -- "$(command -v node)" --input-type=module -e "await import('$sdk_dir/dist/index.js')")
        else
            echo "  @openai/codex-sdk skipped: npm install failed ($(tail -n 1 "$run/npm-sdk.log"))"
        fi
        launcher_row=()
        if [ -x "$launcher" ]; then
            launcher_row=(";" "baton run (codex npm launcher)" "${cenv[@]}"
                -e "BATON_CODEX_BIN=$launcher" -e "BATON_HOME=$run/home-codex" -E "$run/codex.err"
                -C "$run/work" -- "$baton" "${baton_turn[@]}")
        else
            echo "  npm launcher row skipped: no $launcher"
        fi
        printf '%s\n' "$prompt" >"$run/prompt.txt"
        "$bt/bench-time" -n "$runs_real" -w 1 -T "$tsv" \
            "direct app-server client (bench-drive)" "${cenv[@]}" -E "$run/codex.err" -C "$run/work" \
            -- "$bt/bench-drive" codex -m baton-test "$prompt" "$codex" ";" \
            "baton run (codex native)" "${cenv[@]}" -e "BATON_CODEX_BIN=$codex" \
            -e "BATON_HOME=$run/home-codex" -E "$run/codex.err" -C "$run/work" \
            -- "$baton" "${baton_turn[@]}" ";" \
            "baton run (codex native), own RSS and CPU polled" -m 1 "${cenv[@]}" -e "BATON_CODEX_BIN=$codex" \
            -e "BATON_HOME=$run/home-codex" -E "$run/codex.err" -C "$run/work" \
            -r "baton run (codex native)" -- "$baton" "${baton_turn[@]}" \
            "${launcher_row[@]}" ";" \
            "codex exec --json" "${cenv[@]}" -i "$run/prompt.txt" -E "$run/codex.err" -C "$run/work" \
            -- "$codex" exec --json -m baton-test -s workspace-write --skip-git-repo-check \
            -c 'approval_policy="never"' "${sdk[@]}"
        d="direct app-server client (bench-drive)"
        row "codex turn: baton run vs direct client (median of $runs_real)" \
            "$(ms "baton run (codex native)")" "bench-drive: $(ms "$d")" \
            "$(vs_min "baton run (codex native)")" "< 5 ms" codex
        [ ${#launcher_row[@]} -gt 0 ] &&
            row "codex turn: baton run through the npm launcher" \
                "$(ms "baton run (codex npm launcher)")" "bench-drive: $(ms "$d")" \
                "$(vs_min "baton run (codex npm launcher)")" "< 5 ms" codex
        own="$(own_of "baton run (codex native), own RSS and CPU polled")"
        [ -n "$own" ] && row "baton itself on a codex turn: peak RSS, CPU time (polled every 2 ms)" \
            "$own" \
            "codex: $(awk -v k="$(tsvf "baton run (codex native)" 8)" 'BEGIN { printf "%.1f MiB", k / 1024 }')" \
            "-" "< 8 MiB" codex
        row "codex turn: codex exec --json (no client)" "-" "$(ms "codex exec --json")" \
            "$(vs "codex exec --json") vs bench-drive" "-" codex
        if [ ${#sdk[@]} -gt 0 ]; then
            s="@openai/codex-sdk $sdk_version"
            e="$(tsvf "codex exec --json" 4)" v="$(tsvf "$s" 4)"
            over_exec="-"
            [ -n "$e" ] && [ -n "$v" ] &&
                over_exec="$(awk -v a="$v" -v b="$e" 'BEGIN { printf "%+.1f ms", a - b }')"
            echo "  SDK adds $(vs "$s") a turn over the direct app-server client, $over_exec over codex exec --json (the process it runs)"
            row "codex turn: official SDK (@openai/codex-sdk $sdk_version)" "-" "$(ms "$s")" \
                "$(vs "$s") vs bench-drive; $over_exec vs codex exec" "-" codex
        fi
    fi
fi

if want pi; then
    section "pi 0.73.1 against the stand-in: one text turn"
    if ! pi="$(bash "$top/tests/scripts/install-pi.sh" 2>"$run/install-pi.err")"; then
        echo "  skipped: pi is not installed ($(tail -n 1 "$run/install-pi.err"))"
    elif start_standin; then
        penv=()
        need_env penv "$top/tests/live/pi-env.sh" "$run/pi-agent" "$port"
        pkg="$(cd "$(dirname "$(readlink -f "$pi")")/.." && pwd -P)"
        mkdir -p "$run/pi-agent/sessions/bench"
        "$bt/bench-time" -n "$runs_pi" -w 1 -T "$tsv" \
            "direct rpc client (bench-drive)" "${penv[@]}" -E "$run/pi.err" -C "$run/work" \
            -- "$bt/bench-drive" pi -p baton-standin -m baton-test -s "$run/pi-agent/sessions/bench" \
            "$prompt" "$pi" ";" \
            "baton run -c pi" "${penv[@]}" -e "BATON_PI_BIN=$pi" -e "BATON_HOME=$run/home-pi" \
            -E "$run/pi.err" -C "$run/work" \
            -- "$baton" run -c pi -m baton-standin/baton-test --json "$prompt" ";" \
            "baton run -c pi, own RSS and CPU polled" -m 1 -r "baton run -c pi" "${penv[@]}" \
            -e "BATON_PI_BIN=$pi" -e "BATON_HOME=$run/home-pi" -E "$run/pi.err" -C "$run/work" \
            -- "$baton" run -c pi -m baton-standin/baton-test --json "$prompt" ";" \
            "pi RpcClient (pi-coding-agent 0.73.1)" "${penv[@]}" -E "$run/pi.err" -C "$run/work" \
            -- "$(command -v node)" "$top/tests/bench/sdk-pi.mjs" "$pkg" baton-standin baton-test \
            "$run/pi-agent/sessions/bench" "$prompt" ";" \
            "pi --version" "${penv[@]}" -r "direct rpc client (bench-drive)" -- "$pi" --version ";" \
            "node + import of pi-coding-agent, no turn" -r "pi RpcClient (pi-coding-agent 0.73.1)" \
            -- "$(command -v node)" --input-type=module -e "await import('$pkg/dist/index.js')"
        d="direct rpc client (bench-drive)"
        row "pi turn: baton run vs direct client (median of $runs_pi)" "$(ms "baton run -c pi")" \
            "bench-drive: $(ms "$d")" "$(vs_min "baton run -c pi")" "< 5 ms" pi
        own="$(own_of "baton run -c pi, own RSS and CPU polled")"
        [ -n "$own" ] && row "baton itself on a pi turn: peak RSS, CPU time (polled every 2 ms)" \
            "$own" \
            "pi: $(awk -v k="$(tsvf "baton run -c pi" 8)" 'BEGIN { printf "%.1f MiB", k / 1024 }')" \
            "-" "< 8 MiB" pi
        s="pi RpcClient (pi-coding-agent 0.73.1)"
        echo "  RpcClient adds $(vs "$s") a turn over the direct rpc client"
        row "pi turn: pi's own RpcClient" "-" "$(ms "$s")" "$(vs "$s") vs bench-drive" "-" pi
    fi
fi

if want claude; then
    section "claude 2.1.332 against the stand-in: one text turn"
    if ! claude="$(bash "$top/tests/scripts/install-claude.sh" 2>"$run/install-claude.err")"; then
        echo "  skipped: claude is not installed ($(tail -n 1 "$run/install-claude.err"))"
    elif start_standin; then
        clenv=()
        need_env clenv "$top/tests/live/claude-env.sh" "$run/claude-config" "$port"
        # The reference: claude with baton's argv minus the session id (it
        # picks its own), the prompt as the same stream-json line from a
        # file; stdin EOF after it ends the process once the turn is done.
        printf '{"type":"user","message":{"role":"user","content":"%s"}}\n' "$prompt" \
            >"$run/claude-prompt.jsonl"
        "$bt/bench-time" -n "$runs_real" -w 1 -T "$tsv" \
            "claude -p stream-json, prompt from a file (no client)" "${clenv[@]}" \
            -i "$run/claude-prompt.jsonl" -E "$run/claude.err" -C "$run/work" \
            -- "$claude" -p --output-format stream-json --input-format stream-json --verbose \
            --include-partial-messages --permission-prompt-tool stdio ";" \
            "baton run -c claude" "${clenv[@]}" -e "BATON_CLAUDE_BIN=$claude" \
            -e "BATON_HOME=$run/home-claude" -E "$run/claude.err" -C "$run/work" \
            -- "$baton" run -c claude --json "$prompt" ";" \
            "baton run -c claude, own RSS and CPU polled" -m 1 -r "baton run -c claude" \
            "${clenv[@]}" -e "BATON_CLAUDE_BIN=$claude" -e "BATON_HOME=$run/home-claude" \
            -E "$run/claude.err" -C "$run/work" -- "$baton" run -c claude --json "$prompt"
        d="claude -p stream-json, prompt from a file (no client)"
        row "claude turn: baton run vs claude alone (median of $runs_real)" \
            "$(ms "baton run -c claude")" "claude: $(ms "$d")" "$(vs_min "baton run -c claude")" \
            "< 5 ms" claude
        own="$(own_of "baton run -c claude, own RSS and CPU polled")"
        [ -n "$own" ] && row "baton itself on a claude turn: peak RSS, CPU time (polled every 2 ms)" \
            "$own" \
            "claude: $(awk -v k="$(tsvf "baton run -c claude" 8)" 'BEGIN { printf "%.1f MiB", k / 1024 }')" \
            "-" "< 8 MiB" claude
    fi
fi

# ---- 2. throughput on the recorded pi stream --------------------------------

large="$cache/bench/large.jsonl"
gz="$fx/pi/0.73.1/large.jsonl.gz"
decompress_large() {
    if [ ! -s "$large" ] || [ "$gz" -nt "$large" ]; then
        gzip -dc "$gz" >"$large.tmp" && mv "$large.tmp" "$large"
    fi
}

if want throughput; then
    section "throughput: pi 0.73.1 recorded stream of a 200 KB answer (fixtures/pi/0.73.1/large.jsonl.gz)"
    decompress_large
    bytes="$(stat -c %s "$large")"
    echo "  $(awk -v b="$bytes" 'BEGIN { printf "%.1f MB", b / 1e6 }'), $(wc -l <"$large") lines"
    node_row=()
    command -v node >/dev/null 2>&1 &&
        node_row=(";" "Node readline + JSON.parse" -b "$bytes"
            -- "$(command -v node)" "$top/tests/bench/readlines-node.js" "$large")
    py_row=()
    command -v python3 >/dev/null 2>&1 &&
        py_row=(";" "Python json.loads per line" -b "$bytes" -- "$(command -v python3)" -c \
            'import json, sys
for line in open(sys.argv[1], "rb"):
    json.loads(line)' "$large")
    large_b=()
    [ -n "$baton_b" ] && large_b=(";" "baton run at $vs_label, own RSS and CPU polled" -m 1 -b "$bytes"
        -r "baton run, own RSS and CPU polled"
        -e "FAKE_CODER_REPLAY=$large" -e "BATON_PI_BIN=$fake" -e "PI_CODING_AGENT_DIR=$run/pi-fake"
        -e "BATON_HOME=$run/home-large-b" -E "$run/large.err" -C "$run/work"
        -- "$baton_b" run -c pi -m baton-standin/baton-test --json "[[large:200000]]")
    # the fake coder holds the whole replay in memory and classifies every
    # line with cJSON before writing: its row is the floor of baton's
    "$bt/bench-time" -n 9 -w 1 -T "$tsv" \
        "cJSON per line (bench-readlines)" -b "$bytes" -- "$bt/bench-readlines" "$large" ";" \
        "cat > /dev/null" -b "$bytes" -- /bin/cat "$large" ";" \
        "fake coder alone (replay to /dev/null)" -b "$bytes" -e "FAKE_CODER_REPLAY=$large" \
        -i "$fx/pi/0.73.1/large.input.jsonl" -- "$fake" --mode rpc ";" \
        "baton run -c pi --json (fake coder)" -b "$bytes" -e "FAKE_CODER_REPLAY=$large" \
        -r "fake coder alone (replay to /dev/null)" \
        -e "BATON_PI_BIN=$fake" -e "PI_CODING_AGENT_DIR=$run/pi-fake" \
        -e "BATON_HOME=$run/home-large" -E "$run/large.err" -C "$run/work" \
        -- "$baton" run -c pi -m baton-standin/baton-test --json "[[large:200000]]" ";" \
        "baton run, own RSS and CPU polled" -m 1 -r "baton run -c pi --json (fake coder)" \
        -e "FAKE_CODER_REPLAY=$large" -e "BATON_PI_BIN=$fake" -e "PI_CODING_AGENT_DIR=$run/pi-fake" \
        -e "BATON_HOME=$run/home-large" -E "$run/large.err" -C "$run/work" \
        -- "$baton" run -c pi -m baton-standin/baton-test --json "[[large:200000]]" \
        "${large_b[@]}" "${node_row[@]}" "${py_row[@]}"
    b="baton run -c pi --json (fake coder)"
    f="fake coder alone (replay to /dev/null)"
    p="baton run, own RSS and CPU polled"
    mbps() { awk -v v="$(tsvf "$1" 12)" 'BEGIN { if (v != "") printf "%.0f MB/s", v; else printf "failed" }'; }
    row "throughput, whole baton run -c pi --json on 42 MB of pi stdout (wall, median of 9)" \
        "$(mbps "$b")" \
        "fake coder alone $(mbps "$f"); readers of the file: cJSON $(mbps "cJSON per line (bench-readlines)"), Node $(mbps "Node readline + JSON.parse"), Python $(mbps "Python json.loads per line"), cat $(mbps "cat > /dev/null")" \
        "$(vs "$b") vs the fake coder alone" ">= 600 MB/s" throughput
    oc="$(tsvf "$p" 14)"
    if [ -n "$oc" ]; then
        rate="$(awk -v c="$oc" -v n="$bytes" 'BEGIN { if (c > 0) printf "%.0f MB/s a CPU second (%.1f ms CPU)", n / 1e6 / (c / 1e3), c }')"
        echo "  baton's own CPU time (schedstat, polled): $rate"
        row "throughput, baton's own CPU time on the same stream (schedstat polled every 2 ms)" \
            "$rate" "cJSON reader: $(tsvf "cJSON per line (bench-readlines)" 7) ms CPU" "-" \
            ">= 600 MB/s on one core" throughput
    fi
    own="$(tsvf "$p" 13)"
    [ -n "$own" ] && row "peak RSS of baton itself, 42 MB pi turn (VmHWM polled every 2 ms)" \
        "$(awk -v k="$own" 'BEGIN { printf "%.1f MiB", k / 1024 }')" \
        "fake coder (holds the whole replay): $(awk -v k="$(tsvf "$f" 8)" 'BEGIN { printf "%.1f MiB", k / 1024 }')" \
        "-" "< 8 MiB" throughput
fi

# ---- 3. added latency ------------------------------------------------------

if want latency; then
    section "added latency: coder writes a line -> the event is on stdout (300 deltas, 2 ms apart)"
    if command -v python3 >/dev/null 2>&1; then
        # text.jsonl with its deltas replaced by 300 stamped ones; the
        # completed message holds no stamp (lines with two are not counted).
        python3 - "$text_replay" "$run/latency.jsonl" <<'EOF'
import json, sys
src, dst = sys.argv[1], sys.argv[2]
lines = open(src).read().splitlines()
delta = [l for l in lines if '"item/agentMessage/delta"' in l][0]
out, done = [], False
for l in lines:
    if '"item/agentMessage/delta"' in l:
        if not done:
            m = json.loads(delta)
            for i in range(300):
                m["params"]["delta"] = "bt-stamp=@@STAMP@@ %03d " % i
                out.append(json.dumps(m, separators=(",", ":")))
            done = True
        continue
    out.append(l)
open(dst, "w").write("\n".join(out) + "\n")
EOF
        lat_b=()
        # a home of its own: an older baton refuses a newer store's schema
        [ -n "$baton_b" ] && lat_b=(";" "baton run --json at $vs_label" -- /usr/bin/env
            "BATON_HOME=$run/home-latency-b" "$baton_b" "${baton_turn[@]}")
        (cd "$run/work" && FAKE_CODER_STAMP=@@STAMP@@ FAKE_CODER_DELAY_MS=2 \
            FAKE_CODER_REPLAY="$run/latency.jsonl" BATON_CODEX_BIN="$fake" \
            BATON_HOME="$run/home-latency" "$bt/bench-latency" -n 7 -T "$run/latency.tsv" \
            "fake coder read directly (pipe)" -i "$text_input" \
            -- "$fake" app-server --listen stdio:// ";" \
            "baton run --json (fake coder)" -- "$baton" "${baton_turn[@]}" "${lat_b[@]}")
        l="baton run --json (fake coder)"
        lat() { awk -F'\t' -v l="$1" -v c="$2" '$1 == l { v = $c } END { print v }' "$run/latency.tsv"; }
        if [ -n "$(lat "$l" 5)" ]; then
            row "added latency, coder line -> event on stdout (p50 / p99, 2100 lines)" \
                "$(lat "$l" 3) / $(lat "$l" 5) us" \
                "fake read directly: $(lat "fake coder read directly (pipe)" 3) / $(lat "fake coder read directly (pipe)" 5) us" \
                "$(lat "$l" 7) / $(lat "$l" 8) us" "p99 < 1 ms" latency
        fi
    else
        echo "  skipped: python3 is not installed (it writes the replay)"
    fi
fi

# ---- 4. disk -----------------------------------------------------------------

if want disk; then
    section "disk: bytes kept per turn (store: baton.db with its WAL checkpointed; run files: runs/)"
    h="$run/home-disk"
    turn() {
        (cd "$run/work" && env FAKE_CODER_REPLAY="$text_replay" BATON_CODEX_BIN="$fake" \
            BATON_HOME="$h" "$baton" "${baton_turn[@]}" >/dev/null 2>>"$run/disk.err")
    }
    turn
    read -r s1 r1 _ <<<"$(home_bytes "$h")"
    for _ in $(seq 20); do turn; done
    read -r s2 r2 w2 <<<"$(home_bytes "$h")"
    st=$(((s2 - s1) / 20)) rt=$(((r2 - r1) / 20))
    tb="$(stat -c %s "$text_replay")"
    echo "  first turn (creates the store): store $s1 B, run files $r1 B"
    echo "  text turn (mean of 20 more): store +$st B, run files +$rt B ($tb B of coder stdout)"
    echo "  store files as they lie after the 21 turns: $w2 B (db + WAL + shm; $s2 B checkpointed)"
    row "disk per text turn (store + run files)" "$((st + rt)) B (store $st, runs $rt)" \
        "coder stdout $tb B" "x$(awk -v a=$((st + rt)) -v b="$tb" 'BEGIN { printf "%.2f", a / b }') of stdout" \
        "bounded (raw run files compressed)" disk
    decompress_large
    lb="$(stat -c %s "$large")"
    (cd "$run/work" && env FAKE_CODER_REPLAY="$large" BATON_PI_BIN="$fake" \
        PI_CODING_AGENT_DIR="$run/pi-fake" BATON_HOME="$h" \
        "$baton" run -c pi -m baton-standin/baton-test --json "[[large:200000]]" >/dev/null 2>>"$run/disk.err")
    read -r s3 r3 w3 <<<"$(home_bytes "$h")"
    echo "  42 MB pi turn: store +$((s3 - s2)) B, run files +$((r3 - r2)) B ($lb B of coder stdout)"
    echo "  store files as they lie after it: $w3 B"
    row "disk per 42 MB pi turn (store + run files)" \
        "$((s3 - s2 + r3 - r2)) B (store $((s3 - s2)), runs $((r3 - r2)))" "coder stdout $lb B" \
        "x$(awk -v a=$((s3 - s2 + r3 - r2)) -v b="$lb" 'BEGIN { printf "%.2f", a / b }') of stdout" \
        "bounded (raw run files compressed)" disk
fi

# ---- in-process benchmarks -------------------------------------------------

if want pipeline; then
    section "in-process read path (bench-pipeline)"
    "$bt/bench-pipeline"
    if command -v node >/dev/null 2>&1; then
        node "$top/tests/bench/reference-node.js" "$gz"
    else
        echo "  reference: node is not installed, skipped"
    fi
fi
if want store; then
    section "store browsing (bench-store)"
    "$bt/bench-store"
fi

# ---- serve ------------------------------------------------------------------

if want serve; then
    section "baton serve: coder line -> SSE frame (fake coder, stamped deltas 10 ms apart)"
    if command -v python3 >/dev/null 2>&1; then
        sv="$run/serve.tsv"
        sb=(python3 "$top/tests/bench/serve-bench.py" --baton "$baton" --fake "$fake"
            --scratch "$run" --tsv "$sv")
        "${sb[@]}" --label one --runs 1 --per-conv 1 --all 0
        "${sb[@]}" --label light --runs 2 --per-conv 2 --all 1
        "${sb[@]}" --label load
        svf() { awk -F'\t' -v l="$1" -v k="$2" '$1 == l && $2 == k { v = $3 } END { print v }' "$sv"; }
        svms() { awk -v v="$(svf "$1" "$2")" 'BEGIN { if (v == "") print "-"; else printf "%.2f ms", v / 1e6 }'; }
        # what baton adds: the followers' figure minus the coder's own,
        # read directly beside it under the same load
        svadd() { awk -v a="$(svf "$1" "$2")" -v b="$(svf "$1" "ref_$2")" \
            'BEGIN { if (a == "" || b == "") print "-"; else printf "%.2f ms", (a - b) / 1e6 }'; }
        if [ -s "$sv" ]; then
            row "coder line -> SSE frame, 1 run, 1 follower (+ the driver's /v1/events)" \
                "p50 $(svms one p50), p99 $(svms one p99) (baton run beside it: p99 $(svms one cli_p99))" \
                "coder read directly beside it: p50 $(svms one ref_p50), p99 $(svms one ref_p99)" \
                "p50 +$(svadd one p50), p99 +$(svadd one p99)" "added p99 < 1 ms" serve
            row "the same, 2 runs at once, 5 followers" \
                "p50 $(svms light p50), p99 $(svms light p99) (baton run beside it: p99 $(svms light cli_p99))" \
                "coder read directly beside it: p50 $(svms light ref_p50), p99 $(svms light ref_p99)" \
                "p50 +$(svadd light p50), p99 +$(svadd light p99)" "added p99 < 1 ms" serve
            row "the same, 20 runs x 3 turns, 103 followers, 2 cores saturated" \
                "p50 $(svms load p50), p99 $(svms load p99); $(svf load lost) events lost" \
                "coder read directly beside it: p50 $(svms load ref_p50), p99 $(svms load ref_p99)" \
                "p50 +$(svadd load p50), p99 +$(svadd load p99)" "p99 < 50 ms; 0 lost" serve
            row "baton serve under that load" \
                "peak RSS $(awk -v k="$(svf load hwm_kib)" 'BEGIN { printf "%.1f MiB", k / 1024 }'), CPU $(svf load cpu_pct)% of a core (peak $(svf load cpu_peak_pct)%)" \
                "-" "-" "100 runs under 50 MiB, a core not saturated" serve
        fi
    else
        echo "  skipped: python3 is not installed"
    fi
fi

# ---- control ----------------------------------------------------------------

if want control; then
    section "control request -> the coder (fake coder interrupted, 100 samples each way)"
    if command -v python3 >/dev/null 2>&1; then
        cv="$run/control.tsv"
        python3 "$top/tests/bench/control-bench.py" --baton "$baton" --fake "$fake" \
            --scratch "$run" --tsv "$cv" --label control
        cvf() { awk -F'\t' -v k="$1" '$2 == k { v = $3 } END { print v }' "$cv"; }
        if [ -s "$cv" ]; then
            row "control request stored -> the coder reads it" \
                "p50 $(cvf store_p50_ms) ms, p99 $(cvf store_p99_ms) ms" \
                "baton cancel spawned: p50 $(cvf cli_p50_ms) ms, p99 $(cvf cli_p99_ms) ms" "-" \
                "p99 < 5 ms" control
        fi
    else
        echo "  skipped: python3 is not installed"
    fi
fi

# ---- summary -----------------------------------------------------------------

section_end
if [ -s "$summary" ]; then
    printf '\n== summary (baton %s; other processes used up to %s%% of one core during a section)\n' \
        "$measured" "$others_max"
    echo "| figure | baton | reference | difference | DESIGN.md target | command |"
    echo "|---|---|---|---|---|---|"
    cat "$summary"
fi
exit 0
