#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# install-copilot.sh: install the pinned GitHub Copilot CLI (@github/copilot)
# from the npm registry into baton's test cache and print the absolute path
# of its native binary on stdout.
#
# The package's bin `npm-loader.js` is a Node script that spawns the binary
# of the optional platform package @github/copilot-<linux|linuxmusl|…>-<arch>
# and waits for it (spawnSync, stdio inherited): one more process in between
# that forwards no signals. The live tests run the platform package's binary
# itself. On its first run it unpacks its runtime into
# $HOME/.cache/copilot/pkg/<platform>/<version>/ (about 1 s).
#
# usage: install-copilot.sh [CACHE_DIR]
#   CACHE_DIR defaults to ${BATON_CACHE:-$HOME/.cache/baton}/npm-copilot, a
#   prefix of its own so the other coders' installs are never touched.
# Idempotent: nothing is downloaded when the pinned version is already there.
# Everything but the path goes to stderr; exit status 1 on any failure.
set -euo pipefail

COPILOT_PACKAGE=@github/copilot
COPILOT_VERSION=1.0.102
NPM_PIN_TAG=install-copilot
# shellcheck source=tests/scripts/npm-pin.sh
. "$(dirname "$0")/npm-pin.sh"

# The platform package npm-loader.js would pick.
platform() {
    local p
    p="$(npm_pin_platform)" || exit 1
    if npm_pin_musl; then
        p="linuxmusl-${p#linux-}"
    fi
    echo "copilot-$p"
}

# A private, empty HOME and COPILOT_HOME: --version must not read or create
# the user's ~/.copilot (it unpacks its runtime under HOME). 1.0.102 prints
# "GitHub Copilot CLI 1.0.102." and an update hint: the first line.
copilot_version() {
    COPILOT_HOME="$HOME/copilot" COPILOT_AUTO_UPDATE=false "$1" --version | head -n 1
}

main() {
    local cache bin got
    COPILOT_VERSION="$(npm_pin_drift "$COPILOT_VERSION" "${1:-}")" || exit 1
    cache="$(npm_pin_cache "${BATON_CACHE:-$HOME/.cache/baton}/npm-copilot" "${1:-}")" || exit 1
    bin="$cache/node_modules/@github/$(platform)/copilot"
    npm_pin_install "$cache" "$COPILOT_PACKAGE" "$COPILOT_VERSION" "$bin"
    [ -x "$bin" ] || npm_pin_die "native binary missing after install: $bin"
    got="$(npm_pin_private copilot_version "$bin")" || npm_pin_die "cannot run $bin"
    [ "$got" = "GitHub Copilot CLI $COPILOT_VERSION." ] ||
        npm_pin_die "unexpected version '$got' from $bin (want $COPILOT_VERSION)"
    printf '%s\n' "$bin"
}

main "$@"
