#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# pi-env.sh: prepare a pi agent directory that talks only to baton-standin on
# 127.0.0.1, for live tests that run the real pi CLI (pi --mode rpc) offline.
#
# usage: pi-env.sh DIR PORT [MODEL]
#   DIR    agent directory to create (made absolute); pi keeps its settings,
#          models, auth and (by default) sessions there
#   PORT   port of a running baton-standin
#   MODEL  model id (default baton-test); letters, digits and ._:- only
#
# Writes DIR/models.json (one provider, "baton-standin", speaking OpenAI Chat
# Completions at http://127.0.0.1:PORT/v1, with the one model) and
# DIR/settings.json (no provider-SDK retries, quiet startup, no telemetry),
# then prints the environment to use and the names it set up, one KEY=VALUE a
# line:
#   PI_CODING_AGENT_DIR=DIR
#   PI_OFFLINE=1
#   PI_SKIP_VERSION_CHECK=1
#   PI_TELEMETRY=0
#   HOME=DIR/home
#   BATON_TEST_PI_PROVIDER=baton-standin
#   BATON_TEST_PI_MODEL=MODEL
# e.g.  env $(tests/live/pi-env.sh "$d" "$port") pi --mode rpc \
#           --provider baton-standin --model baton-test
# (the BATON_TEST_* lines are harmless in the environment; they name the
# --provider and --model arguments). HOME points at an empty directory inside
# DIR so pi reads no user dotfiles (~/.pi, ~/.agents, a global AGENTS.md).
# No real API key is needed: the stand-in has no auth, and the apiKey in
# models.json is a literal placeholder. Existing sessions in DIR are kept; the
# two files are rewritten on every call. pi itself rewrites settings.json
# when told `set_auto_retry` (and the other rpc set_* commands): call this
# script again to get the defaults back.
set -euo pipefail

PROVIDER=baton-standin

die() {
    printf 'pi-env: %s\n' "$*" >&2
    exit 1
}

# compat: the stand-in takes the system prompt as a plain "system" message
# and ignores reasoning_effort. reasoning:false: the model streams no
# thinking unless a test asks for it by directive; input text only.
write_models() {
    local port="$1" model="$2"
    cat <<EOF
{
  "providers": {
    "$PROVIDER": {
      "baseUrl": "http://127.0.0.1:$port/v1",
      "api": "openai-completions",
      "apiKey": "baton-standin-no-key",
      "compat": {
        "supportsDeveloperRole": false,
        "supportsReasoningEffort": false
      },
      "models": [
        {
          "id": "$model",
          "name": "$model",
          "reasoning": false,
          "input": ["text"],
          "contextWindow": 128000,
          "maxTokens": 4096,
          "cost": {"input": 1, "output": 2, "cacheRead": 0.5, "cacheWrite": 0}
        }
      ]
    }
  }
}
EOF
}

# retry.provider.maxRetries 0: the OpenAI SDK inside pi does not retry a 5xx
# on its own (its default is 2 per attempt); pi's agent-level retry stays on
# (set_auto_retry turns it off per process). quietStartup and no telemetry:
# nothing at start that is not needed.
write_settings() {
    local model="$1"
    cat <<EOF
{
  "defaultProvider": "$PROVIDER",
  "defaultModel": "$model",
  "quietStartup": true,
  "enableInstallTelemetry": false,
  "retry": {
    "enabled": true,
    "maxRetries": 3,
    "baseDelayMs": 2000,
    "provider": {
      "maxRetries": 0
    }
  }
}
EOF
}

main() {
    if [ $# -lt 2 ] || [ $# -gt 3 ]; then
        die "usage: pi-env.sh DIR PORT [MODEL]"
    fi
    local dir="$1" port="$2" model="${3:-baton-test}"
    if ! [[ "$port" =~ ^[0-9]{1,5}$ ]] || [ "$port" -lt 1 ] || [ "$port" -gt 65535 ]; then
        die "bad port '$port'"
    fi
    [[ "$model" =~ ^[A-Za-z0-9._:-]+$ ]] || die "bad model name '$model'"
    [[ "$dir" = /* ]] || dir="$PWD/$dir"
    mkdir -p "$dir/home" || die "cannot create '$dir'"
    dir="$(cd "$dir" && pwd -P)"
    # The path goes into KEY=VALUE lines unquoted.
    [[ "$dir" =~ ^/[A-Za-z0-9._/+-]*$ ]] || die "unsupported characters in '$dir'"
    chmod 700 "$dir"
    write_models "$port" "$model" >"$dir/models.json"
    write_settings "$model" >"$dir/settings.json"
    printf 'PI_CODING_AGENT_DIR=%s\nPI_OFFLINE=1\nPI_SKIP_VERSION_CHECK=1\nPI_TELEMETRY=0\n' "$dir"
    printf 'HOME=%s/home\n' "$dir"
    printf 'BATON_TEST_PI_PROVIDER=%s\nBATON_TEST_PI_MODEL=%s\n' "$PROVIDER" "$model"
}

main "$@"
