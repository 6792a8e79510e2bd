/* SPDX-License-Identifier: MIT */
/*
 * service: the conversation service (see service.h): the requests (run,
 * send, flush, retry), what the store decides of them (a run, or the
 * prompt queued) and the settings a run of queued messages takes. The
 * turn itself: service-turn.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "error.h"
#include "perf.h"
#include "service-int.h"
#include "slot.h"

#define WAIT_CANCELLED "cancelled while it waited for a turn slot; the coder never started"

static int store_error(struct bt_store *s, struct bt_service_outcome *out, int rc)
{
    out->result = BT_SERVICE_FAILED;
    out->message = bt_xasprintf("store: %s", bt_store_errmsg(s));
    return rc;
}

static int check_cwd(const struct bt_store_conversation *conv, struct bt_service_outcome *out)
{
    struct stat st;
    if (stat(conv->cwd, &st) == 0 && S_ISDIR(st.st_mode))
        return 0;
    out->result = BT_SERVICE_FAILED;
    if (conv->worktree.path)
        out->message = bt_xasprintf("the conversation's worktree %s is gone (keep --prune, or "
                                    "removed by hand); nothing was sent",
                                    conv->worktree.path);
    else
        out->message =
            bt_xasprintf("the conversation's directory %s is gone; nothing was sent", conv->cwd);
    return -ENOENT;
}

/* Why bt_store_run_submit refused, for the user. */
static int submit_failed(struct bt_store *s, const struct bt_store_conversation *conv,
                         const struct bt_store_run_new *rn, int rc, struct bt_service_outcome *out)
{
    if (rc == BT_EBUSY) {
        out->result = rn->after_run ? BT_SERVICE_USAGE : BT_SERVICE_FAILED;
        out->message = bt_xasprintf("conversation %s has a turn running", conv->id);
    } else if (rc == BT_ENOTFOUND && rn->take_queued && !rn->user_text) {
        out->result = BT_SERVICE_OK; /* nothing waits: nothing to do */
    } else if (rc == -EPERM) {
        out->result = BT_SERVICE_USAGE;
        out->message = bt_xasprintf("conversation %s was handed off to %s's terminal UI, which "
                                    "owns the session now (--force sends anyway)",
                                    conv->id, conv->coder);
    } else if (rc == BT_ETOOBIG) {
        out->result = BT_SERVICE_USAGE;
        out->message = bt_xasprintf("%s", bt_store_errmsg(s));
    } else {
        store_error(s, out, rc);
    }
    return rc;
}

/* A turn's settings, kept with a queued message: they are the sender's,
 * not those of whichever process sends the queue later. */
static struct bt_store_settings sender_settings(const struct bt_service_turn *t)
{
    return (struct bt_store_settings){.approval = (int)t->approval,
                                      .timeout_ms = t->timeout_ms,
                                      .idle_timeout_ms = t->idle_timeout_ms,
                                      .no_retry = t->no_retry};
}

/* The shorter of two limits, 0 meaning none. */
static uint64_t shorter(uint64_t a, uint64_t b)
{
    return a == 0 ? b : b == 0 ? a : a < b ? a : b;
}

/* Narrow t by one queued message's settings: the least permissive
 * approval, the shorter limits, no retries if it asked for none. A message
 * without settings (stored by an older baton) reads as 0: the default
 * approval, deny. */
/* How much an approval policy lets through without a person saying yes:
 * the stored values are the enum's (deny 0, auto 1, never 2, ask 3),
 * which is not that order. */
static int permissive(int approval)
{
    switch (approval) {
    case BT_APPROVAL_ASK: return 1;
    case BT_APPROVAL_AUTO: return 2;
    case BT_APPROVAL_NEVER: return 3;
    default: return 0;
    }
}

static void narrow(struct bt_service_turn *t, const struct bt_store_settings *q)
{
    if (q->approval >= 0 && permissive(q->approval) < permissive((int)t->approval))
        t->approval = (enum bt_approval)q->approval;
    t->timeout_ms = shorter(t->timeout_ms, q->timeout_ms);
    t->idle_timeout_ms = shorter(t->idle_timeout_ms, q->idle_timeout_ms);
    t->no_retry |= q->no_retry != 0;
}

/* The settings a run that took queued messages runs with: those of the
 * messages (and of t when it sends text of its own), narrowed together. */
static struct bt_service_turn turn_settings(const struct bt_service_turn *t, int own_text,
                                            const struct bt_store_submitted *queued)
{
    struct bt_service_turn eff = *t;
    if (!own_text && queued->n_settings > 0) { /* a flush: only the senders count */
        eff.approval = BT_APPROVAL_NEVER;
        eff.timeout_ms = eff.idle_timeout_ms = 0;
        eff.no_retry = 0;
    }
    for (size_t i = 0; i < queued->n_settings; i++)
        narrow(&eff, &queued->settings[i]);
    return eff;
}

struct slot_wait {
    struct bt_store *s;
    const char *run;
};

/* A cancel of the waiting run (baton cancel, serve's cancel). */
static int slot_stop(void *data)
{
    struct slot_wait *w = data;
    int requested = 0;
    bt_store_run_cancel_requested(w->s, w->run, &requested);
    return requested;
}

/* The end of a run cancelled before its coder started: its one event,
 * turn.completed (cancelled), and its record. */
static void end_waiting(struct bt_store *s, const char *conv, const char *run, int64_t started_ms,
                        struct bt_service_outcome *out)
{
    int64_t now = bt_now_ms();
    struct bt_event ev;
    bt_event_init(&ev, BT_EVENT_TURN_COMPLETED);
    ev.seq = 1;
    ev.run = run;
    ev.conversation = conv;
    ev.ts_ms = now;
    ev.status = BT_TURN_CANCELLED;
    ev.message = WAIT_CANCELLED;
    ev.final_text = "";
    ev.duration_ms = now - started_ms;
    ev.exit_code = BT_UNKNOWN;
    struct bt_buf json = BT_BUF_INIT;
    bt_event_to_json(&ev, &json);
    struct bt_store_event se = {.run = run,
                                .seq = 1,
                                .type = bt_event_type_name(ev.type),
                                .ts_ms = now,
                                .data = json.data,
                                .len = json.len};
    int rc = bt_store_event_append(s, &se);
    bt_buf_release(&json);
    if (rc == 0)
        rc = bt_store_run_finish(s, run,
                                 &(struct bt_store_run_end){.state = BT_STORE_RUN_CANCELLED,
                                                            .exit_code = BT_UNKNOWN,
                                                            .error_text = WAIT_CANCELLED});
    if (rc)
        store_error(s, out, rc);
    else
        out->result = BT_SERVICE_TURN;
    out->status = BT_TURN_CANCELLED;
    bt_service_control_strand(s); /* the cancel is done: the run ended cancelled */
}

/* Wait for a turn slot for run: 0 with it held (or none to hold: the
 * turns directory cannot be used, said on stderr, and the turn goes on
 * unbounded rather than never), 1 when the run was cancelled meanwhile. */
static int wait_slot(struct bt_store *s, const char *run, struct bt_slot *slot)
{
    const char *bad = NULL;
    int limit = bt_slot_limit(&bad);
    if (bad)
        fprintf(stderr, "baton: BATON_MAX_TURNS is a number from 1 to %d, not '%s'; %d it is\n",
                BT_SLOT_MAX, bad, limit);
    struct slot_wait w = {s, run};
    int rc = bt_slot_take(bt_store_home(s), run, limit, slot_stop, NULL, &w, slot);
    if (rc < 0)
        fprintf(stderr, "baton: cannot use %s/%s to bound the turns running at once: %s\n",
                bt_store_home(s), BT_SLOT_DIR, bt_strerror(rc));
    return rc == 1;
}

/* Submit rn (start a run or queue its prompt) and, if a run started, run
 * its turn (once it has a turn slot, when t asks for one). */
static int do_turn(struct bt_store *s, const struct bt_store_conversation *conv,
                   struct bt_service_coder *l, const struct bt_service_turn *t,
                   const struct bt_store_run_new *rn, struct bt_service_outcome *out)
{
    int rc = check_cwd(conv, out);
    if (rc)
        return rc;
    struct bt_store_submitted sub;
    rc = bt_store_run_submit(s, rn, &sub);
    bt_perf_mark("prompt stored");
    out->busy = sub.busy;
    if (rc == 0 && sub.queued) {
        out->queued = sub.queued;
        out->queue_no = sub.queue_no;
        out->result = BT_SERVICE_OK;
    } else if (rc == 0) {
        struct bt_service_turn eff = turn_settings(t, rn->user_text != NULL, &sub);
        memcpy(out->run, sub.run, BT_ID_SIZE);
        if (t->on_run)
            t->on_run(t->data, conv->id, out->run);
        struct bt_slot slot = BT_SLOT_INIT;
        int64_t asked = bt_now_ms();
        if (t->slot && wait_slot(s, out->run, &slot))
            end_waiting(s, conv->id, out->run, asked, out);
        else
            rc = bt_service_turn_run(s, conv, l, &eff, sub.prompt, out);
        bt_slot_release(&slot);
        bt_store_queued_count(s, conv->id, &out->waiting);
    } else {
        submit_failed(s, conv, rn, rc, out);
    }
    bt_store_submitted_release(&sub);
    return rc;
}

/* Load conversation id and locate its coder. */
/* The conversation alone (no coder looked up yet). */
static int load_conversation(struct bt_store *s, const char *id, struct bt_store_conversation *conv,
                             struct bt_service_coder *l, struct bt_service_outcome *out)
{
    memset(out, 0, sizeof(*out));
    memset(l, 0, sizeof(*l));
    int rc = bt_store_conversation_get(s, id, conv);
    if (rc) {
        out->result = BT_SERVICE_USAGE;
        out->message = bt_xasprintf("no conversation %s", id);
        return rc;
    }
    memcpy(out->conversation, conv->id, BT_ID_SIZE);
    return 0;
}

static int load(struct bt_store *s, const char *id, struct bt_store_conversation *conv,
                struct bt_service_coder *l, struct bt_service_outcome *out)
{
    int rc = load_conversation(s, id, conv, l, out);
    return rc ? rc : bt_service_coder_locate(s, conv->coder, l, out);
}

int bt_service_run(struct bt_store *s, const struct bt_service_turn *t,
                   struct bt_service_outcome *out)
{
    struct bt_service_coder l = {0};
    memset(out, 0, sizeof(*out));
    struct bt_repo_worktree wt = {0};
    struct bt_store_worktree sw = {0};
    char id[BT_ID_SIZE];
    int rc = bt_service_coder_locate(s, t->coder, &l, out);
    if (rc == 0 && (rc = bt_id_new(id)) != 0)
        store_error(s, out, rc);
    if (rc == 0 && t->worktree && (rc = bt_service_worktree_make(s, t, id, &wt, out)) == 0)
        sw = (struct bt_store_worktree){.path = wt.path,
                                        .branch = wt.branch,
                                        .base = wt.base,
                                        .start = wt.start,
                                        .repo = wt.repo};
    if (rc == 0) {
        struct bt_store_conversation_new cn = {.id = id,
                                               .coder = t->coder,
                                               .model = t->model,
                                               .cwd = t->worktree ? wt.cwd : t->cwd,
                                               .title = t->prompt,
                                               .worktree = t->worktree ? &sw : NULL,
                                               .group = t->group};
        rc = bt_store_conversation_create(s, &cn, out->conversation);
        if (rc) {
            store_error(s, out, rc);
            if (t->worktree)
                bt_service_worktree_drop(&wt);
        } else {
            struct bt_store_conversation conv;
            rc = bt_store_conversation_get(s, out->conversation, &conv);
            struct bt_store_run_new rn = {.conversation = conv.id,
                                          .coder = conv.coder,
                                          .model = conv.model,
                                          .user_text = t->prompt,
                                          .queue = t->queue,
                                          .max_prompt = BT_SERVICE_PROMPT_MAX};
            struct bt_store_settings settings = sender_settings(t);
            rn.settings = &settings;
            rc = rc ? store_error(s, out, rc) : do_turn(s, &conv, &l, t, &rn, out);
            bt_store_conversation_release(&conv);
        }
    }
    bt_repo_worktree_release(&wt);
    bt_service_coder_release(&l);
    return rc;
}

/* The next turn of conversation id with text (NULL: only what is queued),
 * after what is queued. */
static int next_turn(struct bt_store *s, const char *id, const struct bt_service_turn *t,
                     const char *text, struct bt_service_outcome *out)
{
    struct bt_service_coder l;
    struct bt_store_conversation conv;
    int rc = load(s, id, &conv, &l, out);
    if (rc == 0) {
        struct bt_store_run_new rn = {.conversation = conv.id,
                                      .coder = conv.coder,
                                      .model = conv.model,
                                      .user_text = text,
                                      .take_queued = 1,
                                      .queue = text ? t->queue : BT_STORE_QUEUE_NEVER,
                                      .max_prompt = BT_SERVICE_PROMPT_MAX,
                                      .force = t->force};
        struct bt_store_settings settings = sender_settings(t);
        rn.settings = &settings;
        rc = do_turn(s, &conv, &l, t, &rn, out);
    }
    bt_service_coder_release(&l);
    bt_store_conversation_release(&conv);
    return rc;
}

int bt_service_send(struct bt_store *s, const char *id, const struct bt_service_turn *t,
                    struct bt_service_outcome *out)
{
    return next_turn(s, id, t, t->prompt, out);
}

int bt_service_flush(struct bt_store *s, const char *id, const struct bt_service_turn *t,
                     struct bt_service_outcome *out)
{
    int rc = next_turn(s, id, t, NULL, out);
    if (rc == BT_EBUSY) { /* the running turn's owner takes the queue */
        free(out->message);
        out->message = NULL;
        out->result = BT_SERVICE_OK;
        rc = BT_ENOTFOUND;
    }
    return rc;
}

/* The prompt of run r: stored with it, or (a run of schema 1) the text of
 * the user messages it answered. Caller frees. */
static char *prompt_of(struct bt_store *s, const struct bt_store_run *r)
{
    if (r->prompt)
        return bt_xstrdup(r->prompt);
    struct bt_store_message *m = NULL;
    size_t n = 0;
    struct bt_buf b = BT_BUF_INIT;
    bt_store_message_list(s, r->conversation, &m, &n);
    for (size_t i = 0; i < n; i++) {
        if (m[i].role != BT_STORE_ROLE_USER || strcmp(m[i].run, r->id) != 0)
            continue;
        if (b.len)
            bt_buf_adds(&b, BT_STORE_QUEUE_JOIN);
        bt_buf_adds(&b, m[i].text);
    }
    bt_store_message_list_free(m, n);
    return b.len ? bt_buf_detach(&b, NULL) : (bt_buf_release(&b), NULL);
}

/* 0 if the last run r may be retried, else why not (out set). */
static int check_retry(const struct bt_store_run *r, struct bt_service_outcome *out)
{
    out->result = BT_SERVICE_USAGE;
    switch (r->state) {
    case BT_STORE_RUN_RUNNING:
        out->message = bt_xasprintf("the last turn of %s is still running", r->conversation);
        return BT_EBUSY;
    case BT_STORE_RUN_COMPLETED:
        out->message = bt_xasprintf("the last turn of %s completed: a completed turn is never "
                                    "sent again (use `baton send`)",
                                    r->conversation);
        return -EALREADY;
    default: out->result = BT_SERVICE_OK; return 0;
    }
}

int bt_service_retry(struct bt_store *s, const char *id, const struct bt_service_turn *t,
                     struct bt_service_outcome *out)
{
    struct bt_service_coder l;
    struct bt_store_conversation conv;
    struct bt_store_run last = {0};
    char *prompt = NULL;
    /* what the conversation's state refuses comes before the coder's
     * installation: nothing to retry is a usage error wherever baton runs */
    int rc = load_conversation(s, id, &conv, &l, out);
    if (rc == 0 && (rc = bt_store_run_last(s, conv.id, &last)) != 0) {
        out->result = BT_SERVICE_USAGE;
        out->message = bt_xasprintf("conversation %s has no turn to retry", conv.id);
    }
    if (rc == 0)
        rc = check_retry(&last, out);
    if (rc == 0 && !(prompt = prompt_of(s, &last))) {
        rc = BT_ENOTFOUND;
        out->result = BT_SERVICE_FAILED;
        out->message = bt_xasprintf("the prompt of the last turn of %s is not stored", conv.id);
    }
    if (rc == 0)
        rc = bt_service_coder_locate(s, conv.coder, &l, out);
    if (rc == 0) {
        struct bt_store_run_new rn = {.conversation = conv.id,
                                      .coder = conv.coder,
                                      .model = conv.model,
                                      .turn = last.turn, /* another run of that turn */
                                      .prompt = prompt,
                                      .after_run = last.id,
                                      .force = t->force};
        rc = do_turn(s, &conv, &l, t, &rn, out);
    }
    free(prompt);
    bt_store_run_release(&last);
    bt_service_coder_release(&l);
    bt_store_conversation_release(&conv);
    return rc;
}
