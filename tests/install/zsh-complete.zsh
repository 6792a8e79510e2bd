# SPDX-License-Identifier: MIT
#
# zsh-complete.zsh: what zsh's completion offers for command lines, through
# a real interactive zsh in a pseudo-terminal (zsh/zpty) with the _baton in
# FPATH_DIR loaded by compinit. compadd is wrapped to record the matches it
# is given (compadd -O: the words that match what is typed), so OUT.N gets
# the candidates of the Nth LINE, one a line.
#
# usage: zsh -f zsh-complete.zsh FPATH_DIR OUT LINE...
zmodload zsh/zpty || exit 1
dir=$1 out=$2
shift 2

# Wait until the shell in the pty has run everything sent so far (at most 10 s).
sync_pty() {
    zpty -w z "print -r -- '--end--' >>${(q)out}"
    local i line
    for i in {1..100}; do
        # read what the shell writes to its terminal, or it blocks once the
        # pty's buffer is full (completion lists are long)
        while zpty -rt z line 2>/dev/null; do :; done
        grep -q -- '--end--' $out 2>/dev/null && return 0
        sleep 0.1
    done
    print -u2 "zsh-complete: the shell in the pty did not answer"
    return 1
}

zpty z zsh -f -i || exit 1
zpty -w z "PS1='%% '; fpath=(${(q)dir} \$fpath); autoload -U compinit; compinit -u -D"
zpty -w z "compadd() { local -a m; builtin compadd -O m \"\$@\"; print -rl -- \$m >>${(q)out}; builtin compadd \"\$@\"; }"
zpty -w z 'zstyle ":completion:*" list-prompt ""; LISTMAX=100000'
sync_pty || exit 1
rm -f $out
k=0
for l in "$@"; do
    zpty -w -n z "$l"$'\t'
    zpty -w -n z $'\C-u'
    sync_pty || exit 1
    (( k++ )) # not in the redirection: zsh expands that in the forked grep
    grep -v -- '--end--' $out >$out.$k
    rm -f $out
done
zpty -d z
