#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# install-acp-sdk.sh: install the pinned official ACP TypeScript SDK
# (@agentclientprotocol/sdk) from the npm registry into baton's test cache
# and print the absolute path of the package's directory on stdout. The
# `baton acp` tests use it as the client no one here wrote
# (dist/, ClientSideConnection) and check every message baton writes
# against the JSON schema it ships (schema/v1/schema.json).
#
# usage: install-acp-sdk.sh [CACHE_DIR]
#   CACHE_DIR defaults to ${BATON_CACHE:-$HOME/.cache/baton}/npm-acp-sdk.
# Idempotent: nothing is downloaded when the pinned version is already there.
# Everything but the path goes to stderr; exit status 1 on any failure.
set -euo pipefail

ACP_SDK_VERSION=2.4.0
NPM_PIN_TAG=install-acp-sdk
# shellcheck source=tests/scripts/npm-pin.sh
. "$(dirname "$0")/npm-pin.sh"

main() {
    local cache dir
    cache="$(npm_pin_cache "${BATON_CACHE:-$HOME/.cache/baton}/npm-acp-sdk" "${1:-}")" || exit 1
    dir="$cache/node_modules/@agentclientprotocol/sdk"
    npm_pin_install "$cache" @agentclientprotocol/sdk "$ACP_SDK_VERSION" "$dir/schema/v1"
    [ -f "$dir/schema/v1/schema.json" ] || npm_pin_die "schema/v1/schema.json missing in $dir"
    [ "$(npm_pin_version "$cache" @agentclientprotocol/sdk)" = "$ACP_SDK_VERSION" ] ||
        npm_pin_die "unexpected version in $dir (want $ACP_SDK_VERSION)"
    printf '%s\n' "$dir"
}

main "$@"
