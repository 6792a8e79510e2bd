/* SPDX-License-Identifier: MIT */
/*
 * cmd-table: the table of the CLI's commands, made from cmds.def: each
 * command's entry (operands, options, help text) is in its own cmd-*.c,
 * beside the command. The parser (cmd-args.c), `baton help`, the man page
 * and the shell completions all read this one table. Also the exit codes
 * as the help and the man page explain them.
 */
#include <stddef.h>
#include <string.h>

#include "cmd-args.h"
#include "cmd.h"

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
