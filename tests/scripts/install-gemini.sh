#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# install-gemini.sh: install the pinned Gemini CLI (@google/gemini-cli) from
# the npm registry into baton's test cache and print the absolute path of its
# `gemini` executable on stdout. gemini is a Node program with no native
# binary: the path is npm's bin script (a symlink to the package's
# bundle/gemini.js, `#!/usr/bin/env node`), so `node` (20 or newer) must be on
# PATH when it runs. Run it with GEMINI_CLI_NO_RELAUNCH=true, or it re-spawns
# itself in a second Node process with a bigger heap.
#
# usage: install-gemini.sh [CACHE_DIR]
#   CACHE_DIR defaults to ${BATON_CACHE:-$HOME/.cache/baton}/npm-gemini, a
#   prefix of its own so the other coders' installs are never touched.
# Idempotent: nothing is downloaded when the pinned version is already there.
# Everything but the path goes to stderr; exit status 1 on any failure.
set -euo pipefail

GEMINI_PACKAGE=@google/gemini-cli
GEMINI_VERSION=0.61.0
NPM_PIN_TAG=install-gemini
# shellcheck source=tests/scripts/npm-pin.sh
. "$(dirname "$0")/npm-pin.sh"

# A private, empty HOME: --version must not read or create the user's
# ~/.gemini.
gemini_version() {
    GEMINI_CLI_NO_RELAUNCH=true "$1" --version
}

main() {
    local cache bin got
    GEMINI_VERSION="$(npm_pin_drift "$GEMINI_VERSION" "${1:-}")" || exit 1
    command -v node >/dev/null 2>&1 || npm_pin_die "node not found on PATH"
    cache="$(npm_pin_cache "${BATON_CACHE:-$HOME/.cache/baton}/npm-gemini" "${1:-}")" || exit 1
    bin="$cache/node_modules/.bin/gemini"
    npm_pin_install "$cache" "$GEMINI_PACKAGE" "$GEMINI_VERSION" "$bin"
    [ -x "$bin" ] || npm_pin_die "gemini executable missing after install: $bin"
    got="$(npm_pin_private gemini_version "$bin")" || npm_pin_die "cannot run $bin"
    [ "$got" = "$GEMINI_VERSION" ] ||
        npm_pin_die "unexpected version '$got' from $bin (want $GEMINI_VERSION)"
    printf '%s\n' "$bin"
}

main "$@"
