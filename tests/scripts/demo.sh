#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# demo.sh: the main job, end to end on a fresh Debian machine: build baton,
# then hold a real two-turn conversation through the real codex CLI and show
# the stored transcript.
#
# With a model reachable (codex on PATH and logged in, or OPENAI_API_KEY set)
# the conversation goes to that model, in the default baton home. Otherwise
# the pinned codex CLI from npm talks to baton's local stand-in model
# (tests/standin) on 127.0.0.1, in a separate demo home; the script says so.
#
# Installing and building print one line each; their output goes to logs
# under $BATON_CACHE/logs (shown when a step fails). HOME may be anywhere,
# /tmp too. A step that fails stops the script at once with its reason: the
# demo never goes on with the coder's own home in place of its own.
#
# usage: demo.sh [PROMPT]
# env:   BATON_CACHE  the cache, logs and the demo's homes (default
#                     ~/.cache/baton)
set -euo pipefail

top="$(cd "$(dirname "$0")/../.." && pwd -P)"
build="$top/build"
prompt="${1:-Say hello banana}"
cache="${BATON_CACHE:-$HOME/.cache/baton}"

die() {
    echo "demo: $*" >&2
    exit 1
}

bash "$top/tests/scripts/deps.sh"
mkdir -p "$cache/logs"
log="$cache/logs/build.log"
printf 'demo: building baton into %s (log: %s)... ' "$build" "$log" >&2
if bash "$top/tests/scripts/build.sh" "$build" >"$log" 2>&1; then
    echo "done" >&2
else
    echo "failed; the end of $log:" >&2
    tail -n 40 "$log" | sed 's/^/    /' >&2
    exit 1
fi
baton="$build/baton"

model_reachable() {
    command -v codex >/dev/null 2>&1 || return 1
    [ -n "${OPENAI_API_KEY:-}" ] && return 0
    [ -f "${CODEX_HOME:-$HOME/.codex}/auth.json" ]
}

standin_pid=
cleanup() { [ -n "$standin_pid" ] && kill "$standin_pid" 2>/dev/null || true; }
trap cleanup EXIT

if model_reachable; then
    echo "demo: using your codex CLI and its model" >&2
else
    echo "demo: no model is reachable: using the real codex CLI (npm @openai/codex, pinned)" >&2
    echo "demo: against baton's local stand-in model endpoint on 127.0.0.1" >&2
    BATON_CODEX_BIN="$(bash "$top/tests/scripts/install-codex.sh")" ||
        die "the codex CLI could not be installed (its reason is above)"
    export BATON_CODEX_BIN
    portfile="$cache/demo-standin.port"
    rm -f "$portfile"
    "$build/tests/standin/baton-standin" --port-file "$portfile" >/dev/null &
    standin_pid=$!
    for _ in $(seq 100); do [ -s "$portfile" ] && break; sleep 0.05; done
    port="$(cat "$portfile" 2>/dev/null || true)"
    rm -f "$portfile"
    [ -n "$port" ] || die "the stand-in model did not start"
    # the codex home of the demo, talking only to the stand-in; a command
    # substitution, not `done < <(...)`, whose failure nobody would see
    codex_env="$(bash "$top/tests/live/codex-env.sh" "$cache/demo-codex-home" "$port")" ||
        die "cannot make the demo's codex home in $cache/demo-codex-home (the reason is above)"
    while IFS= read -r kv; do export "${kv?}"; done <<<"$codex_env"
    case "${CODEX_HOME:-}" in
    "$cache"/* | "$(cd "$cache" && pwd -P)"/*) ;;
    *) die "codex-env.sh gave no codex home of the demo's (CODEX_HOME='${CODEX_HOME:-}')" ;;
    esac
    export BATON_HOME="$cache/demo-home"
    echo "demo: conversations of this demo are stored in $BATON_HOME" >&2
fi

echo "\$ baton run \"$prompt\"" >&2
"$baton" run "$prompt"
conv="$("$baton" ls --json --limit 1 | sed -n 's/^{"id":"\([0-9a-z]*\)".*/\1/p')"
[ -n "$conv" ] || die "baton ls names no conversation"
echo >&2
echo "\$ baton send $conv \"And again?\"" >&2
"$baton" send "$conv" "And again?"
echo >&2
echo "\$ baton show $conv" >&2
"$baton" show "$conv"
echo >&2
echo "demo: done. Next:" >&2
if [ -n "${standin_pid:-}" ]; then
    echo "  BATON_HOME=$BATON_HOME $baton ls    # this demo's conversations (show CONV reads one)" >&2
fi
echo "  $baton coders    # the coders on your PATH, and their versions (the demo's codex is in $cache, not there)" >&2
echo "  $baton --help    # every command; README.md, Usage, has examples" >&2
