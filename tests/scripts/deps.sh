#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# deps.sh: install the Debian packages baton needs to build and test, only
# those missing (no apt-get at all when everything is there). Runs as root,
# or through sudo when available.
#
# usage: deps.sh
set -euo pipefail

PACKAGES=(
    gcc make cmake pkg-config git ca-certificates
    libuv1-dev libsqlite3-dev libcjson-dev libgit2-dev
    libcmocka-dev libmicrohttpd-dev zlib1g-dev libzstd-dev zstd bubblewrap curl valgrind
    clang libclang-rt-14-dev clang-format clang-tidy cppcheck python3 tmux
)

missing=()
for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
        missing+=("$p")
done
# npm (for the pinned coder CLIs) may come from Debian or from elsewhere.
command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)

if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || {
        echo "deps: need root (or sudo) to install: ${missing[*]}" >&2
        exit 1
    }
    sudo=(sudo)
fi
echo "deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq >&2
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
