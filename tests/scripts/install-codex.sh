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

die() {
    printf 'install-codex: %s\n' "$*" >&2
    exit 1
}

# The platform package and Rust target triple codex's launcher would pick
# (see PLATFORM_PACKAGE_BY_TARGET in @openai/codex/bin/codex.js).
platform() {
    case "$(uname -s)/$(uname -m)" in
    Linux/x86_64) echo "codex-linux-x64 x86_64-unknown-linux-musl" ;;
    Linux/aarch64 | Linux/arm64) echo "codex-linux-arm64 aarch64-unknown-linux-musl" ;;
    Darwin/x86_64) echo "codex-darwin-x64 x86_64-apple-darwin" ;;
    Darwin/arm64) echo "codex-darwin-arm64 aarch64-apple-darwin" ;;
    *) die "unsupported platform '$(uname -s)/$(uname -m)'" ;;
    esac
}

# Version recorded in an installed package.json, or nothing.
installed_version() {
    local pkg="$1/node_modules/@openai/codex/package.json"
    [ -f "$pkg" ] || return 0
    sed -n 's/^[[:space:]]*"version":[[:space:]]*"\([^"]*\)".*/\1/p' "$pkg" | head -n 1
}

main() {
    local cache="${1:-${BATON_CACHE:-$HOME/.cache/baton}/npm}"
    local pkg triple bin
    read -r pkg triple <<<"$(platform)"
    command -v npm >/dev/null 2>&1 || die "npm not found on PATH"
    mkdir -p "$cache" || die "cannot create cache directory '$cache'"
    cache="$(cd "$cache" && pwd -P)"
    bin="$cache/node_modules/@openai/$pkg/vendor/$triple/bin/codex"

    if [ "$(installed_version "$cache")" != "$CODEX_VERSION" ] || [ ! -x "$bin" ]; then
        local log="$cache/npm-install.log" added
        printf 'install-codex: installing %s from npm into %s (log: %s)... ' \
            "@openai/codex@$CODEX_VERSION" "$cache" "$log" >&2
        # npm's output goes to the log: stdout carries only the path.
        if npm install --prefix "$cache" --save-exact --no-audit --no-fund \
            --no-update-notifier --loglevel=error "@openai/codex@$CODEX_VERSION" >"$log" 2>&1; then
            added="$(sed -n 's/^\(added [0-9]* packages\{0,1\}\).*/\1/p' "$log" | head -n 1)"
            echo "done${added:+ ($added)}" >&2
        else
            echo "failed; the end of $log:" >&2
            tail -n 25 "$log" | sed 's/^/    /' >&2
            die "npm install of @openai/codex@$CODEX_VERSION failed"
        fi
    fi
    [ -x "$bin" ] || die "native binary missing after install: $bin"
    local got
    got="$("$bin" --version 2>/dev/null)" || die "cannot run $bin"
    [ "$got" = "codex-cli $CODEX_VERSION" ] || die "unexpected version '$got' from $bin"
    printf '%s\n' "$bin"
}

main "$@"
