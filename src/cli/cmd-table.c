/* SPDX-License-Identifier: MIT */
/*
 * cmd-table: the table of the CLI's commands, made from cmds.def: each
 * command's entry (operands, options, help text) is in its own cmd-*.c,
 * beside the command. The parser (cmd-args.c), `baton help`, the man page
 * and the shell completions all read this one table. Also the exit codes
 * as the help and the man page explain them, and the commands whose
 * subject is the table itself (`baton __man`, `baton completion`, the
 * entry of `baton help`, which main.c answers): they hand the table down
 * to the generators (doc.c, cmd-doc.c, cmd-doc-complete.c), which so never
 * refer back to it.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd-args.h"
#include "cmd.h"
#include "doc.h"

const struct bt_exit_doc bt_exit_codes[] = {
    {.code = BT_EXIT_OK,
     .name = "completed",
     .text = "the turn completed (for search: something matched)"},
    {.code = BT_EXIT_FAILED,
     .name = "failed",
     .text = "the turn failed; the error event and `baton show` say why (for search: nothing "
             "matched)"},
    {.code = BT_EXIT_USAGE,
     .name = "usage",
     .text = "usage error: a bad option, an unknown conversation, an empty prompt, or a request "
             "refused in the conversation's state"},
    {.code = BT_EXIT_NOT_INSTALLED,
     .name = "coder not installed",
     .text = "the coder is not installed"},
    {.code = BT_EXIT_AUTH, .name = "auth required", .text = "the coder needs a login"},
    {.code = BT_EXIT_CANCELLED, .name = "cancelled", .text = "the turn was cancelled"},
    {.code = BT_EXIT_STDOUT_CLOSED,
     .name = "stdout closed",
     .text = "baton's stdout was closed under the turn (`baton run ... | head`), which was stopped "
             "as a cancel would stop it; 128 + SIGPIPE, as a shell reports a tool SIGPIPE killed"},
    {0},
};

#define BT_CMD(id) &bt_cmd_def_##id,
const struct bt_cmd *const bt_cmds[] = {
#include "cmds.def"
};
#undef BT_CMD
const size_t bt_n_cmds = sizeof(bt_cmds) / sizeof(bt_cmds[0]);

const struct bt_cmd *bt_cmd_find(const char *name)
{
    for (size_t i = 0; i < bt_n_cmds; i++)
        if (strcmp(bt_cmds[i]->name, name) == 0)
            return bt_cmds[i];
    return NULL;
}

/* The table as the generators take it. */
static const struct bt_cmd_table table = {bt_cmds, sizeof(bt_cmds) / sizeof(bt_cmds[0]),
                                          bt_exit_codes};

/* --- the commands that print the table ------------------------------------ */

const struct bt_cmd bt_cmd_def_man = {.name = "__man",
                                      .run = bt_cmd_man,
                                      .operands = "",
                                      .summary = "the man page baton(1) in roff",
                                      .notes = ""};

int bt_cmd_man(int argc, char **argv)
{
    struct bt_args a;
    int rc = bt_args_parse_plain(&a, &bt_cmd_def_man, argc, argv);
    if (rc)
        return rc < 0 ? 0 : rc;
    char *page = bt_doc_man(&table);
    fputs(page, stdout);
    free(page);
    return BT_EXIT_OK; /* main checks that stdout took it */
}

const struct bt_cmd bt_cmd_def_completion = {
    .name = "completion",
    .run = bt_cmd_completion,
    .operands = "bash|zsh",
    .summary = "print a shell completion script",
    .notes = "Prints the completion script of the shell named, made from this help text:\n"
             "commands, their options, coders after -c, conversation ids where CONV goes.\n"
             "bash: `source <(baton completion bash)` in ~/.bashrc; zsh: save it as _baton\n"
             "in a directory of $fpath. `cmake --install` installs both, and baton(1).\n"};

const struct bt_cmd bt_cmd_def_help = {.name = "help",
                                       .run = NULL, /* main.c answers it */
                                       .operands = "[COMMAND]",
                                       .summary = "this help, or a command's",
                                       .notes = ""};

int bt_cmd_completion(int argc, char **argv)
{
    struct bt_args a;
    int rc = bt_args_parse_plain(&a, &bt_cmd_def_completion, argc, argv);
    if (rc)
        return rc < 0 ? 0 : rc;
    const char *shell = a.operands[0];
    char *script = strcmp(shell, "bash") == 0  ? bt_doc_bash(&table)
                   : strcmp(shell, "zsh") == 0 ? bt_doc_zsh(&table)
                                               : NULL;
    if (!script)
        return bt_args_fail(&a, "unknown shell '%s': bash or zsh", shell);
    fputs(script, stdout);
    free(script);
    return BT_EXIT_OK; /* main checks that stdout took it */
}
