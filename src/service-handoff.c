/* SPDX-License-Identifier: MIT */
/*
 * service-handoff: continuing a conversation in its coder's own terminal
 * UI (service-conv.h), for `baton handoff` and POST
 * /v1/conversations/{id}/handoff: the runner's handoff_argv (`codex resume
 * ID`, `pi --session FILE`) in the conversation's directory, with baton's
 * own environment (the one that made the coder work under baton: its home
 * and config variables).
 *
 * Handing off marks the conversation `transferred` (store-handoff.c), in a
 * transaction that refuses while a turn runs or messages wait queued;
 * baton then sends no turn of it unless forced. Every way refuses while a
 * turn runs, messages wait queued, or the conversation's tmux session (an
 * earlier TMUX) still runs, so two terminal UIs never work on one session.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "error.h"
#include "proc.h"
#include "service-conv.h"

extern char **environ;

static int refuse(struct bt_service_handoff *h, enum bt_service_result result, int rc,
                  char *message)
{
    h->result = result;
    h->message = message;
    return rc;
}

/* The coder's TUI command for the conversation; an error on refusal. */
static int build(struct bt_service_handoff *h)
{
    const struct bt_store_conversation *c = &h->conv;
    const struct bt_coder *coder = bt_coder_find(c->coder);
    if (!coder || !coder->runner->handoff_argv)
        return refuse(h, BT_SERVICE_USAGE, -ENOTSUP,
                      bt_xasprintf("%s has no terminal UI baton can hand a session to", c->coder));
    struct stat st;
    if ((stat(c->cwd, &st) != 0 || !S_ISDIR(st.st_mode)) && c->worktree.path)
        return refuse(h, BT_SERVICE_USAGE, -ENOENT,
                      bt_xasprintf("the conversation's worktree %s is gone (keep --prune, or "
                                   "removed by hand)",
                                   c->worktree.path));
    if (stat(c->cwd, &st) != 0 || !S_ISDIR(st.st_mode))
        return refuse(h, BT_SERVICE_USAGE, -ENOENT,
                      bt_xasprintf("the conversation's directory %s is gone", c->cwd));
    /* pi 0.73.1 starts a new, empty session on a missing file, silently */
    if (c->native_session_path && (stat(c->native_session_path, &st) != 0 || !S_ISREG(st.st_mode)))
        return refuse(h, BT_SERVICE_USAGE, -ENOENT,
                      bt_xasprintf("the %s session file %s is gone: nothing to hand off", c->coder,
                                   c->native_session_path));
    char *bin = bt_coder_locate(coder);
    if (!bin)
        return refuse(h, BT_SERVICE_NOT_INSTALLED, BT_ENOTINSTALLED, bt_coder_not_found(coder));
    bt_strv_push_take(&h->argv, bin);
    struct bt_runner_config cfg = {.cwd = c->cwd,
                                   .model = c->model,
                                   .native_session_id = c->native_session_id,
                                   .native_session_path = c->native_session_path};
    int rc = coder->runner->handoff_argv(&cfg, &h->argv);
    if (rc == -ENOENT)
        return refuse(h, BT_SERVICE_USAGE, rc,
                      bt_xasprintf("conversation %s has no %s session yet: nothing to hand off",
                                   c->id, c->coder));
    if (rc)
        return refuse(
            h, BT_SERVICE_FAILED, rc,
            bt_xasprintf("the stored %s session of %s cannot be passed safely", c->coder, c->id));
    return 0;
}

void bt_service_tmux_name(const char *conv, char name[BT_SERVICE_TMUX_NAME])
{
    snprintf(name, BT_SERVICE_TMUX_NAME, "baton-%.12s", conv);
}

int bt_service_tmux_running(const char *conv, char name[BT_SERVICE_TMUX_NAME])
{
    char target[BT_SERVICE_TMUX_NAME + 1];
    bt_service_tmux_name(conv, name);
    snprintf(target, sizeof target, "=%s", name); /* exact name, not a prefix */
    char *has[] = {"tmux", "has-session", "-t", target, NULL};
    int rc = bt_proc_run(has, 1);
    return rc == 0 ? 1 : rc == -ENOENT ? -ENOENT : 0;
}

/* `cd DIR && CMD ARGS...`, shell-quoted. */
static char *command_text(const struct bt_service_handoff *h)
{
    struct bt_buf b = BT_BUF_INIT;
    bt_buf_adds(&b, "cd ");
    bt_shell_quote(&b, h->conv.cwd);
    bt_buf_adds(&b, " &&");
    for (size_t i = 0; i < h->argv.n; i++) {
        bt_buf_addc(&b, ' ');
        bt_shell_quote(&b, h->argv.v[i]);
    }
    return bt_buf_detach(&b, NULL);
}

/* Mark the conversation transferred, or only check that it could be
 * (!mark); an error on refusal. */
static int hand_off(struct bt_store *s, struct bt_service_handoff *h, int mark)
{
    int rc = mark ? bt_store_conversation_hand_off(s, h->conv.id)
                  : bt_store_conversation_hand_off_check(s, h->conv.id);
    if (rc == BT_EBUSY)
        return refuse(h, BT_SERVICE_USAGE, rc,
                      bt_xasprintf("a turn of %s is running: wait for it to end or `baton "
                                   "cancel` it first",
                                   h->conv.id));
    if (rc == -EAGAIN)
        return refuse(h, BT_SERVICE_USAGE, rc, bt_xstrdup(bt_store_errmsg(s)));
    if (rc)
        return refuse(h, BT_SERVICE_FAILED, rc,
                      bt_xasprintf("cannot record the handoff: %s", bt_store_errmsg(s)));
    return 0;
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

static int run_tmux(struct bt_store *s, struct bt_service_handoff *h)
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
        bt_service_handoff_undo(s, h);
        return refuse(h, BT_SERVICE_FAILED, rc < 0 ? rc : -EIO,
                      bt_xasprintf("tmux could not start the session (%s)",
                                   rc < 0 ? bt_strerror(rc) : "see its message above"));
    }
    return 0;
}

int bt_service_handoff(struct bt_store *s, const char *conv, enum bt_service_handoff_how how,
                       struct bt_service_handoff *out)
{
    memset(out, 0, sizeof *out);
    bt_strv_init(&out->argv);
    if (bt_store_conversation_get(s, conv, &out->conv) != 0)
        return refuse(out, BT_SERVICE_FAILED, BT_ESTORE,
                      bt_xasprintf("cannot read %s: %s", conv, bt_store_errmsg(s)));
    int rc = build(out);
    if (rc)
        return rc;
    out->command = command_text(out);
    int tmux = bt_service_tmux_running(out->conv.id, out->tmux_name);
    if (how == BT_SERVICE_HANDOFF_TMUX && tmux == -ENOENT)
        return refuse(out, BT_SERVICE_FAILED, -ENOENT, bt_xstrdup("tmux is not installed"));
    if (tmux == 1)
        return refuse(out, BT_SERVICE_USAGE, -EBUSY,
                      bt_xasprintf("tmux session %s still runs %s on conversation %s: attach to "
                                   "it (tmux attach -t %s) or end it (tmux kill-session -t %s) "
                                   "first",
                                   out->tmux_name, out->conv.coder, out->conv.id, out->tmux_name,
                                   out->tmux_name));
    out->result = BT_SERVICE_OK;
    switch (how) {
    case BT_SERVICE_HANDOFF_PRINT: return hand_off(s, out, 0);
    case BT_SERVICE_HANDOFF_TMUX: return run_tmux(s, out);
    case BT_SERVICE_HANDOFF_EXEC: return 0; /* marked by bt_service_handoff_mark */
    }
    return 0;
}

int bt_service_handoff_mark(struct bt_store *s, struct bt_service_handoff *h)
{
    return hand_off(s, h, 1);
}

void bt_service_handoff_undo(struct bt_store *s, const struct bt_service_handoff *h)
{
    bt_store_conversation_set_status(s, h->conv.id, h->conv.status);
}

void bt_service_handoff_release(struct bt_service_handoff *h)
{
    bt_store_conversation_release(&h->conv);
    bt_strv_release(&h->argv);
    free(h->message);
    free(h->command);
    h->message = h->command = NULL;
}
