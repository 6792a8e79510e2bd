/* SPDX-License-Identifier: MIT */
/*
 * store-recover: runs whose baton process died (store.h, "crash recovery";
 * docs/store.md, "Recovery"). Whether a process or group lives is asked of
 * proc (bt_proc_pid_gone, bt_proc_group_alive); stopping the orphaned
 * groups is the caller's (bt_proc_group_kill, bt_proc_kill_tagged).
 */
#include "store-int.h"

#include <stdlib.h>
#include <string.h>

#include "answer.h"
#include "error.h"
#include "proc.h"
#include "util.h"

#define RECOVER_TEXT "the baton process running this turn ended before it finished"

#define RECOVER_CANCEL_TEXT                                                                        \
    "the turn was cancelled; the baton process running it ended before it finished"

static const char SQL_RECOVER_LIST[] = "SELECT id, conversation, owner_pid, owner_start, pgid,"
                                       " child_start, started_ms, cancel_ms IS NOT NULL FROM runs"
                                       " WHERE state = 'running'";
static const char SQL_EVENT_LAST[] = "SELECT seq, type FROM events WHERE run = ?1"
                                     " ORDER BY seq DESC LIMIT 1";
static const char SQL_MSG_RUN_TEXT[] = "SELECT text FROM messages WHERE run = ?1"
                                       " AND role = 'assistant' LIMIT 1";
static const char SQL_RECOVER_RUN[] = "UPDATE runs SET state = ?4, error_text = ?3,"
                                      " ended_ms = ?2 WHERE id = ?1 AND state = 'running'";
static const char SQL_RECOVER_MSG[] =
    "UPDATE messages SET state = ?5, error_text = ?3,"
    " text = CASE WHEN text = '' THEN coalesce(?4, '') ELSE text END,"
    " updated_ms = ?2 WHERE run = ?1 AND role = 'assistant'"
    " AND state = 'streaming'";

/* A running run found by bt_store_recover. */
struct candidate {
    char run[BT_ID_SIZE];          /* the run */
    char conversation[BT_ID_SIZE]; /* its conversation */
    int pgid;                      /* its coder's group, 0 if never started */
    uint64_t child_start;          /* leader's start time, 0 unknown */
    int64_t started_ms;            /* for the turn's duration */
    int cancelled;                 /* a cancel was requested: it ends cancelled */
};

/* Collect the running runs whose owner is dead. */
static int dead_runs(struct bt_store *s, struct candidate **out, size_t *n)
{
    size_t cap = 0;
    sqlite3_stmt *q = bt_st_sql(s, SQL_RECOVER_LIST);
    if (!q)
        return BT_ESTORE;
    int rc;
    while ((rc = bt_st_step(s, q, "find running runs")) == 1) {
        if (!bt_proc_pid_gone((int)bt_st_col_i64(q, 2, 0), (uint64_t)bt_st_col_i64(q, 3, 0)))
            continue;
        if (*n == cap) {
            cap = cap ? cap * 2 : 8;
            *out = bt_xrealloc(*out, cap * sizeof **out);
        }
        struct candidate *c = &(*out)[(*n)++];
        bt_st_col_id(q, 0, c->run);
        bt_st_col_id(q, 1, c->conversation);
        c->pgid = (int)bt_st_col_i64(q, 4, 0);
        c->child_start = (uint64_t)bt_st_col_i64(q, 5, 0);
        c->started_ms = sqlite3_column_int64(q, 6);
        c->cancelled = sqlite3_column_int(q, 7) != 0;
    }
    return rc;
}

/* The last event's seq (0 if none) and whether it is turn.completed. */
static int last_event(struct bt_store *s, const char *run, int64_t *seq, int *completed)
{
    sqlite3_stmt *q = bt_st_sql(s, SQL_EVENT_LAST);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, run);
    *seq = 0;
    *completed = 0;
    int rc = bt_st_step(s, q, "find last event");
    if (rc != 1)
        return rc;
    *seq = sqlite3_column_int64(q, 0);
    const char *type = (const char *)sqlite3_column_text(q, 1);
    *completed = type && strcmp(type, bt_event_type_name(BT_EVENT_TURN_COMPLETED)) == 0;
    return bt_st_done(q, 0);
}

/* The run's assistant text so far (caller frees). */
static int streamed_text(struct bt_store *s, const char *run, char **text)
{
    *text = NULL;
    sqlite3_stmt *q = bt_st_sql(s, SQL_MSG_RUN_TEXT);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, run);
    int rc = bt_st_step(s, q, "read message");
    if (rc == 1)
        *text = bt_st_col_str(q, 0);
    return rc == 1 ? bt_st_done(q, 0) : rc;
}

/* Append turn.completed {status: interrupted} unless the run has one last. */
static int append_interrupted(struct bt_store *s, const struct candidate *c, int64_t now)
{
    int64_t seq;
    int completed;
    char *text = NULL;
    int rc = last_event(s, c->run, &seq, &completed);
    if (rc || completed)
        return rc;
    rc = streamed_text(s, c->run, &text);
    struct bt_event ev;
    bt_event_init(&ev, BT_EVENT_TURN_COMPLETED);
    ev.seq = seq + 1;
    ev.run = c->run;
    ev.conversation = c->conversation;
    ev.ts_ms = now;
    ev.status = c->cancelled ? BT_TURN_CANCELLED : BT_TURN_INTERRUPTED;
    ev.message = c->cancelled ? RECOVER_CANCEL_TEXT : RECOVER_TEXT;
    ev.final_text = text;
    ev.duration_ms = now - c->started_ms;
    ev.exit_code = BT_UNKNOWN;
    ev.exit_signal = 0;
    struct bt_buf json = BT_BUF_INIT;
    bt_event_to_json(&ev, &json);
    struct bt_store_event row = {.run = c->run,
                                 .seq = ev.seq,
                                 .type = bt_event_type_name(ev.type),
                                 .ts_ms = now,
                                 .data = json.data,
                                 .len = json.len};
    if (rc == 0)
        rc = bt_st_insert_event(s, &row);
    bt_buf_release(&json);
    free(text);
    return rc;
}

/* Mark c's run interrupted (cancelled if a cancel was requested). */
static int recover_run(struct bt_store *s, const struct candidate *c, int64_t now)
{
    sqlite3_stmt *q = bt_st_sql(s, SQL_RECOVER_RUN);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, c->run);
    sqlite3_bind_int64(q, 2, now);
    bt_st_bind_text(q, 3, c->cancelled ? RECOVER_CANCEL_TEXT : RECOVER_TEXT);
    bt_st_bind_text(q, 4, c->cancelled ? "cancelled" : "interrupted");
    return bt_st_run(s, q, "mark run interrupted");
}

static int add_to_answer(void *data, const struct bt_store_event *ev)
{
    if (strncmp(ev->type, "item.", 5) == 0) /* started, delta, completed: answer.h */
        bt_answer_add_json(data, ev->data, ev->len);
    return 0;
}

/* Mark the run's streaming answer interrupted, with the text rebuilt from
 * its stored events (the message itself is only written at the end). */
static int interrupt_message(struct bt_store *s, const struct candidate *c, int64_t now)
{
    const char *run = c->run;
    struct bt_answer a;
    bt_answer_init(&a);
    int rc = bt_store_event_each(s, run, 1, add_to_answer, &a);
    char *text = bt_answer_text(&a);
    bt_answer_release(&a);
    sqlite3_stmt *q = rc ? NULL : bt_st_sql(s, SQL_RECOVER_MSG);
    if (q) {
        bt_st_bind_text(q, 1, run);
        sqlite3_bind_int64(q, 2, now);
        bt_st_bind_text(q, 3, c->cancelled ? RECOVER_CANCEL_TEXT : RECOVER_TEXT);
        bt_st_bind_text(q, 4, text);
        bt_st_bind_text(q, 5, c->cancelled ? "cancelled" : "interrupted");
        rc = bt_st_run(s, q, "mark message interrupted");
    } else if (!rc) {
        rc = BT_ESTORE;
    }
    free(text);
    return rc;
}

/* Mark one run interrupted; *marked is 0 if someone finished it first. */
static int interrupt_run(struct bt_store *s, const struct candidate *c, int64_t now, int *marked)
{
    int rc = recover_run(s, c, now);
    *marked = rc == 0 && sqlite3_changes(s->db) > 0;
    if (rc || !*marked)
        return rc;
    rc = interrupt_message(s, c, now);
    return rc ? rc : append_interrupted(s, c, now);
}

/* Mark the candidates and collect orphans, inside a transaction. */
static int interrupt_all(struct bt_store *s, const struct candidate *c, size_t n, int *count,
                         struct bt_store_orphan *orphans, size_t *n_orphans)
{
    int64_t now = bt_now_ms();
    for (size_t i = 0; i < n; i++) {
        int marked = 0, rc = interrupt_run(s, &c[i], now, &marked);
        if (rc)
            return rc;
        *count += marked;
        /* a run whose group was never recorded (killed between the coder's
         * fork and the first commit) is returned with pgid 0: its
         * processes are found by the tag in their environment */
        if (!marked || (c[i].pgid > 0 && !bt_proc_group_alive(c[i].pgid)))
            continue;
        struct bt_store_orphan *o = &orphans[(*n_orphans)++];
        memcpy(o->run, c[i].run, BT_ID_SIZE);
        o->pgid = c[i].pgid;
        o->child_start = c[i].child_start;
    }
    return 0;
}

int bt_store_recover(struct bt_store *s, int *count, struct bt_store_orphan **orphans,
                     size_t *n_orphans)
{
    struct candidate *c = NULL;
    size_t n = 0;
    int marked = 0;
    *orphans = NULL;
    *n_orphans = 0;
    if (count)
        *count = 0;
    int rc = bt_store_flush(s);
    if (rc == 0)
        rc = dead_runs(s, &c, &n);
    if (rc || n == 0) {
        free(c);
        return rc;
    }
    *orphans = bt_xcalloc(n, sizeof **orphans);
    rc = bt_st_tx_begin(s);
    if (rc == 0)
        rc = bt_st_tx_end(s, interrupt_all(s, c, n, &marked, *orphans, n_orphans));
    free(c);
    if (rc || *n_orphans == 0) {
        free(*orphans);
        *orphans = NULL;
        *n_orphans = 0;
    }
    if (count && rc == 0)
        *count = marked;
    return rc;
}
