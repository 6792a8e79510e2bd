#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# install-pi.sh: install the pinned pi coding agent
# (@mariozechner/pi-coding-agent) from the npm registry into baton's test
# cache and print the absolute path of its `pi` executable on stdout. pi is a
# Node program: the path is npm's bin script (a symlink to the package's
# dist/cli.js with a `#!/usr/bin/env node` line), so `node` must be on PATH
# when it runs.
#
# usage: install-pi.sh [CACHE_DIR]
#   CACHE_DIR defaults to ${BATON_CACHE:-$HOME/.cache/baton}/npm-pi, a prefix
#   of its own so the codex install (…/npm) is never touched.
# Idempotent: nothing is downloaded when the pinned version is already there.
# Everything but the path goes to stderr; exit status 1 on any failure.
set -euo pipefail

PI_PACKAGE=@mariozechner/pi-coding-agent
PI_VERSION=0.73.1
NPM_PIN_TAG=install-pi
# shellcheck source=tests/scripts/npm-pin.sh
. "$(dirname "$0")/npm-pin.sh"

main() {
    local cache bin got
    command -v node >/dev/null 2>&1 || npm_pin_die "node not found on PATH"
    cache="$(npm_pin_cache "${BATON_CACHE:-$HOME/.cache/baton}/npm-pi" "${1:-}")" || exit 1
    bin="$cache/node_modules/.bin/pi"
    npm_pin_install "$cache" "$PI_PACKAGE" "$PI_VERSION" "$bin"
    [ -x "$bin" ] || npm_pin_die "pi executable missing after install: $bin"
    # PI_OFFLINE: no version check or other network use at start. pi 0.73.1
    # prints its version on stderr, not stdout.
    got="$(PI_OFFLINE=1 "$bin" --version 2>&1 </dev/null)" || npm_pin_die "cannot run $bin"
    [ "$got" = "$PI_VERSION" ] || npm_pin_die "unexpected version '$got' from $bin (want $PI_VERSION)"
    printf '%s\n' "$bin"
}

main "$@"
