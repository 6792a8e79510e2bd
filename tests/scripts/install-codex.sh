#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# install-codex.sh: install the pinned codex CLI (@openai/codex) from the npm
# registry into baton's test cache and print the absolute path of its native
# binary on stdout. The live tests run that binary directly: the npm `codex`
# launcher is a Node script that stays alive as the binary's parent, costing
# time and memory and adding a process between baton and codex.
#
# usage: install-codex.sh [CACHE_DIR]
#   CACHE_DIR defaults to ${BATON_CACHE:-$HOME/.cache/baton}/npm.
# Idempotent: nothing is downloaded when the pinned version is already there.
# Everything but the path goes to stderr; exit status 1 on any failure.
set -euo pipefail

CODEX_VERSION=0.171.0
NPM_PIN_TAG=install-codex
# shellcheck source=tests/scripts/npm-pin.sh
. "$(dirname "$0")/npm-pin.sh"

# The platform package and Rust target triple codex's launcher would pick
# (see PLATFORM_PACKAGE_BY_TARGET in @openai/codex/bin/codex.js).
platform() {
    local p
    p="$(npm_pin_platform)" || exit 1
    case "$p" in
    linux-x64) echo "codex-$p x86_64-unknown-linux-musl" ;;
    linux-arm64) echo "codex-$p aarch64-unknown-linux-musl" ;;
    darwin-x64) echo "codex-$p x86_64-apple-darwin" ;;
    darwin-arm64) echo "codex-$p aarch64-apple-darwin" ;;
    esac
}

main() {
    local plat cache pkg triple bin got
    CODEX_VERSION="$(npm_pin_drift "$CODEX_VERSION" "${1:-}")" || exit 1
    plat="$(platform)" || exit 1
    read -r pkg triple <<<"$plat"
    cache="$(npm_pin_cache "${BATON_CACHE:-$HOME/.cache/baton}/npm" "${1:-}")" || exit 1
    bin="$cache/node_modules/@openai/$pkg/vendor/$triple/bin/codex"
    npm_pin_install "$cache" @openai/codex "$CODEX_VERSION" "$bin"
    [ -x "$bin" ] || npm_pin_die "native binary missing after install: $bin"
    # a private, empty HOME and no CODEX_HOME: --version must not read or
    # create the user's ~/.codex (codex 0.171.0 makes ~/.codex/tmp/arg0 for
    # its helper binaries at every start)
    got="$(npm_pin_private env -u CODEX_HOME "$bin" --version)" || npm_pin_die "cannot run $bin"
    [ "$got" = "codex-cli $CODEX_VERSION" ] || npm_pin_die "unexpected version '$got' from $bin"
    printf '%s\n' "$bin"
}

main "$@"
