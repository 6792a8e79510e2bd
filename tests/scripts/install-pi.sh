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

die() {
    printf 'install-pi: %s\n' "$*" >&2
    exit 1
}

# Version recorded in an installed package.json, or nothing.
installed_version() {
    local pkg="$1/node_modules/$PI_PACKAGE/package.json"
    [ -f "$pkg" ] || return 0
    sed -n 's/^[[:space:]]*"version":[[:space:]]*"\([^"]*\)".*/\1/p' "$pkg" | head -n 1
}

main() {
    local cache="${1:-${BATON_CACHE:-$HOME/.cache/baton}/npm-pi}"
    local bin got
    command -v npm >/dev/null 2>&1 || die "npm not found on PATH"
    command -v node >/dev/null 2>&1 || die "node not found on PATH"
    mkdir -p "$cache" || die "cannot create cache directory '$cache'"
    cache="$(cd "$cache" && pwd -P)"
    bin="$cache/node_modules/.bin/pi"

    if [ "$(installed_version "$cache")" != "$PI_VERSION" ] || [ ! -x "$bin" ]; then
        local log="$cache/npm-install.log" added
        printf 'install-pi: installing %s from npm into %s (log: %s)... ' \
            "$PI_PACKAGE@$PI_VERSION" "$cache" "$log" >&2
        # npm's output goes to the log: stdout carries only the path.
        if npm install --prefix "$cache" --save-exact --no-audit --no-fund \
            --no-update-notifier --loglevel=error "$PI_PACKAGE@$PI_VERSION" >"$log" 2>&1; then
            added="$(sed -n 's/^\(added [0-9]* packages\{0,1\}\).*/\1/p' "$log" | head -n 1)"
            echo "done${added:+ ($added)}" >&2
        else
            echo "failed; the end of $log:" >&2
            tail -n 25 "$log" | sed 's/^/    /' >&2
            die "npm install of $PI_PACKAGE@$PI_VERSION failed"
        fi
    fi
    [ -x "$bin" ] || die "pi executable missing after install: $bin"
    # PI_OFFLINE: no version check or other network use at start. pi 0.73.1
    # prints its version on stderr, not stdout.
    got="$(PI_OFFLINE=1 "$bin" --version 2>&1 </dev/null)" || die "cannot run $bin"
    [ "$got" = "$PI_VERSION" ] || die "unexpected version '$got' from $bin (want $PI_VERSION)"
    printf '%s\n' "$bin"
}

main "$@"
