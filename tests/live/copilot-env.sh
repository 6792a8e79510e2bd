#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# copilot-env.sh: prepare a private home for the GitHub Copilot CLI in
# bring-your-own-key mode that talks only to baton-standin on 127.0.0.1 (no
# GitHub login), for live tests that run the real copilot
# (copilot --acp --no-auto-update) offline.
#
# usage: copilot-env.sh DIR PORT [MODEL]
#   DIR    directory to create (made absolute): COPILOT_HOME=DIR (config and
#          sessions) and HOME=DIR/home (copilot unpacks its runtime into
#          HOME/.cache/copilot on first run)
#   PORT   port of a running baton-standin
#   MODEL  model id (default baton-test); letters, digits and ._:- only
#
# Prints the environment to use, one KEY=VALUE a line:
#   COPILOT_HOME=DIR HOME=DIR/home
#   COPILOT_OFFLINE=true                        (no GitHub API, no telemetry)
#   COPILOT_PROVIDER_BASE_URL=http://127.0.0.1:PORT/v1  (Chat Completions)
#   COPILOT_PROVIDER_API_KEY=baton-standin-no-key       (any value)
#   COPILOT_MODEL=MODEL
#   COPILOT_AUTO_UPDATE=false
# e.g.  env $(tests/live/copilot-env.sh "$d" "$port") copilot --acp --no-auto-update
set -euo pipefail

ENV_TAG=copilot-env
# shellcheck source=tests/live/acp-env-args.sh
. "$(dirname "$0")/acp-env-args.sh"

main() {
    if [ $# -lt 2 ] || [ $# -gt 3 ]; then
        env_die "usage: copilot-env.sh DIR PORT [MODEL]"
    fi
    local dir port="$2" model="${3:-baton-test}"
    env_port "$port"
    env_model "$model"
    dir="$(env_dir "$1" home)"
    printf 'COPILOT_HOME=%s\nHOME=%s/home\nCOPILOT_OFFLINE=true\n' "$dir" "$dir"
    printf 'COPILOT_PROVIDER_BASE_URL=http://127.0.0.1:%s/v1\n' "$port"
    printf 'COPILOT_PROVIDER_API_KEY=baton-standin-no-key\nCOPILOT_MODEL=%s\n' "$model"
    printf 'COPILOT_AUTO_UPDATE=false\n'
}

main "$@"
