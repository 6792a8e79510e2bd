# shellcheck shell=bash
# SPDX-License-Identifier: MIT
#
# lines.sh: a command's stdout lines into an array without losing its
# failure. Sourced by the test scripts (bash 4.3 or newer).
#
# `mapfile -t A < <(CMD)` and `while read ...; done < <(CMD)` never see
# CMD's exit status: neither `set -e` nor `pipefail` reaches into a process
# substitution, so a CMD that failed reads as no lines and the script goes
# on (demo.sh went on without the codex home it could not make, and codex
# then used the user's own). lines_of runs CMD in a command substitution,
# whose status it returns.
#
#   lines_of NAME CMD [ARG...]
#       NAME=(the lines CMD wrote on stdout); returns CMD's status, with
#       NAME empty when it is not 0. CMD may be a function (it runs in a
#       subshell: a cd there stays there). No lines: NAME is empty, not one
#       empty word.

# shellcheck disable=SC2034 # lines_of_into is a nameref: the caller's array
lines_of() {
    local -n lines_of_into="$1"
    shift
    local lines_of_out lines_of_rc=0
    lines_of_out="$("$@")" || lines_of_rc=$?
    lines_of_into=()
    [ "$lines_of_rc" -eq 0 ] || return "$lines_of_rc"
    [ -z "$lines_of_out" ] || mapfile -t lines_of_into <<<"$lines_of_out"
}
