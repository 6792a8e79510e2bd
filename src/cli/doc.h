/* SPDX-License-Identifier: MIT */
/*
 * doc: what the man page and the shell completions are generated from.
 * Both read the command table (src/cli/cmd-table.c hands it down as a
 * struct bt_cmd_table) through this model, as the parser and `baton COMMAND --help` do, so none can
 * drift: a command's options and their choices come from its option table, its arguments from its
 * operands ("CONV [PROMPT|-]"), prose from its notes.
 */
#ifndef BT_DOC_H
#define BT_DOC_H

#include <stddef.h>

#include "cmd.h"
#include "util.h"

/* What completes a value. */
enum bt_doc_value {
    BT_DOC_VALUE_NONE,   /* free text (a model, seconds, a count) */
    BT_DOC_VALUE_CODER,  /* a coder name: the option's argument is CODER */
    BT_DOC_VALUE_DIR,    /* a directory: the argument is DIR */
    BT_DOC_VALUE_CHOICE, /* one of `choices`, listed in the usage line */
    BT_DOC_VALUE_CONV,   /* a conversation id: the argument is CONV */
};

/* One block of a command's help: an option with its description, or a
 * paragraph of its notes. */
struct bt_doc_item {
    int is_opt;              /* 1: an option; 0: a paragraph (text only) */
    char *shrt;              /* "-c", or NULL without a short form */
    char *lng;               /* "--coder", or NULL without a long form */
    char *arg;               /* "CODER", or NULL for a flag */
    char *choices;           /* "deny auto never" (BT_DOC_VALUE_CHOICE), else NULL */
    enum bt_doc_value value; /* what completes the option's value */
    char *text;              /* description or paragraph, lines joined by spaces */
    size_t first_len;        /* length of text's first help line (a short summary) */
};

/* One operand outside brackets: "CONV", "bash|zsh", "WORD...". */
struct bt_doc_arg {
    char *name;              /* as the usage line has it */
    enum bt_doc_value value; /* CONV, CHOICE ("bash|zsh") or NONE */
    char *choices;           /* "bash zsh" for CHOICE, else NULL */
    int repeat;              /* 1 for "WORD...": it takes every later word */
};

/* A command of the table, parsed. All strings owned. */
struct bt_doc_cmd {
    const struct bt_cmd *cmd; /* borrowed from the table */
    struct bt_doc_item *items;
    size_t nitems;
    struct bt_doc_arg *args;
    size_t nargs;
};

/* Read cmd's options (then -h/--help), notes and operands into *out
 * (bt_doc_release frees it); an operand COMMAND has the public commands
 * of t as its choices (t NULL: none). Never fails. */
void bt_doc_parse(const struct bt_cmd_table *t, const struct bt_cmd *cmd, struct bt_doc_cmd *out);
void bt_doc_release(struct bt_doc_cmd *d);

/* 1 for the -h/--help every command takes (the last option item). */
int bt_doc_is_help(const struct bt_doc_item *it);

/* 1 for a command `baton --help` lists (its name does not start "__"). */
int bt_doc_public(const struct bt_cmd *cmd);

/* --- roff (man(7)) ------------------------------------------------------ */

/* Append s as roff running text: a backslash as \e, every hyphen as \-
 * (so options copied from the page work), `code` in bold, a non-ASCII
 * character as \[uXXXX] (an invalid UTF-8 byte as U+FFFD), control
 * characters as spaces, \& before a '.' or '\'' that would start a line
 * (it would be a request otherwise), and a line break at a space once a
 * line holds 64 bytes. */
void bt_doc_roff_text(struct bt_buf *b, const char *s);
/* s[0..n) escaped as by bt_doc_roff_text, in font f ('B' or 'I'). */
void bt_doc_roff_font(struct bt_buf *b, char f, const char *s, size_t n);
/* A usage line ("[-c CODER] CONV PROMPT|-"): options and lower-case words
 * bold, placeholders italic, brackets and bars roman, the spaces inside
 * brackets unbreakable ("\ "). One output line: the caller turns
 * hyphenation and adjustment off around it. */
void bt_doc_roff_usage(struct bt_buf *b, const char *usage);

/* --- completion scripts (cmd-doc-complete.c) ------------------------------ */

/* The bash and zsh completion scripts for the public commands of table
 * t, as `baton completion SHELL` prints them. Caller frees. */
char *bt_doc_bash(const struct bt_cmd_table *t);
char *bt_doc_zsh(const struct bt_cmd_table *t);

/* --- the man page (cmd-doc.c) --------------------------------------------- */

/* baton(1) in roff, made from table t (its public commands and exit
 * codes), as `baton __man` prints it. Caller frees. */
char *bt_doc_man(const struct bt_cmd_table *t);

#endif
