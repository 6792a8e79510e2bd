/* SPDX-License-Identifier: MIT */
/*
 * store-queue: submitting a turn (a run starts, or its prompt is queued,
 * decided in one transaction), queue numbers, taking queued messages back,
 * and the text of a running turn (store.h, bt_store_run_submit, "Queue
 * numbers" and bt_store_run_answer; docs/store.md, "One run per
 * conversation, queued messages, cancel").
 *
 * A queued message's number comes from its conversation's counter
 * (conversations.queue_last, schema 5), not from the messages left, so a
 * number is never given twice in a conversation: a script that queued #3
 * and takes #3 back cannot take someone else's message, whatever was sent
 * or removed meanwhile.
 */
#include "store-int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "answer.h"
#include "error.h"
#include "proc.h"
#include "util.h"

/* --- SQL ---------------------------------------------------------------- */

static const char SQL_FIND[] = "SELECT id FROM messages WHERE conversation = ?1 AND queue_no = ?2"
                               " AND state = 'queued' AND role = 'user'";
static const char SQL_DELETE[] = "DELETE FROM messages WHERE id = ?1";
static const char SQL_NUMBERED[] = "SELECT run FROM messages WHERE conversation = ?1"
                                   " AND queue_no = ?2";
/* the queue number of message id ?2, if it is queued in ?1 */
static const char SQL_NUMBER_OF[] = "SELECT queue_no FROM messages WHERE conversation = ?1"
                                    " AND id = ?2 AND state = 'queued' AND queue_no IS NOT NULL";
static const char SQL_WAITING[] = "SELECT queue_no FROM messages WHERE conversation = ?1"
                                  " AND state = 'queued' AND role = 'user' ORDER BY seq";
/* only the events answer.h reads: a long turn's tool output is skipped */
static const char SQL_ANSWER_EVENTS[] =
    "SELECT data FROM events WHERE run = ?1"
    " AND type IN ('item.started', 'item.delta', 'item.completed')"
    " ORDER BY seq";

/* --- submitting a turn -------------------------------------------------- */

static const char SQL_RUN_NEXT_TURN[] = "SELECT coalesce(max(turn), 0) + 1 FROM runs"
                                        " WHERE conversation = ?1";
static const char SQL_RUN_INSERT[] = "INSERT INTO runs (id, conversation, turn, coder, model,"
                                     " owner_pid, owner_start, started_ms, prompt) VALUES"
                                     " (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)";
static const char SQL_MSG_LINK_USER[] = "UPDATE messages SET run = ?2, state = CASE state WHEN"
                                        " 'queued' THEN 'complete' ELSE state END, updated_ms = ?3"
                                        " WHERE id = ?4 AND conversation = ?1 AND role = 'user'";
static const char SQL_RUN_LAST_ID[] = "SELECT id FROM runs WHERE conversation = ?1"
                                      " ORDER BY started_ms DESC, rowid DESC LIMIT 1";
static const char SQL_QUEUED_LIST[] = "SELECT text, approval, timeout_ms, idle_timeout_ms, no_retry"
                                      " FROM messages WHERE conversation = ?1"
                                      " AND state = 'queued' AND role = 'user' ORDER BY seq";
static const char SQL_MSG_SET_SETTINGS[] = "UPDATE messages SET approval = ?2, timeout_ms = ?3,"
                                           " idle_timeout_ms = ?4, no_retry = ?5 WHERE id = ?1";
static const char SQL_QUEUED_LINK[] =
    "UPDATE messages SET run = ?2, state = 'complete', updated_ms = ?3"
    " WHERE conversation = ?1 AND state = 'queued' AND role = 'user'";
static const char SQL_QUEUED_COUNT[] = "SELECT count(*) FROM messages WHERE conversation = ?1"
                                       " AND state = 'queued' AND role = 'user'";
static const char SQL_MSG_DISCARD[] = "DELETE FROM messages WHERE id = ?2 AND conversation = ?1"
                                      " AND state = 'queued' AND role = 'user'";
static const char SQL_MSG_STATE[] =
    "SELECT state, run FROM messages WHERE id = ?2 AND conversation = ?1"
    " AND role = 'user'";

static int insert_run(struct bt_store *s, const struct bt_store_run_new *o, const char *id,
                      const char *prompt, int64_t now)
{
    int64_t turn = o->turn;
    uint64_t start = 0;
    sqlite3_stmt *q = bt_st_sql(s, SQL_RUN_NEXT_TURN);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, o->conversation);
    int rc = turn > 0 ? bt_st_done(q, 0) : bt_st_query_int(s, q, "next turn", &turn);
    q = rc == 0 ? bt_st_sql(s, SQL_RUN_INSERT) : NULL;
    if (!q)
        return rc ? rc : BT_ESTORE;
    bt_proc_pid_start((int)getpid(), &start);
    bt_st_bind_text(q, 1, id);
    bt_st_bind_text(q, 2, o->conversation);
    sqlite3_bind_int64(q, 3, turn);
    bt_st_bind_text(q, 4, o->coder);
    bt_st_bind_text(q, 5, o->model);
    sqlite3_bind_int64(q, 6, (int64_t)getpid());
    sqlite3_bind_int64(q, 7, (int64_t)start);
    sqlite3_bind_int64(q, 8, now);
    bt_st_bind_text(q, 9, prompt);
    return bt_st_run(s, q, "create run");
}

/* Link the user message to the run; a queued one becomes complete. */
static int link_user_message(struct bt_store *s, const struct bt_store_run_new *o, const char *id,
                             int64_t now)
{
    sqlite3_stmt *q = bt_st_sql(s, SQL_MSG_LINK_USER);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, o->conversation);
    bt_st_bind_text(q, 2, id);
    sqlite3_bind_int64(q, 3, now);
    sqlite3_bind_int64(q, 4, o->user_message);
    int rc = bt_st_run(s, q, "link user message");
    if (rc == 0 && sqlite3_changes(s->db) == 0)
        rc = bt_st_fail(s, BT_ENOTFOUND, "no user message %lld in conversation '%s'",
                        (long long)o->user_message, o->conversation);
    return rc;
}

/* BT_EBUSY unless run is the conversation's newest run. */
static int check_last_run(struct bt_store *s, const char *conv, const char *run)
{
    sqlite3_stmt *q = bt_st_sql(s, SQL_RUN_LAST_ID);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, conv);
    int rc = bt_st_step(s, q, "find last run");
    if (rc != 1)
        return rc ? rc : bt_st_fail(s, BT_ENOTFOUND, "conversation '%s' has no run", conv);
    int same = strcmp((const char *)sqlite3_column_text(q, 0), run) == 0;
    return bt_st_done(q, same ? 0 : bt_st_fail(s, BT_EBUSY, "a newer turn started meanwhile"));
}

/* The settings columns of a QUEUED_LIST row from column 1 on; NULL (none
 * stored) reads as 0. */
static void read_settings(sqlite3_stmt *q, struct bt_store_settings *st)
{
    st->approval = (int)bt_st_col_i64(q, 1, 0);
    st->timeout_ms = (uint64_t)bt_st_col_i64(q, 2, 0);
    st->idle_timeout_ms = (uint64_t)bt_st_col_i64(q, 3, 0);
    st->no_retry = bt_st_col_i64(q, 4, 0) != 0;
}

/* The conversation's queued user messages joined in order, each followed
 * by a blank line (so the next part starts a paragraph); with out, their
 * settings into out->settings. */
static int queued_text(struct bt_store *s, const char *conv, struct bt_buf *b, int *n,
                       struct bt_store_submitted *out)
{
    sqlite3_stmt *q = bt_st_sql(s, SQL_QUEUED_LIST);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, conv);
    int rc;
    *n = 0;
    while ((rc = bt_st_step(s, q, "list queued messages")) == 1) {
        bt_buf_add(b, sqlite3_column_text(q, 0), (size_t)sqlite3_column_bytes(q, 0));
        bt_buf_adds(b, BT_STORE_QUEUE_JOIN);
        if (out) {
            out->settings = bt_xrealloc(out->settings, (size_t)(*n + 1) * sizeof *out->settings);
            read_settings(q, &out->settings[*n]);
            out->n_settings = (size_t)*n + 1;
        }
        (*n)++;
    }
    return rc;
}

/* The prompt of the new run into b: queued messages, then user_text, or
 * o->prompt. BT_ENOTFOUND when there is nothing to send. */
static int build_prompt(struct bt_store *s, const struct bt_store_run_new *o, struct bt_buf *b,
                        int *n_queued, struct bt_store_submitted *out)
{
    *n_queued = 0;
    int rc = o->take_queued ? queued_text(s, o->conversation, b, n_queued, out) : 0;
    if (rc)
        return rc;
    if (o->user_text)
        bt_buf_adds(b, o->user_text);
    else if (*n_queued)
        b->data[b->len -= strlen(BT_STORE_QUEUE_JOIN)] = '\0';
    else if (o->prompt)
        bt_buf_adds(b, o->prompt);
    else if (o->take_queued && !o->user_message)
        return bt_st_fail(s, BT_ENOTFOUND, "nothing is queued in conversation '%s'",
                          o->conversation);
    if (o->max_prompt && b->len > o->max_prompt)
        return bt_st_fail(s, BT_ETOOBIG, "the prompt would be %zu bytes, more than %zu", b->len,
                          o->max_prompt);
    return 0;
}

/* Queue o->user_text (inside the transaction) when o asks for it. */
static int queue_prompt(struct bt_store *s, const struct bt_store_run_new *o, int64_t now,
                        struct bt_store_submitted *out)
{
    struct bt_buf b = BT_BUF_INIT;
    int n = 0, rc = o->max_prompt ? queued_text(s, o->conversation, &b, &n, NULL) : 0;
    if (rc == 0 && o->max_prompt && b.len + strlen(o->user_text) > o->max_prompt)
        rc =
            bt_st_fail(s, BT_ETOOBIG, "what is queued would be more than %zu bytes", o->max_prompt);
    bt_buf_release(&b);
    struct bt_store_message_new u = {.conversation = o->conversation,
                                     .role = BT_STORE_ROLE_USER,
                                     .state = BT_STORE_MSG_QUEUED,
                                     .text = o->user_text};
    rc = rc ? rc : bt_st_insert_message(s, &u, now, &out->queued, &out->queue_no);
    if (rc || !o->settings)
        return rc;
    sqlite3_stmt *q = bt_st_sql(s, SQL_MSG_SET_SETTINGS);
    if (!q)
        return BT_ESTORE;
    const struct bt_store_settings *st = o->settings;
    sqlite3_bind_int64(q, 1, out->queued);
    sqlite3_bind_int(q, 2, st->approval);
    sqlite3_bind_int64(q, 3, st->timeout_ms > INT64_MAX ? INT64_MAX : (int64_t)st->timeout_ms);
    sqlite3_bind_int64(q, 4,
                       st->idle_timeout_ms > INT64_MAX ? INT64_MAX : (int64_t)st->idle_timeout_ms);
    sqlite3_bind_int(q, 5, st->no_retry != 0);
    return bt_st_run(s, q, "store the message's settings");
}

/* Link every queued user message of the conversation to run id. */
static int take_queued(struct bt_store *s, const char *conv, const char *id, int64_t now)
{
    sqlite3_stmt *q = bt_st_sql(s, SQL_QUEUED_LINK);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, conv);
    bt_st_bind_text(q, 2, id);
    sqlite3_bind_int64(q, 3, now);
    return bt_st_run(s, q, "take queued messages");
}

/* Insert the run, its new user message and its assistant message. */
static int insert_turn(struct bt_store *s, const struct bt_store_run_new *o, const char *id,
                       int64_t now, struct bt_store_submitted *out)
{
    int n_queued = 0;
    struct bt_buf prompt = BT_BUF_INIT;
    int rc = build_prompt(s, o, &prompt, &n_queued, out);
    if (rc == 0)
        rc = insert_run(s, o, id, prompt.len ? prompt.data : NULL, now);
    if (rc == 0 && n_queued)
        rc = take_queued(s, o->conversation, id, now);
    if (rc == 0 && o->user_text) {
        struct bt_store_message_new u = {.conversation = o->conversation,
                                         .role = BT_STORE_ROLE_USER,
                                         .state = BT_STORE_MSG_COMPLETE,
                                         .text = o->user_text,
                                         .run = id};
        rc = bt_st_insert_message(s, &u, now, NULL, NULL);
    }
    if (rc == 0) {
        struct bt_store_message_new m = {.conversation = o->conversation,
                                         .role = BT_STORE_ROLE_ASSISTANT,
                                         .state = BT_STORE_MSG_STREAMING,
                                         .run = id};
        rc = bt_st_insert_message(s, &m, now, &out->message, NULL);
    }
    if (rc == 0 && o->user_message > 0)
        rc = link_user_message(s, o, id, now);
    if (rc == 0 && prompt.len)
        out->prompt = bt_buf_detach(&prompt, NULL);
    bt_buf_release(&prompt);
    return rc;
}

/* The body of bt_store_run_submit, inside its transaction. */
static int submit(struct bt_store *s, const struct bt_store_run_new *o, const char *id,
                  struct bt_store_submitted *out)
{
    int64_t now = bt_now_ms();
    int rc = bt_st_touch_conversation(s, o->conversation, now);
    if (rc == 0)
        rc = bt_st_check_owner(s, o->conversation, o->force);
    if (rc == 0)
        rc = bt_st_check_not_running(s, o->conversation);
    out->busy = rc == BT_EBUSY;
    if (rc == 0 && o->after_run)
        rc = check_last_run(s, o->conversation, o->after_run);
    if ((out->busy && o->queue != BT_STORE_QUEUE_NEVER) ||
        (rc == 0 && o->queue == BT_STORE_QUEUE_ALWAYS))
        return queue_prompt(s, o, now, out);
    return rc ? rc : insert_turn(s, o, id, now, out);
}

void bt_store_submitted_release(struct bt_store_submitted *out)
{
    if (!out)
        return;
    free(out->prompt);
    free(out->settings);
    memset(out, 0, sizeof *out);
}

int bt_store_run_submit(struct bt_store *s, const struct bt_store_run_new *o,
                        struct bt_store_submitted *out)
{
    char new_id[BT_ID_SIZE];
    memset(out, 0, sizeof *out);
    if (!o || !o->conversation || !o->coder || o->turn < 0 || (o->user_text && o->user_message) ||
        (o->queue && !o->user_text))
        return bt_st_fail(s, -EINVAL, "a run needs a conversation, a coder and at most one prompt");
    int rc = bt_id_new(new_id);
    if (rc)
        return bt_st_fail(s, rc, "cannot make an id: %s", strerror(-rc));
    rc = bt_st_tx_begin(s);
    if (rc)
        return rc;
    rc = bt_st_tx_end(s, submit(s, o, new_id, out));
    if (rc == 0 && !out->queued)
        memcpy(out->run, new_id, BT_ID_SIZE);
    if (rc) {
        int busy = out->busy;
        bt_store_submitted_release(out);
        out->busy = busy;
    }
    return rc;
}

int bt_store_run_create(struct bt_store *s, const struct bt_store_run_new *o, char id[BT_ID_SIZE],
                        int64_t *message)
{
    struct bt_store_submitted out;
    id[0] = '\0';
    if (message)
        *message = 0;
    int rc = bt_store_run_submit(s, o, &out);
    if (rc == 0) {
        memcpy(id, out.run, BT_ID_SIZE);
        if (message)
            *message = out.message;
    }
    bt_store_submitted_release(&out);
    return rc;
}

int bt_store_queued_count(struct bt_store *s, const char *conversation, int64_t *n)
{
    sqlite3_stmt *q = conversation ? bt_st_sql(s, SQL_QUEUED_COUNT) : NULL;
    *n = 0;
    if (!q)
        return conversation ? BT_ESTORE : bt_st_fail(s, -EINVAL, "no conversation id");
    bt_st_bind_text(q, 1, conversation);
    return bt_st_query_int(s, q, "count queued messages", n);
}

/* Why a discard removed nothing: BT_ENOTFOUND or -EALREADY. */
static int msg_discard_miss(struct bt_store *s, const char *conv, int64_t msg)
{
    sqlite3_stmt *q = bt_st_sql(s, SQL_MSG_STATE);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, conv);
    sqlite3_bind_int64(q, 2, msg);
    int rc = bt_st_step(s, q, "find message");
    if (rc != 1)
        return rc ? rc
                  : bt_st_fail(s, BT_ENOTFOUND, "the conversation has no user message %lld",
                               (long long)msg);
    const char *run = (const char *)sqlite3_column_text(q, 1);
    rc = bt_st_fail(s, -EALREADY, "message %lld is not queued: it was sent%s%s", (long long)msg,
                    run ? " in run " : "", run ? run : "");
    return bt_st_done(q, rc);
}

int bt_store_message_discard(struct bt_store *s, const char *conversation, int64_t msg)
{
    sqlite3_stmt *q = conversation ? bt_st_write_sql(s, SQL_MSG_DISCARD) : NULL;
    if (!q)
        return conversation ? BT_ESTORE : bt_st_fail(s, -EINVAL, "no conversation id");
    bt_st_bind_text(q, 1, conversation);
    sqlite3_bind_int64(q, 2, msg);
    int rc = bt_st_run(s, q, "discard message");
    if (rc == 0 && sqlite3_changes(s->db) == 0)
        rc = msg_discard_miss(s, conversation, msg);
    return rc;
}

/* --- numbering ---------------------------------------------------------- */

/* --- taking one back ---------------------------------------------------- */

/* " (queued now: #3, #4)" or " (nothing is queued)" into b. */
static int describe_waiting(struct bt_store *s, const char *conv, struct bt_buf *b)
{
    sqlite3_stmt *q = bt_st_sql(s, SQL_WAITING);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, conv);
    int rc, n = 0;
    while ((rc = bt_st_step(s, q, "list queued messages")) == 1)
        bt_buf_addf(b, "%s#%lld", n++ ? ", " : " (queued now: ", (long long)bt_st_col_i64(q, 0, 0));
    bt_buf_adds(b, n ? ")" : " (nothing is queued)");
    return rc;
}

/* Why nothing was removed: -EALREADY for a number that was sent,
 * BT_ENOTFOUND for one never given. */
static int discard_miss(struct bt_store *s, const char *conv, int64_t number)
{
    sqlite3_stmt *q = bt_st_sql(s, SQL_NUMBERED);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, conv);
    sqlite3_bind_int64(q, 2, number);
    int rc = bt_st_step(s, q, "find queued message");
    if (rc == 1) {
        const char *run = (const char *)sqlite3_column_text(q, 0);
        rc =
            bt_st_fail(s, -EALREADY, "queued message #%lld is not queued any more: it was sent%s%s",
                       (long long)number, run ? " in run " : "", run ? run : "");
        return bt_st_done(q, rc);
    }
    if (rc)
        return rc;
    int64_t its = 0; /* a message id given as the number: say which number it has */
    if ((q = bt_st_sql(s, SQL_NUMBER_OF)) == NULL)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, conv);
    sqlite3_bind_int64(q, 2, number);
    if ((rc = bt_st_step(s, q, "find queued message")) == 1)
        its = bt_st_col_i64(q, 0, 0);
    bt_st_done(q, 0);
    struct bt_buf b = BT_BUF_INIT;
    bt_buf_addf(&b, "conversation %s has no queued message #%lld", conv, (long long)number);
    if (rc >= 0)
        rc = describe_waiting(s, conv, &b);
    if (its)
        bt_buf_addf(&b, "; message id %lld is queued as #%lld: the queue number is what counts",
                    (long long)number, (long long)its);
    if (rc == 0)
        rc = bt_st_fail(s, BT_ENOTFOUND, "%s", b.data);
    bt_buf_release(&b);
    return rc;
}

int bt_store_queued_discard(struct bt_store *s, const char *conversation, int64_t number,
                            int64_t *msg)
{
    if (msg)
        *msg = 0;
    if (!conversation)
        return bt_st_fail(s, -EINVAL, "no conversation id");
    int rc = bt_st_tx_begin(s);
    if (rc)
        return rc;
    int64_t id = 0;
    sqlite3_stmt *q = bt_st_sql(s, SQL_FIND);
    if (!q) {
        rc = BT_ESTORE;
    } else {
        bt_st_bind_text(q, 1, conversation);
        sqlite3_bind_int64(q, 2, number);
        rc = bt_st_step(s, q, "find the queued message");
        if (rc == 1)
            id = sqlite3_column_int64(q, 0);
        rc = rc == 1 ? bt_st_done(q, 0) : rc ? rc : discard_miss(s, conversation, number);
    }
    if (rc == 0)
        rc = bt_st_run_keyed(s, SQL_DELETE, NULL, id, "take back the queued message");
    rc = bt_st_tx_end(s, rc);
    if (rc == 0 && msg)
        *msg = id;
    return rc;
}

/* --- a running turn's text ---------------------------------------------- */

int bt_store_run_answer(struct bt_store *s, const char *run, char **text)
{
    *text = NULL;
    sqlite3_stmt *q = run ? bt_st_sql(s, SQL_ANSWER_EVENTS) : NULL;
    if (!q)
        return run ? BT_ESTORE : bt_st_fail(s, -EINVAL, "no run id");
    struct bt_answer a;
    bt_answer_init(&a);
    bt_st_bind_text(q, 1, run);
    int rc;
    while ((rc = bt_st_step(s, q, "read the run's events")) == 1)
        bt_answer_add_json(&a, (const char *)sqlite3_column_text(q, 0),
                           (size_t)sqlite3_column_bytes(q, 0));
    if (rc == 0)
        *text = bt_answer_text(&a);
    bt_answer_release(&a);
    return rc;
}
