/* SPDX-License-Identifier: MIT */
/*
 * cmd-args: the grammar of baton's command line, one parser for every
 * command, driven by the command table (cmd-table.c), which also gives the help,
 * the man page and the completions their text.
 *
 * The rules, chosen so that a script can trust what a line means:
 * - "--name", "--name=VALUE", "--name VALUE", "-x", "-xVALUE", "-x VALUE";
 *   long names are matched exactly (no abbreviations: a prefix that would
 *   be unique today may not be after the next release).
 * - Options and operands mix in any order; "--" ends the options and "-"
 *   is an operand. Short options are never grouped: "-hello" is one
 *   unknown option named as typed, never -h followed by "ello".
 * - A value given as the next argument may not start with '-' ("--model
 *   --json" is an error, "--model=--json" is a value), except a negative
 *   number for a number (N, S, SEQ): "--limit -1" is the value -1, which
 *   the command refuses as it refuses 0.
 * - -h/--help prints the help (exit 0) only when the line holds nothing
 *   else: no operand, no bad option. "baton run --help 'fix it'" is a
 *   usage error, since a script may have meant a prompt.
 * - Every usage error names the argument, prints the usage line and exits 2.
 */
#ifndef BT_CMD_ARGS_H
#define BT_CMD_ARGS_H

#include <stdio.h>

struct bt_cmd;

/* One option of a command. */
struct bt_opt {
    int id;              /* what bt_args_next returns for it: > 0, unique in
                            the command (a character constant reads well) */
    char letter;         /* short name ('c' for -c), 0 if none */
    const char *name;    /* long name without "--", e.g. "coder" */
    const char *value;   /* the value's name in help ("CODER"); NULL: a flag */
    const char *help;    /* what it does; "\n" starts a continuation line */
    const char *choices; /* "deny|auto|never": the values completion offers;
                            NULL: any (the parser checks nothing here) */
};

/* The parse of one command line. Operands are gathered, in order, at the
 * front of argv (argv[1..n_operands]); argv[0], the command, stays. */
struct bt_args {
    const struct bt_cmd *cmd;
    int argc;
    char **argv;
    int next;          /* index of the next argument to read */
    int n_operands;    /* operands seen so far */
    int help;          /* -h or --help seen */
    int options_ended; /* "--" seen */
    const char *value; /* the value of the option bt_args_next returned */
    const char *arg;   /* that option's name as typed ("--timeout", "-t"),
                          without an attached value */
    char arg_buf[80];  /* where arg is kept */
    char **operands;   /* argv + 1 */
};

/* Start parsing argv by the rules of cmd, the command's own entry (its
 * cmd-*.c's, so the parser needs no table and the table's commands do not
 * call back into it); argv[0] is the command's name as typed. */
void bt_args_init(struct bt_args *a, const struct bt_cmd *cmd, int argc, char **argv);

/* The next option's id (its value in a->value), 0 when the line is read,
 * or -1 after printing what is wrong (the command then exits 2). */
int bt_args_next(struct bt_args *a);

/* After the last option: check the operand count against the command's
 * operands and handle -h/--help. Returns 0, -1 after printing the help on
 * stdout, or BT_EXIT_USAGE after printing what is wrong. */
int bt_args_end(struct bt_args *a);

/* Print "baton CMD: <reason>" and the usage line on stderr; returns
 * BT_EXIT_USAGE. */
int bt_args_fail(const struct bt_args *a, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Parse a command that takes no options of its own (only -h/--help):
 * 0, -1 after printing the help, or BT_EXIT_USAGE after saying why. */
int bt_args_parse_plain(struct bt_args *a, const struct bt_cmd *cmd, int argc, char **argv);

/* The operand counts a command's operand text allows ("CONV PROMPT|-",
 * "[PROMPT|-]", "WORD..."): *max is -1 for no limit. */
void bt_args_operand_counts(const char *operands, int *min, int *max);

/* Append cmd's options and operands as a usage line has them, one line:
 * "[-c CODER] [--json] ... [PROMPT|-]". */
struct bt_buf;
void bt_args_usage(const struct bt_cmd *cmd, struct bt_buf *b);
/* Write the usage line ("usage: baton NAME [...] OPERANDS", wrapped at 79
 * columns) and the full help of cmd. */
void bt_args_print_usage(const struct bt_cmd *cmd, FILE *f);
void bt_args_print_help(const struct bt_cmd *cmd, FILE *f);

#endif
