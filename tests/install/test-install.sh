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
# shellcheck source=tests/scripts/scratch.sh
source "$src/tests/scripts/scratch.sh"
tmp="$(scratch_dir install)" || exit 1
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0

# shellcheck source=tests/scripts/lines.sh
source "$src/tests/scripts/lines.sh"
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
    local x
    for x in "$@"; do [ "$x" = "$w" ] && return 0; done
    return 1
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
ids_of() { "$baton" ls --json | sed -n 's/^{"id":"\([0-9a-z]*\)".*/\1/p'; }
convs=()
lines_of convs ids_of || fail "baton ls --json failed"
check "two conversations to complete" test ${#convs[@]} -eq 2

commands_of() { "$baton" --help | sed -n '/^commands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p'; }
cmds=()
lines_of cmds commands_of || fail "baton --help failed"
check "baton --help lists the commands (${#cmds[@]})" test ${#cmds[@]} -ge 10
coders_of() { "$baton" coders --json | sed -n 's/^{"coder":"\([^"]*\)".*/\1/p'; }
coders=()
lines_of coders coders_of || fail "baton coders --json failed"
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
    opts=()
    lines_of opts options_of "$c" || missing+=("(baton $c --help failed)")
    for o in "${opts[@]}"; do
        [ -z "$o" ] || grep -qF -- "$o" <<<"$sect" || missing+=("$o")
    done
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
# got=(the completions of complete_bash WORDS...); a completion that fails
# is a failure of its own, and the check after it (&&) is not made.
completions() {
    lines_of got complete_bash "$@" && return 0
    fail "bash: completing '$*' failed"
    return 1
}
check "bash: the script registers _baton for baton" \
    bash -c 'source "$0" && complete -p baton | grep -q -- "-F _baton baton$"' "$bash_script"
completions baton '' &&
    has_all "bash: baton <TAB> offers every command" "${cmds[*]}" "${got[@]}"
for c in "${cmds[@]}"; do
    completions baton "$c" - &&
        has_all "bash: baton $c -<TAB> offers its options" "$(options_of "$c")" "${got[@]}"
done
for c in "${cmds[@]}"; do
    completions baton "$c" - || continue
    dups="$(printf '%s\n' "${got[@]}" | sort | uniq -d | tr '\n' ' ')"
    check "bash: baton $c -<TAB> offers each option once${dups:+ (twice: $dups)}" test -z "$dups"
done
completions baton help '' &&
    has_all "bash: baton help <TAB> offers every command" "${cmds[*]}" "${got[@]}"
completions baton - &&
    has_all "bash: baton -<TAB> offers -h, --help, -V, --version" "-h --help -V --version" "${got[@]}"
completions baton run -c '' &&
    has_all "bash: baton run -c <TAB> offers the coders" "${coders[*]}" "${got[@]}"
completions baton run --coder = '' &&
    has_all "bash: baton run --coder=<TAB> offers the coders" "${coders[*]}" "${got[@]}"
completions baton send --approval '' &&
    has_all "bash: baton send --approval <TAB> offers the policies" "deny auto never" "${got[@]}"
completions baton completion '' &&
    has_all "bash: baton completion <TAB> offers the shells" "bash zsh" "${got[@]}"
mkdir -p "$tmp/dirs/project"
in_dirs() { cd "$tmp/dirs" && complete_bash "$@"; }
if lines_of got in_dirs baton run -C pro; then
    has_all "bash: baton run -C pro<TAB> offers the directory" "project" "${got[@]}"
else
    fail "bash: completing 'baton run -C pro' in $tmp/dirs failed"
fi
for c in send show rm attach; do
    if [ "$c" = rm ]; then completions baton "$c" ''; else completions baton "$c" --json ''; fi &&
        has_all "bash: baton $c <TAB> offers the conversation ids" "${convs[*]}" "${got[@]}"
done
completions baton send "${convs[0]}" '' &&
    check "bash: nothing after CONV where the prompt goes (got: ${got[*]})" test ${#got[@]} -eq 0
completions baton show "${convs[1]:0:12}" &&
    has_all "bash: baton show PREFIX<TAB> completes the id" "${convs[1]}" "${got[@]}"
completions baton show -- '' &&
    has_all "bash: after -- CONV is still completed" "${convs[*]}" "${got[@]}"
completions baton run --timeout '' &&
    check "bash: nothing for --timeout's value (got: ${got[*]})" test ${#got[@]} -eq 0
no_store() { BATON_HOME="$tmp/none" complete_bash "$@"; }
if lines_of got no_store baton send ''; then
    check "bash: no store, no ids and no store made" \
        test ${#got[@]} -eq 0 -a ! -e "$tmp/none"
else
    fail "bash: completing 'baton send' without a store failed"
fi

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
