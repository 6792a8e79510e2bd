#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# deps.sh: install the Debian packages baton needs to build and test, only
# those missing (no apt-get at all when everything is there). Runs as root,
# or through sudo when available.
#
# apt-get's output goes to a log ($BATON_CACHE/logs/apt.log, by default
# ~/.cache/baton/logs/apt.log); one line says what is installed, and on
# failure the end of the log is shown.
#
# usage: deps.sh
set -euo pipefail

PACKAGES=(
    gcc make cmake pkg-config git ca-certificates
    libuv1-dev libsqlite3-dev libcjson-dev libgit2-dev
    libcmocka-dev libmicrohttpd-dev zlib1g-dev libzstd-dev zstd bubblewrap curl valgrind
    clang libclang-rt-14-dev clang-format clang-tidy cppcheck python3 tmux
    groff-base mandoc zsh
    libcmark-gfm-dev libcmark-gfm-extensions-dev python3-jsonschema
    chromium chromium-driver python3-selenium
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
logs="${BATON_CACHE:-$HOME/.cache/baton}/logs"
mkdir -p "$logs"
log="$logs/apt.log"
n=${#missing[@]}
printf 'deps: installing %d Debian package%s with apt-get (log: %s)... ' \
    "$n" "$([ "$n" -eq 1 ] || echo s)" "$log" >&2
echo "deps: installing ${missing[*]}" >"$log"
export DEBIAN_FRONTEND=noninteractive
if "${sudo[@]}" apt-get update -qq >>"$log" 2>&1 &&
    "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >>"$log" 2>&1; then
    echo "done" >&2
else
    rc=$?
    echo "failed (exit $rc); the end of $log:" >&2
    tail -n 25 "$log" | sed 's/^/    /' >&2
    exit 1
fi
