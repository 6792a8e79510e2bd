/* SPDX-License-Identifier: MIT */
/*
 * cmd-handoff: `baton handoff CONV [--tmux | --print]` continues a
 * conversation in its coder's own terminal UI, on the same native session
 * (the runner's handoff_argv: `codex resume ID`, `pi --session FILE`), in
 * the conversation's directory, with baton's own environment (the one that
 * made the coder work under baton: its home and config variables).
 *
 * - plain: replaces baton (exec) on this terminal; stdin and stdout must be
 *   terminals.
 * - --tmux: a detached tmux session named baton-<short id> runs it; one per
 *   conversation.
 * - --print: the command line, shell-quoted, and nothing else.
 *
 * The rules (what is refused, what is marked) are the service's
 * (service-handoff.c, shared with POST /v1/conversations/{id}/handoff);
 * this says what came of it. Every refusal exits 2 with one line and
 * changes nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd-args.h"
#include "cmd-common.h"
#include "cmd-exit.h"
#include "cmd.h"
#include "error.h"
#include "proc.h"
#include "service-conv.h"

static int parse(int argc, char **argv, enum bt_service_handoff_how *how, const char **conv)
{
    struct bt_args a;
    int id, set = 0;
    *how = BT_SERVICE_HANDOFF_EXEC;
    bt_args_init(&a, &bt_cmd_def_handoff, argc, argv);
    while ((id = bt_args_next(&a)) > 0) {
        enum bt_service_handoff_how want =
            id == 't' ? BT_SERVICE_HANDOFF_TMUX : BT_SERVICE_HANDOFF_PRINT;
        if (set && *how != want)
            return bt_args_fail(&a, "--tmux and --print exclude each other");
        *how = want;
        set = 1;
    }
    int rc = id < 0 ? BT_EXIT_USAGE : bt_args_end(&a);
    *conv = a.operands[0];
    return rc;
}

/* Where the coder works when the conversation has its own worktree: its
 * edits go there, not to the directory the user started from. */
static void say_worktree(const struct bt_store_conversation *c)
{
    if (!c->worktree.path)
        return;
    fputs("baton: in its worktree ", stderr);
    bt_term_write(stderr, c->worktree.path, strlen(c->worktree.path));
    fputs(" on branch ", stderr);
    bt_term_write(stderr, c->worktree.branch, strlen(c->worktree.branch));
    fputc('\n', stderr);
}

static int refused(const struct bt_service_handoff *h)
{
    return bt_cmd_fail(bt_cmd_exit_service(&(struct bt_service_outcome){.result = h->result}), "%s",
                       h->message ? h->message : "the handoff failed");
}

/* Replace baton with the coder's TUI on this terminal. */
static int run_here(struct bt_store **s, struct bt_service_handoff *h)
{
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
        return bt_cmd_fail(BT_EXIT_USAGE,
                           "handoff needs a terminal on stdin and stdout: use --tmux "
                           "or --print");
    if (bt_service_handoff_mark(*s, h) != 0)
        return refused(h);
    fprintf(stderr, "baton: %s goes on in %s's terminal UI (baton send --force takes it back)\n",
            h->conv.id, h->conv.coder);
    say_worktree(&h->conv);
    bt_store_close(*s); /* commits; nothing of the store reaches the coder */
    *s = NULL;
    int rc = bt_proc_exec(h->conv.cwd, h->argv.v, NULL);
    if (bt_cmd_open_store(s) == 0)
        bt_service_handoff_undo(*s, h);
    return bt_cmd_fail(BT_EXIT_FAILED, "cannot start %s: %s", h->argv.v[0], bt_strerror(rc));
}

static const struct bt_opt handoff_opts[] = {
    {.id = 't', .name = "tmux", .help = "run it in a detached tmux session baton-<short id>"},
    {.id = 'p', .name = "print", .help = "print the command line (shell-quoted), do nothing else"},
    {0}};

const struct bt_cmd bt_cmd_def_handoff = {
    .name = "handoff",
    .run = bt_cmd_handoff,
    .operands = "CONV",
    .summary = "continue a conversation in its coder's own terminal UI",
    .opts = handoff_opts,
    .notes = "Replaces baton with the coder's interactive command resuming the conversation's\n"
             "native session (codex resume ID, pi --session FILE) in its directory, with\n"
             "baton's environment. The conversation becomes transferred: `baton send` then\n"
             "refuses unless --force. Refused, in all three ways, while a turn runs, messages\n"
             "wait queued or the conversation's tmux session still runs (exit 2).\n"};

int bt_cmd_handoff(int argc, char **argv)
{
    enum bt_service_handoff_how how;
    const char *text = NULL;
    int rc = parse(argc, argv, &how, &text);
    if (rc)
        return rc < 0 ? 0 : rc;
    struct bt_store *s = NULL;
    struct bt_service_handoff h = {0};
    char id[BT_ID_SIZE];
    if ((rc = bt_cmd_open_store(&s)) != 0 || (rc = bt_cmd_resolve(s, text, id)) != 0)
        goto out;
    if (bt_service_handoff(s, id, how, &h) != 0) {
        rc = refused(&h);
    } else if (how == BT_SERVICE_HANDOFF_PRINT) {
        puts(h.command);
    } else if (how == BT_SERVICE_HANDOFF_TMUX) {
        fprintf(stderr, "baton: %s runs %s in tmux session %s: tmux attach -t %s\n", h.conv.id,
                h.conv.coder, h.tmux_name, h.tmux_name);
        say_worktree(&h.conv);
    } else {
        rc = run_here(&s, &h);
    }
out:
    bt_service_handoff_release(&h);
    bt_store_close(s);
    return rc;
}
