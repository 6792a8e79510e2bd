#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# claude-env.sh: prepare a Claude Code config directory that talks only to
# baton-standin on 127.0.0.1, for live tests that run the real claude CLI
# (claude -p --input-format stream-json ...) offline.
#
# usage: claude-env.sh DIR PORT [MAX_RETRIES]
#   DIR          config directory to create (made absolute): claude keeps its
#                settings, ~/.claude.json and transcripts
#                (DIR/projects/<cwd with / as ->/<session>.jsonl) there
#   PORT         port of a running baton-standin
#   MAX_RETRIES  claude's retries of a failed API request (its default is 10,
#                about 3 minutes of backoff): 0 for tests that want a failure
#                at once; left unset when not given
#
# Prints the environment to use, one KEY=VALUE a line:
#   ANTHROPIC_BASE_URL=http://127.0.0.1:PORT   (claude POSTs /v1/messages)
#   ANTHROPIC_API_KEY=baton-standin-no-key     (any value; the stand-in has
#                                               no auth, but claude wants one)
#   CLAUDE_CONFIG_DIR=DIR
#   HOME=DIR/home                              (no user dotfiles)
#   CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 (no update checks, no metrics)
#   DISABLE_TELEMETRY=1 DISABLE_ERROR_REPORTING=1 DISABLE_AUTOUPDATER=1
#   CLAUDE_CODE_MAX_RETRIES=N                  (only with MAX_RETRIES)
# e.g.  env $(tests/live/claude-env.sh "$d" "$port" 0) claude -p ...
# DIR/.claude.json, when absent, is written with what claude's interactive
# UI (baton handoff) would otherwise ask first: onboarding done, the key
# above approved (claude keeps its last 20 characters). A project directory
# still needs its trust answer there (projects.<dir>.hasTrustDialogAccepted):
# the live handoff test adds it. Print mode (-p) asks none of these.
# IS_SANDBOX is never set: as root claude then refuses bypassPermissions,
# which is what baton must report (tests that want bypass set it themselves).
set -euo pipefail

die() {
    printf 'claude-env: %s\n' "$*" >&2
    exit 1
}

main() {
    if [ $# -lt 2 ] || [ $# -gt 3 ]; then
        die "usage: claude-env.sh DIR PORT [MAX_RETRIES]"
    fi
    local dir="$1" port="$2" retries="${3:-}"
    if ! [[ "$port" =~ ^[0-9]{1,5}$ ]] || [ "$port" -lt 1 ] || [ "$port" -gt 65535 ]; then
        die "bad port '$port'"
    fi
    [ -z "$retries" ] || [[ "$retries" =~ ^[0-9]{1,2}$ ]] || die "bad retry count '$retries'"
    [[ "$dir" = /* ]] || dir="$PWD/$dir"
    mkdir -p "$dir/home" || die "cannot create '$dir'"
    dir="$(cd "$dir" && pwd -P)"
    # The path goes into KEY=VALUE lines unquoted.
    [[ "$dir" =~ ^/[A-Za-z0-9._/+-]*$ ]] || die "unsupported characters in '$dir'"
    chmod 700 "$dir"
    [ -e "$dir/.claude.json" ] || printf '%s\n' '{"hasCompletedOnboarding":true,"theme":"dark",' \
        '"customApiKeyResponses":{"approved":["baton-standin-no-key"],"rejected":[]}}' \
        >"$dir/.claude.json"
    printf 'ANTHROPIC_BASE_URL=http://127.0.0.1:%s\nANTHROPIC_API_KEY=baton-standin-no-key\n' "$port"
    printf 'CLAUDE_CONFIG_DIR=%s\nHOME=%s/home\n' "$dir" "$dir"
    printf 'CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1\nDISABLE_TELEMETRY=1\n'
    printf 'DISABLE_ERROR_REPORTING=1\nDISABLE_AUTOUPDATER=1\n'
    [ -z "$retries" ] || printf 'CLAUDE_CODE_MAX_RETRIES=%s\n' "$retries"
}

main "$@"
