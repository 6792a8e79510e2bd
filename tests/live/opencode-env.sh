#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# opencode-env.sh: prepare private config, data, cache and state directories
# for opencode that talk only to baton-standin on 127.0.0.1, for live tests
# that run the real opencode (opencode acp) offline.
#
# usage: opencode-env.sh DIR PORT [MODEL]
#   DIR    directory to create (made absolute): HOME=DIR/home and the XDG
#          directories DIR/{config,data,cache,state}; opencode keeps its
#          sessions in DIR/data/opencode/
#   PORT   port of a running baton-standin
#   MODEL  model id (default baton-test); letters, digits and ._:- only
#
# Writes DIR/config/opencode/opencode.json: one provider "baton-standin"
# (@ai-sdk/openai-compatible, bundled in opencode) speaking OpenAI Chat
# Completions at http://127.0.0.1:PORT/v1 with the one model (tool calls on),
# the default and small model both that one, no auto-update, no sharing.
# Prints the environment to use, one KEY=VALUE a line:
#   HOME=DIR/home XDG_CONFIG_HOME=DIR/config XDG_DATA_HOME=DIR/data
#   XDG_CACHE_HOME=DIR/cache XDG_STATE_HOME=DIR/state
#   OPENCODE_DISABLE_MODELS_FETCH=1   (no models.dev download)
#   OPENCODE_DISABLE_AUTOUPDATE=1 OPENCODE_DISABLE_DEFAULT_PLUGINS=1
#   OPENCODE_DISABLE_LSP_DOWNLOAD=1 OPENCODE_DISABLE_SHARE=1
#   OPENCODE_PERMISSION={"bash":"ask","edit":"ask"}
#                                     (ask over ACP before a shell command or
#                                      a file edit; opencode allows both by
#                                      default)
#   BATON_TEST_OPENCODE_MODEL=baton-standin/MODEL
# e.g.  env $(tests/live/opencode-env.sh "$d" "$port") opencode acp
# The config is rewritten on every call; existing sessions are kept.
set -euo pipefail

PROVIDER=baton-standin
ENV_TAG=opencode-env
# shellcheck source=tests/live/acp-env-args.sh
. "$(dirname "$0")/acp-env-args.sh"

write_config() {
    local port="$1" model="$2"
    cat <<EOF
{
  "\$schema": "https://opencode.ai/config.json",
  "model": "$PROVIDER/$model",
  "small_model": "$PROVIDER/$model",
  "autoupdate": false,
  "share": "disabled",
  "provider": {
    "$PROVIDER": {
      "npm": "@ai-sdk/openai-compatible",
      "name": "baton stand-in",
      "options": {
        "baseURL": "http://127.0.0.1:$port/v1",
        "apiKey": "baton-standin-no-key"
      },
      "models": {
        "$model": {
          "name": "$model",
          "tool_call": true,
          "limit": {"context": 128000, "output": 4096}
        }
      }
    }
  }
}
EOF
}

main() {
    if [ $# -lt 2 ] || [ $# -gt 3 ]; then
        env_die "usage: opencode-env.sh DIR PORT [MODEL]"
    fi
    local dir port="$2" model="${3:-baton-test}"
    env_port "$port"
    env_model "$model"
    dir="$(env_dir "$1" home config/opencode data cache state)"
    write_config "$port" "$model" >"$dir/config/opencode/opencode.json"
    printf 'HOME=%s/home\nXDG_CONFIG_HOME=%s/config\nXDG_DATA_HOME=%s/data\n' "$dir" "$dir" "$dir"
    printf 'XDG_CACHE_HOME=%s/cache\nXDG_STATE_HOME=%s/state\n' "$dir" "$dir"
    printf 'OPENCODE_DISABLE_MODELS_FETCH=1\nOPENCODE_DISABLE_AUTOUPDATE=1\n'
    printf 'OPENCODE_DISABLE_DEFAULT_PLUGINS=1\nOPENCODE_DISABLE_LSP_DOWNLOAD=1\n'
    printf 'OPENCODE_DISABLE_SHARE=1\nOPENCODE_PERMISSION={"bash":"ask","edit":"ask"}\n'
    printf 'BATON_TEST_OPENCODE_MODEL=%s/%s\n' "$PROVIDER" "$model"
}

main "$@"
