#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# install-opencode.sh: install the pinned opencode CLI (opencode-ai) from the
# npm registry into baton's test cache and print the absolute path of its
# native binary on stdout.
#
# The package's bin `bin/opencode.exe` is replaced by its postinstall
# (postinstall.mjs) with a hard link (or copy) of the binary of one optional
# platform package, opencode-<os>-<arch>[-baseline][-musl] (baseline: x64
# without AVX2). The live tests run that platform package's binary itself,
# chosen by the same rules, so nothing depends on the postinstall having run.
#
# usage: install-opencode.sh [CACHE_DIR]
#   CACHE_DIR defaults to ${BATON_CACHE:-$HOME/.cache/baton}/npm-opencode, a
#   prefix of its own so the other coders' installs are never touched.
# Idempotent: nothing is downloaded when the pinned version is already there.
# Everything but the path goes to stderr; exit status 1 on any failure.
set -euo pipefail

OPENCODE_PACKAGE=opencode-ai
OPENCODE_VERSION=1.18.33
NPM_PIN_TAG=install-opencode
# shellcheck source=tests/scripts/npm-pin.sh
. "$(dirname "$0")/npm-pin.sh"

# The platform package postinstall.mjs would try first.
platform() {
    local p suffix=""
    p="$(npm_pin_platform)" || exit 1
    # an x64 CPU without AVX2 gets the baseline build
    if [ "${p#*-}" = x64 ] && [ -r /proc/cpuinfo ] && ! grep -qw avx2 /proc/cpuinfo; then
        suffix=-baseline
    fi
    if npm_pin_musl; then
        suffix="$suffix-musl"
    fi
    echo "opencode-$p$suffix"
}

# A private, empty HOME and XDG directories: --version must not read or
# create the user's opencode config, data or cache.
opencode_version() {
    XDG_CONFIG_HOME="$HOME/config" XDG_DATA_HOME="$HOME/data" XDG_CACHE_HOME="$HOME/cache" \
        XDG_STATE_HOME="$HOME/state" OPENCODE_DISABLE_AUTOUPDATE=1 \
        OPENCODE_DISABLE_MODELS_FETCH=1 "$1" --version
}

main() {
    local cache bin got
    OPENCODE_VERSION="$(npm_pin_drift "$OPENCODE_VERSION" "${1:-}")" || exit 1
    cache="$(npm_pin_cache "${BATON_CACHE:-$HOME/.cache/baton}/npm-opencode" "${1:-}")" || exit 1
    bin="$cache/node_modules/$(platform)/bin/opencode"
    npm_pin_install "$cache" "$OPENCODE_PACKAGE" "$OPENCODE_VERSION" "$bin"
    [ -x "$bin" ] || npm_pin_die "native binary missing after install: $bin"
    got="$(npm_pin_private opencode_version "$bin")" || npm_pin_die "cannot run $bin"
    [ "$got" = "$OPENCODE_VERSION" ] ||
        npm_pin_die "unexpected version '$got' from $bin (want $OPENCODE_VERSION)"
    printf '%s\n' "$bin"
}

main "$@"
