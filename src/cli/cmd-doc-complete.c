/* SPDX-License-Identifier: MIT */
/*
 * cmd-doc-complete: the bash and zsh completion scripts `baton completion`
 * prints, written from the command table through the model of cmd-doc.h.
 * They complete command names, each command's options, an option's value
 * where it is a coder (the coder table), a directory or a listed choice,
 * and conversation ids where the usage line says CONV, asking
 * `baton __ids` at completion time (it opens the store read-mostly and
 * creates nothing).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doc.h"
#include "coder.h"
#include "util.h"

/* The coder names, space-separated (owned). */
static char *coder_names(void)
{
    struct bt_buf b = BT_BUF_INIT;
    for (size_t i = 0; bt_coders[i]; i++)
        bt_buf_addf(&b, "%s%s", i ? " " : "", bt_coders[i]->name);
    return bt_buf_detach(&b, NULL);
}

/* The parsed public commands of the table; *n of them. Free with
 * free_cmds. */
static struct bt_doc_cmd *public_cmds(const struct bt_cmd_table *t, size_t *n)
{
    struct bt_doc_cmd *v = bt_xcalloc(t->n, sizeof(*v));
    *n = 0;
    for (size_t i = 0; i < t->n; i++)
        if (bt_doc_public(t->cmds[i]))
            bt_doc_parse(t, t->cmds[i], &v[(*n)++]);
    return v;
}

static void free_cmds(struct bt_doc_cmd *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        bt_doc_release(&v[i]);
    free(v);
}

/* --- bash ----------------------------------------------------------------- */

/* The words that complete a value of kind v (choices for CHOICE); NULL
 * for DIR, CONV and NONE, which bash completes otherwise or not at all. */
static const char *value_words(enum bt_doc_value v, const char *choices, const char *coders)
{
    return v == BT_DOC_VALUE_CHOICE ? choices : v == BT_DOC_VALUE_CODER ? coders : NULL;
}

static const char bash_head[] =
    "# COMPREPLY += the completions compgen \"$@\" gives for word $1, each after\n"
    "# $_baton_pre (\"--opt=\" when bash left the option in the word).\n"
    "_baton_add() {\n"
    "    local cur=$1 w\n"
    "    shift\n"
    "    while IFS= read -r w; do COMPREPLY+=(\"$_baton_pre$w\"); done < <(compgen \"$@\" -- "
    "\"$cur\")\n"
    "}\n"
    "\n"
    "# COMPREPLY += the conversation ids that start with $1 (baton __ids).\n"
    "_baton_ids() {\n"
    "    local bin=${COMP_WORDS[0]} id _\n"
    "    [[ $bin == \"~/\"* ]] && bin=$HOME/${bin#\"~/\"}\n"
    "    while IFS=$'\\t' read -r id _; do COMPREPLY+=(\"$id\"); done < <(\"$bin\" __ids -- "
    "\"$1\" 2>/dev/null)\n"
    "}\n"
    "\n";

static void bash_value(struct bt_buf *b, const struct bt_doc_cmd *cmds, size_t n,
                       const char *coders)
{
    bt_buf_adds(b, "# COMPREPLY += the values of option $2 of command $1 that start with $3.\n"
                   "_baton_value() {\n    case \"$1 $2\" in\n");
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < cmds[i].nitems; k++) {
            const struct bt_doc_item *it = &cmds[i].items[k];
            const char *words = value_words(it->value, it->choices, coders);
            if (!it->is_opt || !it->arg ||
                (!words && it->value != BT_DOC_VALUE_DIR && it->value != BT_DOC_VALUE_CONV))
                continue;
            const char *name = cmds[i].cmd->name;
            bt_buf_adds(b, "    ");
            if (it->shrt)
                bt_buf_addf(b, "\"%s %s\"%s", name, it->shrt, it->lng ? " | " : "");
            if (it->lng)
                bt_buf_addf(b, "\"%s %s\"", name, it->lng);
            if (words)
                bt_buf_addf(b, ") _baton_add \"$3\" -W '%s' ;;\n", words);
            else if (it->value == BT_DOC_VALUE_DIR)
                bt_buf_adds(b, ") compopt -o filenames 2>/dev/null; _baton_add \"$3\" -d ;;\n");
            else
                bt_buf_adds(b, ") _baton_ids \"$3\" ;;\n");
        }
    bt_buf_adds(b, "    esac\n}\n\n");
}

static const char bash_body[] =
    "    # skip to the current word, counting the arguments before it\n"
    "    local j w n=0 dd=0\n"
    "    for ((j = 2; j < cword; j++)); do\n"
    "        w=${COMP_WORDS[j]}\n"
    "        if ((dd)); then n=$((n + 1)); continue; fi\n"
    "        case $w in\n"
    "        --) dd=1 ;;\n"
    "        =) j=$((j + 1)) ;; # the value of a split \"--opt=value\"\n"
    "        -) n=$((n + 1)) ;;\n"
    "        -*) [[ \" $vopts \" == *\" $w \"* && ${COMP_WORDS[j + 1]} != = ]] && j=$((j + 1)) ;;\n"
    "        *) n=$((n + 1)) ;;\n"
    "        esac\n"
    "    done\n"
    "    if ((!dd)) && [[ \" $vopts \" == *\" $prev \"* ]]; then\n"
    "        _baton_value \"$cmd\" \"$prev\" \"$cur\"\n"
    "        return 0\n"
    "    fi\n"
    "    if ((!dd)) && [[ $cur == -* ]]; then\n"
    "        _baton_add \"$cur\" -W \"$opts\"\n"
    "        return 0\n"
    "    fi\n";

char *bt_doc_bash(const struct bt_cmd_table *table)
{
    size_t n;
    struct bt_doc_cmd *cmds = public_cmds(table, &n);
    char *coders = coder_names();
    struct bt_buf b = BT_BUF_INIT;
    bt_buf_addf(&b,
                "# bash completion for baton(1), generated by `baton completion bash` (baton %s)\n"
                "# from baton's help text. Load it with `source <(baton completion bash)`, or\n"
                "# install it as ~/.local/share/bash-completion/completions/baton.\n\n",
                BATON_VERSION);
    bt_buf_adds(&b, bash_head);
    bash_value(&b, cmds, n, coders);
    bt_buf_adds(&b, "_baton() {\n"
                    "    local cword=$COMP_CWORD cur=${COMP_WORDS[COMP_CWORD]} prev= _baton_pre=\n"
                    "    COMPREPLY=()\n"
                    "    ((cword > 0)) && prev=${COMP_WORDS[cword - 1]}\n"
                    "    # bash splits \"--opt=value\" at the = (COMP_WORDBREAKS): see through it\n"
                    "    if [[ $cur == = && $prev == --* ]]; then\n"
                    "        cur=\n"
                    "    elif [[ $prev == = ]] && ((cword > 2)); then\n"
                    "        prev=${COMP_WORDS[cword - 2]}\n"
                    "    elif [[ $cur == --*=* ]]; then\n"
                    "        prev=${cur%%=*} _baton_pre=${cur%%=*}= cur=${cur#*=}\n"
                    "    fi\n"
                    "    if ((cword == 1)); then\n"
                    "        _baton_add \"$cur\" -W '");
    for (size_t i = 0; i < n; i++)
        bt_buf_addf(&b, "%s ", cmds[i].cmd->name);
    bt_buf_adds(&b, "-h --help -V --version'\n"
                    "        return 0\n"
                    "    fi\n"
                    "    local cmd=${COMP_WORDS[1]} opts vopts\n"
                    "    case $cmd in\n");
    for (size_t i = 0; i < n; i++) {
        struct bt_buf opts = BT_BUF_INIT, vopts = BT_BUF_INIT;
        for (size_t k = 0; k < cmds[i].nitems; k++) {
            const struct bt_doc_item *it = &cmds[i].items[k];
            if (!it->is_opt || bt_doc_is_help(it)) /* -h --help: added below */
                continue;
            struct bt_buf *to[] = {&opts, it->arg ? &vopts : NULL};
            for (size_t t = 0; t < 2 && to[t]; t++) {
                if (it->shrt)
                    bt_buf_addf(to[t], "%s ", it->shrt);
                if (it->lng)
                    bt_buf_addf(to[t], "%s ", it->lng);
            }
        }
        if (vopts.len)
            vopts.data[--vopts.len] = '\0';
        bt_buf_addf(&b, "    %s) opts='%s-h --help' vopts='%s' ;;\n", cmds[i].cmd->name, opts.data,
                    vopts.data);
        bt_buf_release(&opts);
        bt_buf_release(&vopts);
    }
    bt_buf_adds(&b, "    *) return 0 ;;\n    esac\n");
    bt_buf_adds(&b, bash_body);
    bt_buf_adds(&b, "    case \"$cmd $n\" in\n");
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < cmds[i].nargs; k++) {
            const struct bt_doc_arg *a = &cmds[i].args[k];
            if (a->value == BT_DOC_VALUE_NONE)
                continue;
            bt_buf_addf(&b, "    \"%s %zu\"%s) ", cmds[i].cmd->name, k, a->repeat ? "*" : "");
            if (a->value == BT_DOC_VALUE_CONV)
                bt_buf_adds(&b, "_baton_ids \"$cur\" ;;\n");
            else
                bt_buf_addf(&b, "_baton_add \"$cur\" -W '%s' ;;\n",
                            value_words(a->value, a->choices, coders));
        }
    bt_buf_adds(&b, "    esac\n    return 0\n}\n\ncomplete -F _baton baton\n");
    free(coders);
    free_cmds(cmds, n);
    return bt_buf_detach(&b, NULL);
}

/* --- zsh ------------------------------------------------------------------ */

/* s as text inside a single-quoted _arguments spec: ' as '\'', and the
 * spec's own syntax ([ ] : \) escaped with a backslash. Only its first n
 * bytes, less a trailing ';' or ','. */
static void zsh_text(struct bt_buf *b, const char *s, size_t n)
{
    while (n > 0 && (s[n - 1] == ';' || s[n - 1] == ',' || s[n - 1] == ' '))
        n--;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\'')
            bt_buf_adds(b, "'\\''");
        else if (s[i] == '[' || s[i] == ']' || s[i] == ':' || s[i] == '\\')
            bt_buf_addf(b, "\\%c", s[i]);
        else
            bt_buf_addc(b, s[i]);
    }
}

/* ":message:action" for a value named name of kind v. */
static void zsh_action(struct bt_buf *b, const char *name, enum bt_doc_value v, const char *choices,
                       const char *coders)
{
    static const char *const words[][2] = {
        {"CONV", "conversation"}, {"DIR", "directory"}, {"S", "seconds"}, {"N", "number"}};
    struct bt_buf msg = BT_BUF_INIT;
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]) && !msg.len; i++)
        if (strcmp(name, words[i][0]) == 0)
            bt_buf_adds(&msg, words[i][1]);
    for (const char *p = msg.len ? "" : name; *p; p++)
        bt_buf_addc(&msg, (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p));
    bt_buf_addc(b, ':');
    zsh_text(b, msg.data, msg.len);
    bt_buf_release(&msg);
    switch (v) {
    case BT_DOC_VALUE_CODER: bt_buf_addf(b, ":(%s)", coders); break;
    case BT_DOC_VALUE_CHOICE: bt_buf_addf(b, ":(%s)", choices); break;
    case BT_DOC_VALUE_DIR: bt_buf_adds(b, ":_files -/"); break;
    case BT_DOC_VALUE_CONV: bt_buf_adds(b, ":_baton_convs"); break;
    case BT_DOC_VALUE_NONE: bt_buf_adds(b, ": "); break;
    }
}

static void zsh_command(struct bt_buf *b, const struct bt_doc_cmd *d, const char *coders)
{
    bt_buf_addf(b,
                "        %s)\n            _arguments -s -S \\\n"
                "                '(- *)'{-h,--help}'[show the command'\\''s help]'",
                d->cmd->name);
    for (size_t k = 0; k < d->nitems; k++) {
        const struct bt_doc_item *it = &d->items[k];
        if (!it->is_opt || bt_doc_is_help(it)) /* -h --help: above */
            continue;
        bt_buf_adds(b, " \\\n                ");
        const char *sfx = it->arg ? "+" : "", *lsfx = it->arg ? "=" : "";
        if (it->shrt && it->lng)
            bt_buf_addf(b, "'(%s %s)'{%s%s,%s%s}'[", it->shrt, it->lng, it->shrt, sfx, it->lng,
                        lsfx);
        else
            bt_buf_addf(b, "'%s%s[", it->shrt ? it->shrt : it->lng, it->shrt ? sfx : lsfx);
        zsh_text(b, it->text, it->first_len);
        bt_buf_addc(b, ']');
        if (it->arg)
            zsh_action(b, it->arg, it->value, it->choices, coders);
        bt_buf_addc(b, '\'');
    }
    for (size_t k = 0; k < d->nargs; k++) {
        const struct bt_doc_arg *a = &d->args[k];
        /* "PROMPT|-" is named by its first alternative */
        size_t len = strcspn(a->name, "|.");
        char *name =
            a->value == BT_DOC_VALUE_CHOICE ? bt_xstrdup("argument") : bt_xstrndup(a->name, len);
        bt_buf_addf(b, " \\\n                '%s", a->repeat ? "*" : "");
        zsh_action(b, name, a->value, a->choices, coders);
        bt_buf_addc(b, '\'');
        free(name);
    }
    bt_buf_adds(b, "\n            ;;\n");
}

char *bt_doc_zsh(const struct bt_cmd_table *table)
{
    size_t n;
    struct bt_doc_cmd *cmds = public_cmds(table, &n);
    char *coders = coder_names();
    struct bt_buf b = BT_BUF_INIT;
    bt_buf_addf(&b,
                "#compdef baton\n"
                "# zsh completion for baton(1), generated by `baton completion zsh` (baton %s)\n"
                "# from baton's help text. Install it as _baton in a directory of $fpath, or\n"
                "# load it with `source <(baton completion zsh)` after compinit.\n\n",
                BATON_VERSION);
    bt_buf_adds(&b,
                "# The conversations, id and title, from `baton __ids`.\n"
                "_baton_convs() {\n"
                "    local -a convs\n"
                "    local line\n"
                "    for line in ${(f)\"$(_call_program conversations ${(q)_baton_bin} __ids "
                "2>/dev/null)\"}; do\n"
                "        convs+=(\"${line%%$'\\t'*}:${line#*$'\\t'}\")\n"
                "    done\n"
                "    _describe -t conversations conversation convs\n"
                "}\n\n"
                "_baton() {\n"
                "    local curcontext=$curcontext state line _baton_bin=${words[1]/#\\~/$HOME}\n"
                "    typeset -A opt_args\n"
                "    local -a subcommands=(\n");
    for (size_t i = 0; i < n; i++) {
        bt_buf_addf(&b, "        '%s:", cmds[i].cmd->name);
        zsh_text(&b, cmds[i].cmd->summary, strlen(cmds[i].cmd->summary));
        bt_buf_adds(&b, "'\n");
    }
    bt_buf_adds(&b, "    )\n"
                    "    _arguments -C \\\n"
                    "        '(- *)'{-h,--help}'[list the commands]' \\\n"
                    "        '(- *)'{-V,--version}'[print the version]' \\\n"
                    "        '1:command:->command' \\\n"
                    "        '*:: :->argument' && return 0\n"
                    "    case $state in\n"
                    "    command) _describe -t commands command subcommands ;;\n"
                    "    argument)\n"
                    "        curcontext=${curcontext%:*:*}:baton-$words[1]:\n"
                    "        case $words[1] in\n");
    for (size_t i = 0; i < n; i++)
        zsh_command(&b, &cmds[i], coders);
    bt_buf_adds(&b, "        esac\n"
                    "        ;;\n"
                    "    esac\n"
                    "}\n\n"
                    "if [[ $zsh_eval_context[-1] == loadautofunc ]]; then\n"
                    "    _baton \"$@\"\n"
                    "else\n"
                    "    compdef _baton baton\n"
                    "fi\n");
    free(coders);
    free_cmds(cmds, n);
    return bt_buf_detach(&b, NULL);
}
