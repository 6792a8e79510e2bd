#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# drift.sh: the drift check. For each coder: the newest release on npm
# (`npm view PKG version`) against the pinned one (the version variable of
# tests/scripts/install-<coder>.sh); when newer, that release installed into
# a scratch prefix (never the pinned cache), the coder's live suite run
# against it (tests/live, the real CLI and the stand-in model), and what
# changed: for codex, its `app-server generate-json-schema` digested
# (tests/scripts/drift.py) and compared with the one saved beside the
# pinned fixtures (fixtures/codex/<pin>/app-server-schema.txt); for every
# coder, the message types and fields in the raw output of the live runs
# that the pinned fixtures' recordings do not have (and the message types
# they have that the live runs did not show). pi is its 1.x package
# (@earendil-works/pi-coding-agent, under the Node 22 of
# install-node22.sh, as install-pi.sh --v1 does); 0.x's newest is only named.
#
# Not part of test.sh or CI: it needs the newest releases, which change
# under it, and the network to npm. It never fails the build: exit 0
# whatever it finds (an unreachable npm, a release that fails to install or
# to pass its suite are in the report); 2 only for a usage error.
# docs/testing.md, "A new coder version", says what to do with the report.
#
# usage: drift.sh [--dir DIR] [--force] [CODER...]
#   CODER    codex pi claude gemini opencode copilot (default: all, in turn)
#   --force  check a newest release that is the pin too: a self-test of the
#            check, whose differences are then only those of the live
#            suite's scenarios and the recorded cases
#   --dir    the scratch directory (default ${BATON_CACHE:-~/.cache/baton}/drift): the
#            install prefixes npm-<coder>/ (kept: a second run installs
#            nothing), and per coder live-<coder>/ (the live suite's kept
#            scratch, emptied first), <coder>.live.log, <coder>.shapes.txt;
#            the report is also written to report.txt (about 2 GB with
#            every coder installed)
# Builds baton into build/ first (tests/scripts/build.sh) when needed.
set -uo pipefail

top="$(cd "$(dirname "$0")/../.." && pwd -P)"
# shellcheck source=tests/scripts/lines.sh
source "$top/tests/scripts/lines.sh"
scripts="$top/tests/scripts"
build="$top/build"
dir="${BATON_CACHE:-$HOME/.cache/baton}/drift"
all=(codex pi claude gemini opencode copilot)

usage() {
    sed -n 's/^# \{0,1\}//;/^usage:/,/^Builds/p' "$0" >&2
    exit 2
}

coders=()
force=""
while [ $# -gt 0 ]; do
    case "$1" in
    --dir)
        if [ $# -lt 2 ] || [ -z "$2" ]; then usage; fi
        dir="$2"
        shift 2
        ;;
    --force)
        force=1
        shift
        ;;
    -h | --help) usage ;;
    -*) usage ;;
    *)
        [[ " ${all[*]} " == *" $1 "* ]] || {
            echo "drift: unknown coder '$1' (one of: ${all[*]})" >&2
            usage
        }
        coders+=("$1")
        shift
        ;;
    esac
done
[ ${#coders[@]} -gt 0 ] || coders=("${all[@]}")
if ! mkdir -p "$dir" || ! dir="$(cd "$dir" && pwd -P)"; then
    echo "drift: cannot create '$dir'" >&2
    exit 2
fi

# ---- per coder: package, pin, install, live program ----------------------

package_of() {
    case "$1" in
    codex) echo @openai/codex ;;
    pi) echo @earendil-works/pi-coding-agent ;;
    claude) echo @anthropic-ai/claude-code ;;
    gemini) echo @google/gemini-cli ;;
    opencode) echo opencode-ai ;;
    copilot) echo @github/copilot ;;
    esac
}

# The pinned version: the install script's version variable (for pi, the
# 1.x line's `version=` of install_v1; pi0: install_v0's).
pin_of() {
    local f="$scripts/install-${1%0}.sh"
    if [ "$1" = pi ]; then
        sed -n 's/.*package=@earendil-works\/pi-coding-agent version=\([^ ]*\).*/\1/p' "$f"
    elif [ "$1" = pi0 ]; then # install_v0's
        sed -n 's/.*package=@mariozechner\/pi-coding-agent version=\([^ ]*\).*/\1/p' "$f"
    else
        sed -n "s/^${1^^}_VERSION=\\([^ ]*\\)\$/\\1/p" "$f"
    fi | head -n 1
}

# The newest release on npm, or "" with the reason in $dir/npm-view.err.
newest_of() {
    timeout 120 npm view --fetch-retries=1 --no-update-notifier "$1" version \
        2>"$dir/npm-view.err" </dev/null | tail -n 1
}

# Install VERSION of coder into its scratch prefix; the path to run on
# stdout, npm's complaint in $dir/<coder>.install.err.
install_newest() { # CODER VERSION
    local args=()
    [ "$1" = pi ] && args=(--v1)
    BATON_DRIFT_VERSION="$2" bash "$scripts/install-$1.sh" "${args[@]}" "$dir/npm-$1" \
        2>"$dir/$1.install.err"
}

# ---- report ------------------------------------------------------------

report="$dir/report.txt"
: >"$report"
say() { printf '%s\n' "$*" | tee -a "$report"; }
note() { printf 'drift: %s\n' "$*" >&2; }

built=""
ensure_build() {
    [ -z "$built" ] || return "$built"
    note "building baton in $build (log: $dir/build.log)"
    if bash "$scripts/build.sh" "$build" >"$dir/build.log" 2>&1; then built=0; else built=1; fi
    return "$built"
}

# Run the coder's live suite against bin; sets live_result (one line) and
# live_failures (one "  name: first error" line per failing scenario).
run_live() { # CODER BIN
    local coder="$1" bin="$2" prog args=() var log="$dir/$1.live.log" rc
    prog="$build/tests/live/live-$coder"
    var="BATON_TEST_${coder^^}_BIN"
    if [ "$coder" = pi ]; then
        var=BATON_TEST_PI1_BIN
        args=(BATON_TEST_PI1_BIN)
    fi
    live_failures=""
    if ! ensure_build || [ ! -x "$prog" ]; then
        live_result="not run: baton did not build (see $dir/build.log)"
        return
    fi
    rm -rf "$dir/live-$coder"
    mkdir -p "$dir/live-$coder"
    note "$coder: live suite against $bin (log: $log)"
    local start=$SECONDS
    env "$var=$bin" BATON_LIVE_KEEP="$dir/live-$coder" timeout 1800 "$prog" "${args[@]}" \
        >"$log" 2>&1 </dev/null
    rc=$?
    local took=$((SECONDS - start))
    local counts
    counts="$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1 passed/p' "$log" | tail -n 1)"
    case $rc in
    0) live_result="passed (${counts:-all}, ${took} s)" ;;
    77) live_result="skipped: $(head -n 1 "$log")" ;;
    124) live_result="failed: timed out after ${took} s" ;;
    *)
        live_result="failed (exit $rc, ${took} s)"
        # cmocka: "[ RUN      ] name", "[  ERROR   ] --- why", "[  FAILED  ] name"
        live_failures="$(awk '
            /^\[ RUN      \] / { t = $4; why[t] = "" }
            /^\[  ERROR   \] --- / && t != "" && why[t] == "" { sub(/^\[  ERROR   \] --- /, ""); why[t] = $0 }
            /^\[  FAILED  \] [A-Za-z_0-9]+$/ && !seen[$4]++ { printf "  %s: %s\n", $4, (why[$4] == "" ? "(see the log)" : why[$4]) }
        ' "$log")"
        ;;
    esac
}

# The recordings of the pinned fixtures: coder output, not the expected
# events (*.events.jsonl) nor the client's input (*.input.jsonl).
fixture_recordings() { # CODER PIN
    local f
    for f in "$top/fixtures/$1/$2"/*.jsonl "$top/fixtures/$1/$2"/*.jsonl.gz; do
        [ -f "$f" ] || continue
        case "$f" in *.events.jsonl | *.input.jsonl) continue ;; esac
        printf '%s\n' "$f"
    done
}

# The raw outputs the live suite kept under DIR, one path a line, sorted.
live_recordings() { # DIR
    find "$1" -path '*/baton-home/runs/*.out.zst' | sort
}

# The message types and fields of the live runs that the pinned fixtures
# lack (+), and the message types of the fixtures the runs did not show (-).
shape_drift() { # CODER PIN
    local coder="$1" pin="$2" runs fixtures
    runs=()
    if [ -d "$dir/live-$coder" ] && ! lines_of runs live_recordings "$dir/live-$coder"; then
        say "  messages: cannot list the live suite's recordings in $dir/live-$coder"
        return
    fi
    lines_of fixtures fixture_recordings "$coder" "$pin"
    if [ ${#runs[@]} -eq 0 ]; then
        say "  messages: no recordings of the newest (the live suite made no runs)"
        return
    fi
    if [ ${#fixtures[@]} -eq 0 ]; then
        say "  messages: no pinned recordings under fixtures/$coder/$pin/ to compare with"
        return
    fi
    python3 "$scripts/drift.py" shapes "${fixtures[@]}" >"$dir/$coder.pinned-shapes.txt" 2>/dev/null
    python3 "$scripts/drift.py" shapes "${runs[@]}" >"$dir/$coder.shapes.txt" 2>/dev/null
    local d
    d="$(python3 "$scripts/drift.py" diff "$dir/$coder.pinned-shapes.txt" "$dir/$coder.shapes.txt" |
        awk '/^\+ / || /^~ / || (/^- / && NF == 2)')"
    say "  messages: ${#runs[@]} runs of the newest against ${#fixtures[@]} pinned recordings"
    if [ -z "$d" ]; then
        say "    nothing new"
    else
        say "    (+ seen only in the newest's runs; - a message type only the pinned recordings have)"
        while IFS= read -r line; do say "    $line"; done <<<"$d"
    fi
}

# codex: its schema digest against the saved one.
schema_drift() { # BIN PIN
    local bin="$1" pin="$2" saved="$top/fixtures/codex/$2/app-server-schema.txt"
    local home="$dir/codex-schema-home"
    if [ ! -f "$saved" ]; then
        say "  schema: no saved schema (fixtures/codex/$pin/app-server-schema.txt)"
        return
    fi
    rm -rf "$home"
    mkdir -p "$home"
    if ! CODEX_HOME="$home" HOME="$home" "$bin" app-server generate-json-schema \
        --out "$home/schema" >"$dir/codex-schema.log" 2>&1 </dev/null; then
        say "  schema: generate-json-schema failed: $(tail -n 1 "$dir/codex-schema.log")"
        return
    fi
    python3 "$scripts/drift.py" schema-digest "$home/schema" >"$dir/codex.schema.txt" || {
        say "  schema: the generated schema could not be read"
        return
    }
    local d added removed changed
    d="$(python3 "$scripts/drift.py" diff "$saved" "$dir/codex.schema.txt")"
    added=$(grep -c '^+ ' <<<"$d")
    removed=$(grep -c '^- ' <<<"$d")
    changed=$(grep -c '^~ ' <<<"$d")
    say "  schema (generate-json-schema, against fixtures/codex/$pin/app-server-schema.txt):"
    say "    $added lines added, $removed removed, $changed changed (digest: $dir/codex.schema.txt)"
    grep -q '^[-+] method ' <<<"$d" && {
        say "    methods:"
        grep '^[-+] method ' <<<"$d" | while IFS= read -r line; do say "      $line"; done
    }
    [ "$((added + removed + changed))" -gt 0 ] || return
    say "    types and fields:"
    grep -v '^[-+] method \|^no difference' <<<"$d" | while IFS= read -r line; do say "      $line"; done
}

check() { # CODER
    local coder="$1" pkg pin newest bin
    pkg="$(package_of "$coder")"
    pin="$(pin_of "$coder")"
    say ""
    say "== $coder ($pkg)"
    say "  pinned: ${pin:-unknown (no version variable in tests/scripts/install-$coder.sh)}"
    newest="$(newest_of "$pkg")"
    if [ -z "$newest" ]; then
        say "  newest: unknown: npm unreachable or the package not found ($(grep -m 1 -i 'err' "$dir/npm-view.err" || echo 'npm view printed nothing'))"
        return
    fi
    say "  newest: $newest"
    if [ "$coder" = pi ]; then
        local old
        old="$(newest_of @mariozechner/pi-coding-agent)"
        say "  (the 0.x package @mariozechner/pi-coding-agent: newest ${old:-unknown}, pinned $(pin_of pi0); not checked)"
    fi
    if [ "$newest" = "$pin" ]; then
        if [ -z "$force" ]; then
            say "  no newer release"
            return
        fi
        say "  no newer release; checked anyway (--force): what differs below is the"
        say "  live suite's scenarios against the recorded cases, not drift"
    fi
    note "$coder: installing $pkg@$newest into $dir/npm-$coder"
    if ! bin="$(install_newest "$coder" "$newest")" || [ -z "$bin" ]; then
        say "  install: failed: $(grep -v '^\s*$' "$dir/$coder.install.err" | tail -n 1)"
        local why
        why="$(grep -m 2 'npm error' "$dir/$coder.install.err" | tail -n 1 | sed 's/^ *//')"
        [ -z "$why" ] || say "    $why"
        say "    (the whole message: $dir/$coder.install.err)"
        return
    fi
    say "  installed: $bin"
    run_live "$coder" "$bin"
    say "  live suite: $live_result"
    [ -z "$live_failures" ] || while IFS= read -r line; do say "  $line"; done <<<"$live_failures"
    [ "$coder" != codex ] || schema_drift "$bin" "$pin"
    shape_drift "$coder" "$pin"
}

say "drift check, $(date -u '+%Y-%m-%d %H:%M UTC'), scratch $dir"
for c in "${coders[@]}"; do
    check "$c"
done
note "report: $report"
exit 0
