#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test-install.sh: `cmake --install BUILD --prefix TMP` puts baton, baton(1)
# and the bash and zsh completions in place; the page renders without a
# warning from groff or mandoc and documents every command `baton --help`
# lists with every option its `--help` lists; both completions offer every
# command, each command's options, the coders after -c, the choices of
# --approval and `completion`, and conversation ids where CONV goes.
# groff, mandoc and zsh come from tests/scripts/deps.sh.
#
# usage: test-install.sh BUILD_DIR SOURCE_DIR
set -uo pipefail

build=$1 src=$2
here="$src/tests/install"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0

ok() { echo "ok: $1"; passed=$((passed + 1)); }
fail() { echo "FAILED: $1"; failed=$((failed + 1)); }
check() { # NAME COMMAND...: pass when the command succeeds
    local name=$1
    shift
    if "$@"; then ok "$name"; else fail "$name"; fi
}
# has WORD LIST...: WORD is one of the lines of LIST
has() {
    local w=$1
    shift
    grep -qxF -- "$w" < <(printf '%s\n' "$@")
}
# has_all WHAT "EXPECTED WORDS" GOT...: every expected word is among GOT
has_all() {
    local what=$1 expected=$2 w missing=()
    shift 2
    for w in $expected; do has "$w" "$@" || missing+=("$w"); done
    if [ ${#missing[@]} -eq 0 ]; then
        ok "$what"
    else
        fail "$what: missing ${missing[*]} (got: $*)"
    fi
}

for tool in groff mandoc zsh; do
    command -v "$tool" >/dev/null || {
        echo "FAILED: $tool is not installed (tests/scripts/deps.sh installs it)"
        exit 1
    }
done

# --- install ---------------------------------------------------------------
prefix="$tmp/prefix"
if ! cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1; then
    cat "$tmp/install.log"
    fail "cmake --install"
    echo "$passed passed, $failed failed"
    exit 1
fi
baton="$prefix/bin/baton"
page="$prefix/share/man/man1/baton.1"
bash_script="$prefix/share/bash-completion/completions/baton"
zsh_dir="$prefix/share/zsh/site-functions"
check "installs bin/baton" test -x "$baton"
check "installs share/man/man1/baton.1" test -s "$page"
check "installs share/bash-completion/completions/baton" test -s "$bash_script"
check "installs share/zsh/site-functions/_baton" test -s "$zsh_dir/_baton"

# A store with two conversations, through the fake coder.
export HOME="$tmp/home" BATON_HOME="$tmp/baton-home" NO_COLOR=1
export BATON_CODEX_BIN="$build/tests/fake-coder/fake-coder"
export FAKE_CODER_REPLAY="$src/fixtures/codex/0.171.0/text.jsonl"
unset XDG_STATE_HOME
mkdir -p "$HOME"
"$baton" run "first conversation" >/dev/null 2>&1
"$baton" run "second: a title	with a tab" >/dev/null 2>&1
mapfile -t convs < <("$baton" ls --json | sed -n 's/^{"id":"\([0-9a-z]*\)".*/\1/p')
check "two conversations to complete" test ${#convs[@]} -eq 2

mapfile -t cmds < <("$baton" --help | sed -n '/^commands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p')
check "baton --help lists the commands (${#cmds[@]})" test ${#cmds[@]} -ge 10
mapfile -t coders < <("$baton" coders --json | sed -n 's/^{"coder":"\([^"]*\)".*/\1/p')
check "baton coders --json lists the coders (${#coders[@]})" test ${#coders[@]} -ge 2

# The options `baton CMD --help` lists: "-c", "--coder", ...
options_of() {
    "$baton" "$1" --help | sed -n 's/^ \{2,6\}\(-[^ ]*\(, --[^ ]*\)\{0,1\}\).*/\1/p' | tr -d ',' |
        tr ' ' '\n'
}

# --- the man page ------------------------------------------------------------
out="$(groff -man -Tutf8 -ww -z "$page" 2>&1)"
check "groff -man -ww renders baton.1 without a warning${out:+: $out}" test -z "$out"
out="$(mandoc -Tlint -W style "$page" 2>&1)"
check "mandoc -Tlint finds nothing in baton.1${out:+: $out}" test -z "$out"
out="$(grep -nvE '^(\.(\\"|TH|SH|SS|PP|TP|br|nh|hy|ad)( |$)|[^.'"'"'])' "$page")"
check "every control line of baton.1 is a macro it means${out:+: $out}" test -z "$out"
check "man -l formats baton.1" bash -c "MANWIDTH=80 man -l '$page' >/dev/null 2>&1"
text="$(groff -man -Tascii -P-cbou "$page" 2>/dev/null)"
for s in NAME SYNOPSIS DESCRIPTION COMMANDS "EXIT STATUS" ENVIRONMENT FILES EXAMPLES "SEE ALSO"; do
    grep -qx "$s" <<<"$text" || fail "baton.1 has no section $s"
done
for v in BATON_HOME XDG_STATE_HOME NO_COLOR BATON_CODEX_BIN BATON_PI_BIN; do
    grep -q "^       $v" <<<"$text" || fail "baton.1 does not document $v"
done
for c in "${cmds[@]}"; do
    # the subsection of c: from its heading to the next heading
    sect="$(printf '%s\n' "$text" | awk -v c="   $c" '$0 == c { on = 1; next } on && (/^[^ ]/ || /^   [^ ]/) { exit } on')"
    missing=()
    grep -q "baton $c" <<<"$sect" || missing+=("synopsis")
    while read -r o; do
        [ -z "$o" ] || grep -qF -- "$o" <<<"$sect" || missing+=("$o")
    done < <(options_of "$c")
    if [ ${#missing[@]} -eq 0 ]; then
        ok "baton.1 documents $c and its options"
    else
        fail "baton.1, command $c: missing ${missing[*]}"
    fi
done

# --- bash ----------------------------------------------------------------------
# COMPREPLY of the completion function for the words given (the last is the
# one being completed), one a line.
complete_bash() {
    PATH="$prefix/bin:$PATH" bash -c 'source "$0" || exit 1
        COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=()
        _baton && { [ ${#COMPREPLY[@]} -eq 0 ] || printf "%s\n" "${COMPREPLY[@]}"; }' "$bash_script" "$@"
}
check "bash: the script registers _baton for baton" \
    bash -c 'source "$0" && complete -p baton | grep -q -- "-F _baton baton$"' "$bash_script"
mapfile -t got < <(complete_bash baton '')
has_all "bash: baton <TAB> offers every command" "${cmds[*]}" "${got[@]}"
for c in "${cmds[@]}"; do
    mapfile -t got < <(complete_bash baton "$c" -)
    has_all "bash: baton $c -<TAB> offers its options" "$(options_of "$c")" "${got[@]}"
done
for c in "${cmds[@]}"; do
    mapfile -t got < <(complete_bash baton "$c" -)
    dups="$(printf '%s\n' "${got[@]}" | sort | uniq -d | tr '\n' ' ')"
    check "bash: baton $c -<TAB> offers each option once${dups:+ (twice: $dups)}" test -z "$dups"
done
mapfile -t got < <(complete_bash baton help '')
has_all "bash: baton help <TAB> offers every command" "${cmds[*]}" "${got[@]}"
mapfile -t got < <(complete_bash baton -)
has_all "bash: baton -<TAB> offers -h, --help, -V, --version" "-h --help -V --version" "${got[@]}"
mapfile -t got < <(complete_bash baton run -c '')
has_all "bash: baton run -c <TAB> offers the coders" "${coders[*]}" "${got[@]}"
mapfile -t got < <(complete_bash baton run --coder = '')
has_all "bash: baton run --coder=<TAB> offers the coders" "${coders[*]}" "${got[@]}"
mapfile -t got < <(complete_bash baton send --approval '')
has_all "bash: baton send --approval <TAB> offers the policies" "deny auto never" "${got[@]}"
mapfile -t got < <(complete_bash baton completion '')
has_all "bash: baton completion <TAB> offers the shells" "bash zsh" "${got[@]}"
mkdir -p "$tmp/dirs/project"
mapfile -t got < <(cd "$tmp/dirs" && complete_bash baton run -C pro)
has_all "bash: baton run -C pro<TAB> offers the directory" "project" "${got[@]}"
for c in send show rm attach; do
    mapfile -t got < <(complete_bash baton "$c" --json '')
    [ "$c" = rm ] && mapfile -t got < <(complete_bash baton "$c" '')
    has_all "bash: baton $c <TAB> offers the conversation ids" "${convs[*]}" "${got[@]}"
done
mapfile -t got < <(complete_bash baton send "${convs[0]}" '')
check "bash: nothing after CONV where the prompt goes (got: ${got[*]})" test ${#got[@]} -eq 0
mapfile -t got < <(complete_bash baton show "${convs[1]:0:12}")
has_all "bash: baton show PREFIX<TAB> completes the id" "${convs[1]}" "${got[@]}"
mapfile -t got < <(complete_bash baton show -- '')
has_all "bash: after -- CONV is still completed" "${convs[*]}" "${got[@]}"
mapfile -t got < <(complete_bash baton run --timeout '')
check "bash: nothing for --timeout's value (got: ${got[*]})" test ${#got[@]} -eq 0
mapfile -t got < <(BATON_HOME="$tmp/none" complete_bash baton send '')
check "bash: no store, no ids and no store made" \
    test ${#got[@]} -eq 0 -a ! -e "$tmp/none"

# --- zsh ---------------------------------------------------------------------
out="$(zsh -f -c 'fpath=("$0" $fpath); autoload -U compinit; compinit -u -D; print -r -- $_comps[baton]' "$zsh_dir" 2>&1)"
check "zsh: compinit finds _baton in fpath (#compdef baton)${out:+: $out}" test "$out" = _baton
out="$(zsh -f -c 'autoload -U compinit; compinit -u -D; source "$0"; print -r -- $_comps[baton]' "$zsh_dir/_baton" 2>&1)"
check "zsh: sourcing _baton after compinit registers it${out:+: $out}" test "$out" = _baton
lines=("baton " "baton run -c " "baton run --approval=" "baton send " "baton completion ")
for c in "${cmds[@]}"; do lines+=("baton $c -"); done
if PATH="$prefix/bin:$PATH" timeout 120 zsh -f "$here/zsh-complete.zsh" "$zsh_dir" "$tmp/zsh" \
    "${lines[@]}" >"$tmp/zsh.log" 2>&1; then
    zgot() { mapfile -t got <"$tmp/zsh.$1"; }
    zgot 1 && has_all "zsh: baton <TAB> offers every command" "${cmds[*]}" "${got[@]}"
    zgot 2 && has_all "zsh: baton run -c <TAB> offers the coders" "${coders[*]}" "${got[@]}"
    zgot 3 && has_all "zsh: baton run --approval=<TAB> offers the policies" "deny auto never" \
        "${got[@]}"
    zgot 4 && has_all "zsh: baton send <TAB> offers the conversation ids" "${convs[*]}" "${got[@]}"
    zgot 5 && has_all "zsh: baton completion <TAB> offers the shells" "bash zsh" "${got[@]}"
    k=5
    for c in "${cmds[@]}"; do
        zgot $((++k)) && has_all "zsh: baton $c -<TAB> offers its options" "$(options_of "$c")" \
            "${got[@]}"
    done
else
    fail "zsh: completion in a pseudo-terminal: $(cat "$tmp/zsh.log")"
fi

echo "install-docs: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
