# SPDX-License-Identifier: MIT
#
# npm-pin.sh: the npm part shared by the install-<coder>.sh scripts and
# install-node22.sh; sourced, not run. The sourcing script sets NPM_PIN_TAG
# (the prefix of its messages, e.g. "install-codex") before using it.
#
#   npm_pin_die MESSAGE...         print "TAG: MESSAGE" on stderr, exit 1
#   npm_pin_platform               print this machine as npm names it in
#                                  platform packages (Node's process.platform
#                                  and process.arch): linux-x64, linux-arm64,
#                                  darwin-x64 or darwin-arm64; dies on others
#   npm_pin_musl                   status 0 on a Linux whose libc is musl
#   npm_pin_cache DEFAULT [ARG]    create and print the absolute, resolved
#                                  cache prefix: ARG if given, else DEFAULT
#   npm_pin_version PREFIX PKG     version in PREFIX's installed PKG, or ""
#   npm_pin_install PREFIX PKG VERSION CHECK
#                                  install PKG@VERSION into PREFIX unless it is
#                                  there and CHECK (a path) is executable; npm's
#                                  output goes to PREFIX/npm-install.log, a
#                                  progress line to stderr, nothing to stdout.
#   npm_pin_private CMD [ARG...]   run CMD (e.g. a function of the caller)
#                                  with HOME set to a new empty directory,
#                                  removed afterwards, stdin from /dev/null
#                                  and stderr dropped; CMD's status
#   npm_pin_drift PIN [ARG]        print the version to install: PIN, or
#                                  BATON_DRIFT_VERSION when set (how
#                                  tests/scripts/drift.sh installs the newest
#                                  release), which needs ARG, the caller's
#                                  CACHE_DIR: another version never goes into
#                                  the pinned cache

npm_pin_die() {
    printf '%s: %s\n' "$NPM_PIN_TAG" "$*" >&2
    exit 1
}

npm_pin_platform() {
    case "$(uname -s)/$(uname -m)" in
    Linux/x86_64) echo linux-x64 ;;
    Linux/aarch64 | Linux/arm64) echo linux-arm64 ;;
    Darwin/x86_64) echo darwin-x64 ;;
    Darwin/arm64) echo darwin-arm64 ;;
    *) npm_pin_die "unsupported platform '$(uname -s)/$(uname -m)'" ;;
    esac
}

npm_pin_musl() {
    [ "$(uname -s)" = Linux ] && compgen -G '/lib/ld-musl-*' >/dev/null
}

npm_pin_cache() {
    local cache="${2:-$1}"
    command -v npm >/dev/null 2>&1 || npm_pin_die "npm not found on PATH"
    mkdir -p "$cache" || npm_pin_die "cannot create cache directory '$cache'"
    (cd "$cache" && pwd -P)
}

npm_pin_version() {
    local pkg="$1/node_modules/$2/package.json"
    [ -f "$pkg" ] || return 0
    sed -n 's/^[[:space:]]*"version":[[:space:]]*"\([^"]*\)".*/\1/p' "$pkg" | head -n 1
}

npm_pin_drift() {
    [ -n "${BATON_DRIFT_VERSION:-}" ] || {
        printf '%s\n' "$1"
        return 0
    }
    [ -n "${2:-}" ] || npm_pin_die "BATON_DRIFT_VERSION needs a CACHE_DIR (not the pinned cache)"
    printf '%s\n' "$BATON_DRIFT_VERSION"
}

npm_pin_private() {
    local home rc=0
    home="$(mktemp -d)" || npm_pin_die "cannot create a temporary directory"
    HOME="$home" "$@" 2>/dev/null </dev/null || rc=$?
    rm -rf "$home"
    return "$rc"
}

npm_pin_install() {
    local cache="$1" package="$2" version="$3" check="$4"
    if [ "$(npm_pin_version "$cache" "$package")" = "$version" ] && [ -x "$check" ]; then
        return 0
    fi
    local log="$cache/npm-install.log" added gconf uconf ncache home rc=0
    # --prefix moves npm's system-wide config to PREFIX/etc/npmrc: name
    # the machine's (its registry, proxy or CA may be set only there), the
    # user's and npm's cache as npm finds them without it
    gconf="$(npm config get globalconfig)" && uconf="$(npm config get userconfig)" &&
        ncache="$(npm config get cache)" || npm_pin_die "npm cannot read its configuration"
    # a package's install scripts (opencode-ai's runs the program) get a
    # home of their own, not the user's
    home="$(mktemp -d)" || npm_pin_die "cannot create a temporary directory"
    printf '%s: installing %s from npm into %s (log: %s)... ' \
        "$NPM_PIN_TAG" "$package@$version" "$cache" "$log" >&2
    # npm's output goes to the log: stdout carries only the path.
    HOME="$home" XDG_CONFIG_HOME="$home/.config" XDG_DATA_HOME="$home/.local/share" \
        XDG_STATE_HOME="$home/.local/state" XDG_CACHE_HOME="$home/.cache" \
        npm install --globalconfig "$gconf" --userconfig "$uconf" --cache "$ncache" \
        --prefix "$cache" --save-exact --no-audit --no-fund --no-update-notifier \
        --loglevel=error "$package@$version" >"$log" 2>&1 || rc=$?
    rm -rf "$home"
    if [ "$rc" -eq 0 ]; then
        added="$(sed -n 's/^\(added [0-9]* packages\{0,1\}\).*/\1/p' "$log" | head -n 1)"
        echo "done${added:+ ($added)}" >&2
    else
        echo "failed; the end of $log:" >&2
        tail -n 25 "$log" | sed 's/^/    /' >&2
        npm_pin_die "npm install of $package@$version failed"
    fi
}
