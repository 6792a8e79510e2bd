#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# install-claude.sh: install the pinned Claude Code CLI
# (@anthropic-ai/claude-code) from the npm registry into baton's test cache
# and print the absolute path of its native binary on stdout.
#
# The package's bin `bin/claude.exe` is a stub that its postinstall
# (install.cjs) replaces with a hard link (or copy) of the native binary from
# the optional platform package @anthropic-ai/claude-code-<platform>; the
# fallback launcher cli-wrapper.cjs is a Node script that would spawn that
# binary. The live tests run the platform package's binary itself, which is
# what runs either way, with no launcher in between and no dependence on the
# postinstall having run.
#
# usage: install-claude.sh [CACHE_DIR]
#   CACHE_DIR defaults to ${BATON_CACHE:-$HOME/.cache/baton}/npm-claude, a
#   prefix of its own so the codex and pi installs are never touched.
# Idempotent: nothing is downloaded when the pinned version is already there.
# Everything but the path goes to stderr; exit status 1 on any failure.
set -euo pipefail

CLAUDE_PACKAGE=@anthropic-ai/claude-code
CLAUDE_VERSION=2.1.332
NPM_PIN_TAG=install-claude
# shellcheck source=tests/scripts/npm-pin.sh
. "$(dirname "$0")/npm-pin.sh"

# The platform package install.cjs would pick (PLATFORMS in cli-wrapper.cjs).
platform() {
    local p libc=""
    p="$(npm_pin_platform)" || exit 1
    if npm_pin_musl; then
        libc=-musl
    fi
    echo "claude-code-$p$libc"
}

main() {
    local cache pkg bin got
    CLAUDE_VERSION="$(npm_pin_drift "$CLAUDE_VERSION" "${1:-}")" || exit 1
    pkg="$(platform)"
    cache="$(npm_pin_cache "${BATON_CACHE:-$HOME/.cache/baton}/npm-claude" "${1:-}")" || exit 1
    bin="$cache/node_modules/@anthropic-ai/$pkg/claude"
    npm_pin_install "$cache" "$CLAUDE_PACKAGE" "$CLAUDE_VERSION" "$bin"
    [ -x "$bin" ] || npm_pin_die "native binary missing after install: $bin"
    # A private, empty config directory: --version must not read or create
    # the user's ~/.claude.
    local cfg
    cfg="$(mktemp -d)"
    got="$(CLAUDE_CONFIG_DIR="$cfg" DISABLE_AUTOUPDATER=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 \
        "$bin" --version 2>/dev/null </dev/null)" || {
        rm -rf "$cfg"
        npm_pin_die "cannot run $bin"
    }
    rm -rf "$cfg"
    [ "$got" = "$CLAUDE_VERSION (Claude Code)" ] ||
        npm_pin_die "unexpected version '$got' from $bin (want $CLAUDE_VERSION)"
    printf '%s\n' "$bin"
}

main "$@"
