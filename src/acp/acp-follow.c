/* SPDX-License-Identifier: MIT */
/*
 * acp-follow: prompts of a session whose conversation another baton
 * process is running (a `baton run` in a terminal, `baton serve`, another
 * editor) wait queued in the store; that process sends them with its next
 * turn. This follows the store as `baton attach` does: each prompt's turn
 * is streamed to the editor as session/update notifications while it
 * runs, and the prompt answered with its end. Prompts still queued once
 * nothing runs go back to the session's thread, which sends them
 * (acp-int.h, bt_acp_follow).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "acp-int.h"
#include "acp-map.h"
#include "channel.h"
#include "service-conv.h"
#include "event.h"
#include "service.h"
#include "util.h"

/* How often the store is looked at without word from the run's owner: a
 * followed turn's events come at once through its channel (channel.h),
 * which wakes the look, and as late as this without one. */
#define BT_ACP_FOLLOW_MS 100
/* Time between two checks for a run whose baton process died (killed, or
 * its machine's OOM killer): recovered as `baton attach` does, it ends
 * interrupted, and the prompt waiting on it is answered. */
#define BT_ACP_RECOVER_MS 1000

struct follow {
    struct bt_acp *a;
    struct bt_acp_session *se;
    struct bt_store *s;
    char run[BT_ID_SIZE]; /* the run being streamed, "" none */
    int64_t next_seq;     /* its next event to send */
    struct bt_acp_map map;
    int cancel_sent;             /* the session's cancel was passed on to that run */
    struct bt_channel_conn conn; /* to run's owner, fd -1 when none */
    char conn_run[BT_ID_SIZE];   /* the run conn follows */
};

/* The lines are read from the store by seq (stream): the channel only
 * says when. */
static void on_line(void *data, const char *line, size_t len)
{
    (void)data, (void)line, (void)len;
}

/* Wait until the streamed run's owner commits more (its channel), at most
 * BT_ACP_FOLLOW_MS; without a channel, that long. */
static void wait_owner(struct follow *f)
{
    if (f->run[0] && strcmp(f->conn_run, f->run) != 0) {
        bt_channel_conn_close(&f->conn);
        memcpy(f->conn_run, f->run, BT_ID_SIZE);
        bt_channel_follow_start(bt_store_home(f->s), f->run, 0, &f->conn, on_line, f);
    }
    if (f->conn.fd >= 0 && bt_channel_conn_wait(&f->conn, BT_ACP_FOLLOW_MS) > 0) {
        if (bt_channel_conn_read(&f->conn) != 0)
            bt_channel_conn_close(&f->conn); /* its end is in the store */
        return;
    }
    if (f->conn.fd < 0) {
        const struct timespec tick = {.tv_nsec = BT_ACP_FOLLOW_MS * 1000000L};
        nanosleep(&tick, NULL);
    }
}

static int send_event(void *data, const struct bt_store_event *sev)
{
    struct follow *f = data;
    struct bt_event ev;
    struct bt_event_doc *doc;
    f->next_seq = sev->seq + 1;
    if (bt_event_parse(sev->data, sev->len, &ev, &doc) != 0)
        return 0; /* a newer baton's event: skipped as `show` does */
    cJSON *updates = cJSON_CreateArray(), *u;
    bt_acp_map_event(&f->map, &ev, updates);
    bt_event_doc_free(doc);
    while ((u = cJSON_DetachItemFromArray(updates, 0)) != NULL)
        bt_acp_update(f->a, f->se->id, u, 0);
    cJSON_Delete(updates);
    return 0;
}

/* Stream what run has stored since the last look. */
static void stream(struct follow *f, const char *run)
{
    if (strcmp(f->run, run) != 0) {
        bt_acp_map_release(&f->map);
        memcpy(f->run, run, BT_ID_SIZE);
        f->next_seq = 1;
    }
    bt_store_event_each(f->s, run, f->next_seq, send_event, f);
}

/* Answer w as the run r ended. */
static void answer(struct follow *f, struct bt_acp_waiting *w, const struct bt_store_run *r)
{
    const char *stop = r->state == BT_STORE_RUN_COMPLETED ? "end_turn"
                       : r->state == BT_STORE_RUN_CANCELLED || r->state == BT_STORE_RUN_INTERRUPTED
                           ? "cancelled"
                           : NULL;
    if (stop) {
        cJSON *res = cJSON_CreateObject();
        cJSON_AddStringToObject(res, "stopReason", stop);
        bt_acp_result(f->a, w->id, res, 0);
    } else {
        const char *kind = r->error_kind ? r->error_kind : "unknown";
        char *msg = bt_xasprintf("the turn failed (%s): %s", kind,
                                 r->error_text ? r->error_text : "the coder said no more");
        bt_acp_error(f->a, w->id,
                     strcmp(kind, "auth_required") == 0 ? BT_ACP_AUTH_REQUIRED
                                                        : BT_ACP_INTERNAL_ERROR,
                     msg, 0);
        free(msg);
    }
    cJSON_Delete(w->id);
    free(w);
}

/* The run w's message went out with ("" while it waits queued); -1 when
 * the message is gone (taken back by `baton rm-queued`). */
static int sent_with(const struct bt_store_message *m, size_t n, const struct bt_acp_waiting *w,
                     char run[BT_ID_SIZE])
{
    for (size_t i = 0; i < n; i++) {
        if (m[i].id != w->msg)
            continue;
        if (m[i].state == BT_STORE_MSG_QUEUED)
            run[0] = '\0';
        else
            memcpy(run, m[i].run, BT_ID_SIZE);
        return 0;
    }
    return -1;
}

/* One look at the store: answers what ended, streams what runs. Returns
 * 1 while something of w's runs, 0 when what is left of *w waits with
 * nothing running. */
static int look(struct follow *f, struct bt_acp_waiting **w)
{
    struct bt_store_message *m = NULL;
    size_t n = 0;
    if (bt_store_message_list(f->s, f->se->id, &m, &n) != 0)
        return 1; /* a busy store: look again */
    int running = 0;
    for (struct bt_acp_waiting **p = w; *p;) {
        char run[BT_ID_SIZE];
        struct bt_store_run r;
        if (sent_with(m, n, *p, run) != 0) {
            struct bt_acp_waiting *gone = *p;
            *p = gone->next;
            bt_acp_error(f->a, gone->id, BT_ACP_INTERNAL_ERROR,
                         "taken from the queue before it went out (`baton rm-queued`)", 0);
            cJSON_Delete(gone->id);
            free(gone);
            continue;
        }
        if (!run[0] || bt_store_run_get(f->s, run, &r) != 0) {
            p = &(*p)->next;
            continue;
        }
        stream(f, run);
        if (r.state == BT_STORE_RUN_RUNNING) {
            running = 1;
            p = &(*p)->next;
        } else {
            struct bt_acp_waiting *done = *p;
            *p = done->next;
            answer(f, done, &r);
        }
        bt_store_run_release(&r);
    }
    bt_store_message_list_free(m, n);
    if (!running && *w) { /* queued still: is the other turn still going? */
        struct bt_store_run last;
        if (bt_store_run_last(f->s, f->se->id, &last) == 0) {
            running = last.state == BT_STORE_RUN_RUNNING;
            bt_store_run_release(&last);
        }
    }
    return running;
}

/* A cancel of the session: prompts still queued are taken back (answered
 * cancelled), a turn of theirs running in the other process is asked to
 * stop, as `baton cancel` asks. */
static void cancel(struct follow *f, struct bt_acp_waiting **w)
{
    for (struct bt_acp_waiting **p = w; *p;) {
        if (bt_service_take_back(f->s, f->se->id, (*p)->msg, 0) != 0) {
            p = &(*p)->next; /* it went out: its run's end answers it */
            continue;
        }
        struct bt_acp_waiting *back = *p;
        *p = back->next;
        cJSON *res = cJSON_CreateObject();
        cJSON_AddStringToObject(res, "stopReason", "cancelled");
        bt_acp_result(f->a, back->id, res, 0);
        cJSON_Delete(back->id);
        free(back);
    }
    if (*w && !f->cancel_sent) {
        struct bt_service_outcome o = {0};
        bt_service_cancel(f->s, f->se->id, &o); /* none runs: its end answers them */
        free(o.message);
        f->cancel_sent = 1;
    }
}

struct bt_acp_waiting *bt_acp_follow(struct bt_acp *a, struct bt_acp_session *se,
                                     struct bt_store *s, struct bt_acp_waiting *w)
{
    struct follow f = {.a = a, .se = se, .s = s, .conn = {.fd = -1}};
    bt_acp_map_init(&f.map);
    int64_t recovered = bt_mono_ms();
    while (w && !atomic_load(&a->stopping)) {
        /* the wait first: never a spin with the caller, who
         * may find the conversation busy again at once */
        wait_owner(&f);
        if (bt_mono_ms() - recovered >= BT_ACP_RECOVER_MS) {
            recovered = bt_mono_ms();
            bt_service_recover(s, bt_acp_say, NULL);
        }
        if (atomic_load(&se->cancel))
            cancel(&f, &w);
        if (!w || !look(&f, &w))
            break;
    }
    bt_acp_map_release(&f.map);
    bt_channel_conn_close(&f.conn);
    return w; /* at the agent's end, what waits stays queued and unanswered */
}
