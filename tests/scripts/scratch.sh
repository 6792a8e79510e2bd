# shellcheck shell=bash
# SPDX-License-Identifier: MIT
#
# scratch.sh: where a test script makes its scratch directory, as the C and
# Python tests decide (tests/support/support.h, bt_test_scratch_root):
# under $BATON_CACHE/scratch when BATON_CACHE is set, so it moves every
# scratch directory the tests make; else in the temporary directory.
# Sourced by the test scripts.
#
#   scratch_dir PREFIX   make a new directory PREFIX.XXXXXX there and print
#                        its path; fails (status 1, its reason on stderr)
#                        when it cannot

scratch_dir() {
    local root="${TMPDIR:-/tmp}"
    if [ -n "${BATON_CACHE:-}" ]; then
        case "$BATON_CACHE" in
        /*) ;;
        *)
            echo "scratch: BATON_CACHE=$BATON_CACHE is not an absolute path" >&2
            return 1
            ;;
        esac
        root="$BATON_CACHE/scratch"
        mkdir -p "$root" || return 1
    fi
    mktemp -d "$root/$1.XXXXXX"
}
