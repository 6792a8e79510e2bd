#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# install-pi.sh: install a pinned pi coding agent from the npm registry into
# baton's test cache and print the absolute path of a `pi` to run on stdout.
#
#   install-pi.sh [CACHE_DIR]       pi 0.73.1 (@mariozechner/pi-coding-agent)
#                                   into …/npm-pi; prints npm's bin script (a
#                                   symlink to dist/cli.js, `#!/usr/bin/env
#                                   node`), so `node` (20 will do) must be on
#                                   PATH when it runs.
#   install-pi.sh --v1 [CACHE_DIR]  pi 1.6.0 (@earendil-works/pi-coding-agent,
#                                   the package's new name) into …/npm-pi1,
#                                   and Node 22 (install-node22.sh: pi 1.x
#                                   needs Node >= 22.19); prints CACHE_DIR/bin/pi,
#                                   a two-line sh script that execs the cached
#                                   node on pi's dist/bundle/cli.js: the shell
#                                   is replaced, so the process baton starts is
#                                   node itself, as with a pi 1.x installed
#                                   under a Node 22 on PATH.
#
# CACHE_DIR defaults to ${BATON_CACHE:-$HOME/.cache/baton}/npm-pi (or
# npm-pi1), prefixes of their own so no other install is ever touched.
# Idempotent: nothing is downloaded when the pinned version is already there.
# Everything but the path goes to stderr; exit status 1 on any failure.
set -euo pipefail

NPM_PIN_TAG=install-pi
# shellcheck source=tests/scripts/npm-pin.sh
. "$(dirname "$0")/npm-pin.sh"

# pi 0.73.1 prints its version on stderr, 1.6.0 on stdout: 2>&1 takes
# either. PI_OFFLINE: no version check or other network use at start.
check_version() {
    local bin="$1" want="$2" got
    got="$(PI_OFFLINE=1 "$bin" --version 2>&1 </dev/null)" || npm_pin_die "cannot run $bin: $got"
    [ "$got" = "$want" ] || npm_pin_die "unexpected version '$got' from $bin (want $want)"
}

# One word for sh: single-quoted, each ' as '\''.
sh_quote() {
    printf "'%s'" "${1//\'/\'\\\'\'}"
}

install_v0() {
    local package=@mariozechner/pi-coding-agent version=0.73.1 cache bin
    command -v node >/dev/null 2>&1 || npm_pin_die "node not found on PATH"
    cache="$(npm_pin_cache "${BATON_CACHE:-$HOME/.cache/baton}/npm-pi" "${1:-}")" || exit 1
    bin="$cache/node_modules/.bin/pi"
    npm_pin_install "$cache" "$package" "$version" "$bin"
    [ -x "$bin" ] || npm_pin_die "pi executable missing after install: $bin"
    check_version "$bin" "$version"
    printf '%s\n' "$bin"
}

install_v1() {
    local package=@earendil-works/pi-coding-agent version=1.6.0 cache node cli bin
    version="$(npm_pin_drift "$version" "${1:-}")" || exit 1
    node="$(bash "$(dirname "$0")/install-node22.sh")" || npm_pin_die "Node 22 could not be installed"
    cache="$(npm_pin_cache "${BATON_CACHE:-$HOME/.cache/baton}/npm-pi1" "${1:-}")" || exit 1
    cli="$cache/node_modules/$package/dist/bundle/cli.js"
    bin="$cache/bin/pi"
    npm_pin_install "$cache" "$package" "$version" "$cli"
    [ -f "$cli" ] || npm_pin_die "pi's cli.js missing after install: $cli"
    # exec: no shell stays between baton and pi (one process, node, in pi's
    # process group).
    mkdir -p "$cache/bin"
    printf '#!/bin/sh\nexec %s %s "$@"\n' "$(sh_quote "$node")" "$(sh_quote "$cli")" >"$bin.tmp"
    chmod 755 "$bin.tmp"
    mv -f "$bin.tmp" "$bin"
    check_version "$bin" "$version"
    printf '%s\n' "$bin"
}

if [ "${1:-}" = --v1 ]; then
    shift
    install_v1 "$@"
else
    install_v0 "$@"
fi
