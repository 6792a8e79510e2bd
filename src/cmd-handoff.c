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
 * Handing off marks the conversation `transferred` (store-handoff.c), in a
 * transaction that refuses while a turn runs or messages wait queued; baton
 * then sends no turn of it unless forced. The three ways share one rule:
 * each refuses while a turn runs, messages wait queued, or the
 * conversation's tmux session (an earlier `--tmux`) still runs, so two
 * terminal UIs never work on one session; --print checks and marks
 * nothing. Every refusal exits 2 with one line and changes nothing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd-args.h"
#include "cmd-common.h"
#include "cmd-handoff.h"
#include "cmd.h"
#include "coder.h"
#include "error.h"
#include "proc.h"
#include "store.h"

extern char **environ;

enum how { HOW_EXEC, HOW_TMUX, HOW_PRINT };

/* What to run: the coder's argv and where. */
struct handoff {
    struct bt_store_conversation conv;
    struct bt_strv argv;                  /* the coder's TUI, argv[0] its absolute path */
    char tmux_name[BT_HANDOFF_TMUX_NAME]; /* baton-<short id> */
};

static int parse(int argc, char **argv, enum how *how, const char **conv)
{
    struct bt_args a;
    int id;
    *how = HOW_EXEC;
    bt_args_init(&a, argc, argv);
    while ((id = bt_args_next(&a)) > 0) {
        enum how want = id == 't' ? HOW_TMUX : HOW_PRINT;
        if (*how != HOW_EXEC && *how != want)
            return bt_args_fail(&a, "--tmux and --print exclude each other");
        *how = want;
    }
    int rc = id < 0 ? BT_EXIT_USAGE : bt_args_end(&a);
    *conv = a.operands[0];
    return rc;
}

/* The coder's TUI command for the conversation; an exit code on refusal. */
static int build(struct handoff *h)
{
    const struct bt_store_conversation *c = &h->conv;
    const struct bt_coder *coder = bt_coder_find(c->coder);
    if (!coder || !coder->runner->handoff_argv)
        return bt_cmd_fail(BT_EXIT_USAGE, "%s has no terminal UI baton can hand a session to",
                           c->coder);
    struct stat st;
    if ((stat(c->cwd, &st) != 0 || !S_ISDIR(st.st_mode)) && c->worktree.path)
        return bt_cmd_fail(
            BT_EXIT_USAGE,
            "the conversation's worktree %s is gone (keep --prune, or removed by hand)",
            c->worktree.path);
    if (stat(c->cwd, &st) != 0 || !S_ISDIR(st.st_mode))
        return bt_cmd_fail(BT_EXIT_USAGE, "the conversation's directory %s is gone", c->cwd);
    /* pi 0.73.1 starts a new, empty session on a missing file, silently */
    if (c->native_session_path && (stat(c->native_session_path, &st) != 0 || !S_ISREG(st.st_mode)))
        return bt_cmd_fail(BT_EXIT_USAGE, "the %s session file %s is gone: nothing to hand off",
                           c->coder, c->native_session_path);
    char *bin = bt_coder_locate(coder);
    if (!bin) {
        char *why = bt_coder_not_found(coder);
        int rc = bt_cmd_fail(BT_EXIT_NOT_INSTALLED, "%s", why);
        free(why);
        return rc;
    }
    bt_strv_push_take(&h->argv, bin);
    struct bt_runner_config cfg = {.cwd = c->cwd,
                                   .model = c->model,
                                   .native_session_id = c->native_session_id,
                                   .native_session_path = c->native_session_path};
    int rc = coder->runner->handoff_argv(&cfg, &h->argv);
    if (rc == -ENOENT)
        return bt_cmd_fail(BT_EXIT_USAGE,
                           "conversation %s has no %s session yet: nothing to hand off", c->id,
                           c->coder);
    if (rc)
        return bt_cmd_fail(BT_EXIT_FAILED, "the stored %s session of %s cannot be passed safely",
                           c->coder, c->id);
    return 0;
}

void bt_handoff_tmux_name(const char *conv, char name[BT_HANDOFF_TMUX_NAME])
{
    snprintf(name, BT_HANDOFF_TMUX_NAME, "baton-%.12s", conv);
}

int bt_handoff_tmux_running(const char *conv, char name[BT_HANDOFF_TMUX_NAME])
{
    char target[BT_HANDOFF_TMUX_NAME + 1];
    bt_handoff_tmux_name(conv, name);
    snprintf(target, sizeof target, "=%s", name); /* exact name, not a prefix */
    char *has[] = {"tmux", "has-session", "-t", target, NULL};
    int rc = bt_proc_run(has, 1);
    return rc == 0 ? 1 : rc == -ENOENT ? -ENOENT : 0;
}

/* `cd DIR && CMD ARGS...`, shell-quoted. */
static void print_command(const struct handoff *h)
{
    struct bt_buf b = BT_BUF_INIT;
    bt_buf_adds(&b, "cd ");
    bt_shell_quote(&b, h->conv.cwd);
    bt_buf_adds(&b, " &&");
    for (size_t i = 0; i < h->argv.n; i++) {
        bt_buf_addc(&b, ' ');
        bt_shell_quote(&b, h->argv.v[i]);
    }
    puts(b.data);
    bt_buf_release(&b);
}

/* Mark the conversation transferred, or only check that it could be
 * (!mark); an exit code on refusal. */
static int hand_off(struct bt_store *s, const struct handoff *h, int mark)
{
    int rc = mark ? bt_store_conversation_hand_off(s, h->conv.id)
                  : bt_store_conversation_hand_off_check(s, h->conv.id);
    if (rc == BT_EBUSY)
        return bt_cmd_fail(BT_EXIT_USAGE,
                           "a turn of %s is running: wait for it to end or `baton cancel` it first",
                           h->conv.id);
    if (rc == -EAGAIN)
        return bt_cmd_fail(BT_EXIT_USAGE, "%s", bt_store_errmsg(s));
    if (rc)
        return bt_cmd_fail(BT_EXIT_FAILED, "cannot record the handoff: %s", bt_store_errmsg(s));
    return 0;
}

/* The conversation's tmux session still runs its coder: refused, whatever
 * the way (a second terminal UI on the same session would fight the
 * first). */
static int tmux_refusal(const struct handoff *h)
{
    return bt_cmd_fail(BT_EXIT_USAGE,
                       "tmux session %s still runs %s on conversation %s: attach to it (tmux "
                       "attach -t %s) or end it (tmux kill-session -t %s) first",
                       h->tmux_name, h->conv.coder, h->conv.id, h->tmux_name, h->tmux_name);
}

/* Undo hand_off after the coder could not be started. */
static void take_back(struct bt_store *s, const struct handoff *h)
{
    bt_store_conversation_set_status(s, h->conv.id, h->conv.status);
}

/* The environment as tmux -e arguments (tmux 3.2+), without the variables
 * tmux sets for its own panes. */
static void push_env(struct bt_strv *argv)
{
    static const char *const skip[] = {"TMUX=", "TMUX_PANE=", "TERM="};
    for (char **e = environ; *e; e++) {
        int own = 0;
        for (size_t i = 0; i < sizeof skip / sizeof skip[0]; i++)
            own |= strncmp(*e, skip[i], strlen(skip[i])) == 0;
        if (!own && strchr(*e, '=')) {
            bt_strv_push(argv, "-e");
            bt_strv_push(argv, *e);
        }
    }
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

static int run_tmux(struct bt_store *s, const struct handoff *h)
{
    int rc;
    if ((rc = hand_off(s, h, 1)) != 0)
        return rc;
    struct bt_strv argv;
    bt_strv_init(&argv);
    const char *head[] = {"tmux",      "new-session", "-d",  "-s", h->tmux_name, "-c",
                          h->conv.cwd, "-x",          "200", "-y", "50"};
    for (size_t i = 0; i < sizeof head / sizeof head[0]; i++)
        bt_strv_push(&argv, head[i]);
    push_env(&argv);
    bt_strv_push(&argv, "--");
    for (size_t i = 0; i < h->argv.n; i++)
        bt_strv_push(&argv, h->argv.v[i]);
    rc = bt_proc_run(argv.v, 0);
    bt_strv_release(&argv);
    if (rc != 0) {
        take_back(s, h);
        return bt_cmd_fail(BT_EXIT_FAILED, "tmux could not start the session (%s)",
                           rc < 0 ? bt_strerror(rc) : "see its message above");
    }
    fprintf(stderr, "baton: %s runs %s in tmux session %s: tmux attach -t %s\n", h->conv.id,
            h->conv.coder, h->tmux_name, h->tmux_name);
    say_worktree(&h->conv);
    return BT_EXIT_OK;
}

static int run_here(struct bt_store **s, const struct handoff *h)
{
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
        return bt_cmd_fail(BT_EXIT_USAGE,
                           "handoff needs a terminal on stdin and stdout: use --tmux "
                           "or --print");
    int rc = hand_off(*s, h, 1);
    if (rc)
        return rc;
    fprintf(stderr, "baton: %s goes on in %s's terminal UI (baton send --force takes it back)\n",
            h->conv.id, h->conv.coder);
    say_worktree(&h->conv);
    bt_store_close(*s); /* commits; nothing of the store reaches the coder */
    *s = NULL;
    rc = bt_proc_exec(h->conv.cwd, h->argv.v, NULL);
    if (bt_cmd_open_store(s) == 0)
        take_back(*s, h);
    return bt_cmd_fail(BT_EXIT_FAILED, "cannot start %s: %s", h->argv.v[0], bt_strerror(rc));
}

int bt_cmd_handoff(int argc, char **argv)
{
    enum how how;
    const char *text = NULL;
    int rc = parse(argc, argv, &how, &text);
    if (rc)
        return rc < 0 ? 0 : rc;
    struct bt_store *s = NULL;
    struct handoff h = {0};
    char id[BT_ID_SIZE];
    bt_strv_init(&h.argv);
    if ((rc = bt_cmd_open_store(&s)) != 0)
        goto out;
    if ((rc = bt_cmd_resolve(s, text, id)) != 0)
        goto out;
    if (bt_store_conversation_get(s, id, &h.conv) != 0) {
        rc = bt_cmd_fail(BT_EXIT_FAILED, "cannot read %s: %s", id, bt_store_errmsg(s));
        goto out;
    }
    if ((rc = build(&h)) != 0)
        goto out;
    int tmux = bt_handoff_tmux_running(h.conv.id, h.tmux_name);
    if (how == HOW_TMUX && tmux == -ENOENT)
        rc = bt_cmd_fail(BT_EXIT_FAILED, "tmux is not installed");
    else if (tmux == 1)
        rc = tmux_refusal(&h);
    else if (how == HOW_PRINT && (rc = hand_off(s, &h, 0)) == 0)
        print_command(&h);
    else if (how != HOW_PRINT)
        rc = how == HOW_TMUX ? run_tmux(s, &h) : run_here(&s, &h);
out:
    bt_strv_release(&h.argv);
    bt_store_conversation_release(&h.conv);
    bt_store_close(s);
    return rc;
}
