#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# lint.sh: the static checks, each with its count of findings; zero is the
# rule. clang-format against .clang-format, clang-tidy with .clang-tidy,
# cppcheck with tests/cppcheck.cfg's options. Needs a configured build
# directory for clang-tidy's compile_commands.json.
#
# usage: lint.sh [BUILD_DIR]
set -uo pipefail

top="$(cd "$(dirname "$0")/../.." && pwd -P)"
build="${1:-$top/build}"
cd "$top" || exit 1
# shellcheck source=tests/scripts/lines.sh
source "$top/tests/scripts/lines.sh"
# a git that fails must not read as "no files, nothing found"
files=()
lines_of files git ls-files '*.c' '*.h' || {
    echo "lint: git ls-files failed in $top" >&2
    exit 1
}
failed=0

# clang-format: every tracked C file formatted as committed
fmt=0
for f in "${files[@]}"; do
    clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || { echo "lint: not formatted: $f"; fmt=$((fmt + 1)); }
done
echo "gate clang-format: ${#files[@]} files, $fmt findings"
[ "$fmt" -eq 0 ] || failed=1

# clang-tidy: the checks in .clang-tidy on every compiled file
[ -f "$build/compile_commands.json" ] || { echo "lint: no $build/compile_commands.json"; exit 1; }
log="$(mktemp)"
run-clang-tidy -p "$build" -quiet -j "$(nproc)" "$top/(src|runners|parsers|tests)/" >"$log" 2>&1
# (findings are copied to stderr through the open descriptor: "tee
# /dev/stderr" would reopen, and so truncate, a log file stderr points at)
sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -E '^/.*: (warning|error):' | sort -u >"$log.found"
cat "$log.found" >&2
tidy=$(wc -l <"$log.found")
units=$(grep -c '"file"' "$build/compile_commands.json")
echo "gate clang-tidy: $units translation units, $tidy findings"
[ "$tidy" -eq 0 ] || failed=1
rm -f "$log" "$log.found"

# cppcheck: warnings, style, performance, portability
found="$(mktemp)"
cppcheck --enable=warning,style,performance,portability --std=c11 --inline-suppr \
    --quiet --template='{file}:{line}: {severity}: {message} [{id}]' \
    -I src -I src/cli -I src/serve -I src/acp -I runners -I parsers src runners parsers tests >"$found" 2>&1
cat "$found" >&2
cpp=$(grep -c ': ' "$found")
rm -f "$found"
echo "gate cppcheck: $(printf '%s\n' "${files[@]}" | grep -c '\.c$') files, $cpp findings"
[ "$cpp" -eq 0 ] || failed=1
exit $failed
