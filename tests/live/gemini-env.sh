#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# gemini-env.sh: prepare a private HOME for the Gemini CLI that talks only to
# baton-standin on 127.0.0.1, for live tests that run the real gemini
# (gemini --acp -m MODEL) offline.
#
# usage: gemini-env.sh DIR PORT [MAX_ATTEMPTS]
#   DIR           directory to create (made absolute), used as HOME: gemini
#                 keeps its settings in DIR/.gemini/settings.json and its
#                 sessions under DIR/.gemini/tmp/
#   PORT          port of a running baton-standin
#   MAX_ATTEMPTS  gemini's attempts per model request (general.maxAttempts;
#                 its default retries a 5xx or 429 for a long while): 1 for
#                 tests that want a failure at once; its default when not
#                 given
#
# Prints the environment to use, one KEY=VALUE a line:
#   HOME=DIR
#   GEMINI_API_KEY=baton-standin-no-key           (any value; the stand-in has
#                                                  no auth, but gemini wants one)
#   GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:PORT  (gemini adds /v1beta/models/…)
#   GEMINI_CLI_NO_RELAUNCH=true                   (no second Node process with
#                                                  a bigger heap)
# e.g.  env $(tests/live/gemini-env.sh "$d" "$port" 1) gemini --acp -m baton-test
# DIR/.gemini/settings.json is rewritten on every call: auth type
# gemini-api-key (without it the base URL makes gemini pick an auth type it
# then rejects: "Invalid auth method selected.", exit 41), no folder trust
# prompt, no usage statistics, telemetry, auto-update or update notice, no
# loop detection (a scripted repetitive answer would otherwise be cut with a
# "Loop detected" warning). Existing sessions in DIR are kept.
set -euo pipefail

ENV_TAG=gemini-env
# shellcheck source=tests/live/acp-env-args.sh
. "$(dirname "$0")/acp-env-args.sh"

write_settings() {
    local attempts="$1" general
    general='"enableAutoUpdate": false, "enableAutoUpdateNotification": false'
    [ -z "$attempts" ] || general="$general, \"maxAttempts\": $attempts"
    cat <<EOF
{
  "security": {
    "auth": {"selectedType": "gemini-api-key"},
    "folderTrust": {"enabled": false}
  },
  "privacy": {"usageStatisticsEnabled": false},
  "general": {$general},
  "telemetry": {"enabled": false},
  "model": {"disableLoopDetection": true}
}
EOF
}

main() {
    if [ $# -lt 2 ] || [ $# -gt 3 ]; then
        env_die "usage: gemini-env.sh DIR PORT [MAX_ATTEMPTS]"
    fi
    local dir port="$2" attempts="${3:-}"
    env_port "$port"
    [ -z "$attempts" ] || [[ "$attempts" =~ ^[1-9][0-9]?$ ]] || env_die "bad attempt count '$attempts'"
    dir="$(env_dir "$1" .gemini)"
    write_settings "$attempts" >"$dir/.gemini/settings.json"
    printf 'HOME=%s\nGEMINI_API_KEY=baton-standin-no-key\n' "$dir"
    printf 'GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:%s\nGEMINI_CLI_NO_RELAUNCH=true\n' "$port"
}

main "$@"
