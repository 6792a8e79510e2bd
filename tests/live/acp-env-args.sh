# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# acp-env-args.sh: the argument checks shared by gemini-env.sh,
# opencode-env.sh and copilot-env.sh; sourced, not run. The sourcing script
# sets ENV_TAG (the prefix of its messages, e.g. "gemini-env") first.
#
#   env_die MESSAGE...        print "TAG: MESSAGE" on stderr, exit 1
#   env_port PORT             exit 1 unless PORT is a port number (1-65535)
#   env_model MODEL           exit 1 unless MODEL is letters, digits, ._:-
#   env_dir DIR [SUB...]      create DIR (relative to $PWD) and its
#                             subdirectories SUB, mode 700, and print its
#                             absolute, resolved path; exit 1 if it cannot,
#                             or if the path has characters that a KEY=VALUE
#                             line would need quoted

env_die() {
    printf '%s: %s\n' "$ENV_TAG" "$*" >&2
    exit 1
}

env_port() {
    if ! [[ "$1" =~ ^[0-9]{1,5}$ ]] || [ "$1" -lt 1 ] || [ "$1" -gt 65535 ]; then
        env_die "bad port '$1'"
    fi
}

env_model() {
    [[ "$1" =~ ^[A-Za-z0-9._:-]+$ ]] || env_die "bad model name '$1'"
}

env_dir() {
    local dir="$1" sub
    shift
    [[ "$dir" = /* ]] || dir="$PWD/$dir"
    mkdir -p "$dir" || env_die "cannot create '$dir'"
    for sub in "$@"; do
        mkdir -p "$dir/$sub" || env_die "cannot create '$dir/$sub'"
    done
    dir="$(cd "$dir" && pwd -P)"
    [[ "$dir" =~ ^/[A-Za-z0-9._/+-]*$ ]] || env_die "unsupported characters in '$dir'"
    chmod 700 "$dir"
    printf '%s\n' "$dir"
}
