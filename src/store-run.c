/* SPDX-License-Identifier: MIT */
/*
 * store-run: a run's life after it was submitted (store-queue.c): its
 * process recorded, a cancel requested, its end, and reading it back
 * (store.h, "runs"; docs/store.md).
 */
#include "store-int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "slot.h"
#include "proc.h"
#include "util.h"

/* --- SQL ---------------------------------------------------------------- */

#define RUN_SELECT                                                                                 \
    "SELECT r.id, r.conversation, r.turn, r.coder, r.coder_version, r.model,"                      \
    " r.state, r.pid, r.pgid, r.child_start, r.owner_pid, r.owner_start,"                          \
    " r.exit_code, r.exit_signal, r.error_kind, r.error_text, r.stderr_tail,"                      \
    " r.native_session_id, r.input_tokens, r.cached_input_tokens,"                                 \
    " r.output_tokens, r.reasoning_tokens, r.context_tokens,"                                      \
    " r.context_window, r.cost_usd, (SELECT m.id FROM messages m"                                  \
    " WHERE m.run = r.id AND m.role = 'assistant' LIMIT 1), r.started_ms,"                         \
    " r.ended_ms, r.prompt, r.cancel_ms, r.stop_stage, r.tree_start, r.tree_end FROM runs r"

static const char SQL_RUN_CANCEL[] = "UPDATE runs SET cancel_ms = coalesce(cancel_ms, ?2)"
                                     " WHERE conversation = ?1 AND state = 'running'";
/* the request delivered to the owner (store-control.c), once per run */
static const char SQL_RUN_CANCEL_CONTROL[] =
    "INSERT INTO controls (conversation, run, kind, body, created_ms)"
    " SELECT r.conversation, r.id, 'cancel', '{}', ?2 FROM runs r"
    " WHERE r.conversation = ?1 AND r.state = 'running' AND NOT EXISTS (SELECT 1 FROM controls c"
    " WHERE c.run = r.id AND c.kind = 'cancel' AND c.state = 'pending')";
static const char SQL_RUN_CANCELLED[] = "SELECT cancel_ms IS NOT NULL FROM runs WHERE id = ?1";
static const char SQL_RUN_STARTED[] = "UPDATE runs SET pid = ?2, pgid = ?3, child_start = ?4,"
                                      " coder_version = coalesce(?5, coder_version) WHERE id = ?1";
static const char SQL_RUN_FINISH[] = "UPDATE runs SET state = ?2, exit_code = ?3, exit_signal = ?4,"
                                     " error_kind = ?5, error_text = ?6, stderr_tail = ?7,"
                                     " native_session_id = coalesce(?8, native_session_id),"
                                     " input_tokens = ?9, cached_input_tokens = ?10,"
                                     " output_tokens = ?11, reasoning_tokens = ?12,"
                                     " context_tokens = ?13, context_window = ?14,"
                                     " cost_usd = ?15, ended_ms = ?16, stop_stage = ?17"
                                     " WHERE id = ?1 AND state = 'running'";
static const char SQL_RUN_STATE[] = "SELECT state FROM runs WHERE id = ?1";
static const char SQL_RUN_TREES[] = "UPDATE runs SET tree_start = coalesce(?2, tree_start),"
                                    " tree_end = coalesce(?3, tree_end) WHERE id = ?1";
static const char SQL_MSG_FINISH[] = "UPDATE messages SET state = ?2, text = coalesce(?3, text),"
                                     " error_kind = ?4, error_text = ?5, updated_ms = ?6"
                                     " WHERE run = ?1 AND role = 'assistant'";
static const char SQL_RUN_TOUCH_CONV[] = "UPDATE conversations SET updated_ms = ?2 WHERE id ="
                                         " (SELECT conversation FROM runs WHERE id = ?1)";
static const char SQL_RUN_GET[] = RUN_SELECT " WHERE r.id = ?1";
static const char SQL_RUN_LIST[] = RUN_SELECT " WHERE r.conversation = ?1"
                                              " ORDER BY r.turn, r.started_ms, r.rowid";
static const char SQL_RUN_LAST[] = RUN_SELECT " WHERE r.conversation = ?1"
                                              " ORDER BY r.started_ms DESC, r.rowid DESC LIMIT 1";

/* --- runs --------------------------------------------------------------- */

void bt_store_run_release(struct bt_store_run *r)
{
    if (!r)
        return;
    free(r->tree_start);
    free(r->tree_end);
    free(r->coder);
    free(r->coder_version);
    free(r->model);
    free(r->error_kind);
    free(r->error_text);
    free(r->stderr_tail);
    free(r->native_session_id);
    free(r->prompt);
    memset(r, 0, sizeof *r);
}

/* Bind v, or NULL when v < 0 (unknown). */
static void bind_known(sqlite3_stmt *q, int i, int64_t v)
{
    if (v >= 0)
        sqlite3_bind_int64(q, i, v);
    else
        sqlite3_bind_null(q, i);
}

/* The request (the run's cancel_ms, which recovery and the views read,
 * and the control request its owner is woken for) and the read of the run
 * it reached are one transaction: a run that ends at once because of it (a
 * turn waiting for a slot) is still the one reported, running, never
 * "nothing to cancel". */
int bt_store_run_cancel(struct bt_store *s, const char *conversation, struct bt_store_run *out)
{
    memset(out, 0, sizeof *out);
    if (!conversation)
        return bt_st_fail(s, -EINVAL, "no conversation id");
    int rc = bt_st_tx_begin(s);
    if (rc)
        return rc;
    sqlite3_stmt *q = bt_st_write_sql(s, SQL_RUN_CANCEL);
    if (!q)
        return bt_st_tx_end(s, BT_ESTORE);
    bt_st_bind_text(q, 1, conversation);
    sqlite3_bind_int64(q, 2, bt_now_ms());
    rc = bt_st_run(s, q, "request cancel");
    if (rc == 0 && sqlite3_changes(s->db) == 0)
        rc = bt_st_fail(s, BT_ENOTFOUND, "no turn is running in conversation '%s'", conversation);
    if (rc == 0 && !(q = bt_st_write_sql(s, SQL_RUN_CANCEL_CONTROL)))
        rc = BT_ESTORE;
    if (rc == 0) {
        bt_st_bind_text(q, 1, conversation);
        sqlite3_bind_int64(q, 2, bt_now_ms());
        rc = bt_st_run(s, q, "store cancel request");
    }
    if (rc == 0)
        rc = bt_store_run_last(s, conversation, out);
    rc = bt_st_tx_end(s, rc);
    if (rc)
        bt_store_run_release(out);
    return rc;
}

int bt_store_run_cancel_requested(struct bt_store *s, const char *run, int *requested)
{
    *requested = 0;
    sqlite3_stmt *q = run ? bt_st_sql(s, SQL_RUN_CANCELLED) : NULL;
    if (!q)
        return run ? BT_ESTORE : bt_st_fail(s, -EINVAL, "no run id");
    bt_st_bind_text(q, 1, run);
    int rc = bt_st_step(s, q, "read cancel request");
    if (rc != 1)
        return rc ? rc : bt_st_fail(s, BT_ENOTFOUND, "no run '%s'", run);
    *requested = sqlite3_column_int(q, 0) != 0;
    return bt_st_done(q, 0);
}

int bt_store_run_started(struct bt_store *s, const char *id, int pid, int pgid,
                         const char *coder_version)
{
    uint64_t start = 0;
    if (!id || pid <= 0 || pgid <= 0)
        return bt_st_fail(s, -EINVAL, "a started run needs an id, a pid and a process group");
    /* inside an open event batch, so the first events and the process group
     * commit together: a crash can never leave stored events of a run whose
     * group nobody can find */
    sqlite3_stmt *q =
        s->batch ? bt_st_sql(s, SQL_RUN_STARTED) : bt_st_write_sql(s, SQL_RUN_STARTED);
    if (!q)
        return BT_ESTORE;
    bt_proc_pid_start(pid, &start);
    bt_st_bind_text(q, 1, id);
    sqlite3_bind_int64(q, 2, pid);
    sqlite3_bind_int64(q, 3, pgid);
    bind_known(q, 4, start ? (int64_t)start : -1);
    bt_st_bind_text(q, 5, coder_version);
    int rc = bt_st_run(s, q, "record run process");
    return rc ? rc : bt_st_changed_one(s, "run", id);
}

/* Bind the usage columns ?9..?15 of RUN_FINISH. */
static void bind_usage(sqlite3_stmt *q, const struct bt_usage *u)
{
    struct bt_usage none;
    bt_usage_init(&none);
    if (!u)
        u = &none;
    bind_known(q, 9, u->input_tokens);
    bind_known(q, 10, u->cached_input_tokens);
    bind_known(q, 11, u->output_tokens);
    bind_known(q, 12, u->reasoning_tokens);
    bind_known(q, 13, u->context_tokens);
    bind_known(q, 14, u->context_window);
    if (u->cost_usd >= 0)
        sqlite3_bind_double(q, 15, u->cost_usd);
}

/* Bind the last BT_STORE_STDERR_TAIL_MAX bytes of the tail, or NULL. */
static void bind_tail(sqlite3_stmt *q, int i, const char *tail, size_t len)
{
    if (!tail)
        return;
    if (len > BT_STORE_STDERR_TAIL_MAX) {
        tail += len - BT_STORE_STDERR_TAIL_MAX;
        len = BT_STORE_STDERR_TAIL_MAX;
    }
    sqlite3_bind_blob(q, i, tail, (int)len, SQLITE_STATIC);
}

/* Why nothing changed: BT_ENOTFOUND or -EALREADY. */
static int finish_miss(struct bt_store *s, const char *id)
{
    sqlite3_stmt *q = bt_st_sql(s, SQL_RUN_STATE);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, id);
    int rc = bt_st_step(s, q, "find run");
    if (rc == 1)
        return bt_st_done(q, bt_st_fail(s, -EALREADY, "run '%s' has already finished (%s)", id,
                                        (const char *)sqlite3_column_text(q, 0)));
    return rc ? rc : bt_st_fail(s, BT_ENOTFOUND, "no run '%s'", id);
}

static int update_run_end(struct bt_store *s, const char *id, const struct bt_store_run_end *e,
                          int64_t now)
{
    sqlite3_stmt *q = bt_st_sql(s, SQL_RUN_FINISH);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, id);
    bt_st_bind_text(q, 2, bt_st_run_state_names[e->state]);
    bind_known(q, 3, e->exit_code == BT_UNKNOWN ? -1 : e->exit_code);
    sqlite3_bind_int64(q, 4, e->exit_signal);
    bt_st_bind_text(q, 5, e->error_kind);
    bt_st_bind_text(q, 6, e->error_text);
    bind_tail(q, 7, e->stderr_tail, e->stderr_tail_len);
    bt_st_bind_text(q, 8, e->native_session_id);
    bind_usage(q, e->usage);
    sqlite3_bind_int64(q, 16, now);
    sqlite3_bind_int(q, 17, e->stop_stage);
    int rc = bt_st_run(s, q, "finish run");
    return rc || sqlite3_changes(s->db) > 0 ? rc : finish_miss(s, id);
}

/* The message state for a run's end state. */
static enum bt_store_msg_state message_state_for(enum bt_store_run_state st)
{
    switch (st) {
    case BT_STORE_RUN_COMPLETED: return BT_STORE_MSG_COMPLETE;
    case BT_STORE_RUN_FAILED: return BT_STORE_MSG_FAILED;
    case BT_STORE_RUN_CANCELLED: return BT_STORE_MSG_CANCELLED;
    default: return BT_STORE_MSG_INTERRUPTED;
    }
}

static int finish_message(struct bt_store *s, const char *id, const struct bt_store_run_end *e,
                          int64_t now)
{
    sqlite3_stmt *q = bt_st_sql(s, SQL_MSG_FINISH);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, id);
    bt_st_bind_text(q, 2, bt_st_msg_state_names[message_state_for(e->state)]);
    bt_st_bind_text(q, 3, e->final_text);
    bt_st_bind_text(q, 4, e->error_kind);
    bt_st_bind_text(q, 5, e->error_text);
    sqlite3_bind_int64(q, 6, now);
    return bt_st_run(s, q, "finish message");
}

static int touch_run_conversation(struct bt_store *s, const char *id, int64_t now)
{
    sqlite3_stmt *q = bt_st_sql(s, SQL_RUN_TOUCH_CONV);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, id);
    sqlite3_bind_int64(q, 2, now);
    return bt_st_run(s, q, "update conversation");
}

int bt_st_finish_run(struct bt_store *s, const char *id, const struct bt_store_run_end *e,
                     int64_t now)
{
    int rc = update_run_end(s, id, e, now);
    if (rc == 0)
        rc = finish_message(s, id, e, now);
    return rc ? rc : touch_run_conversation(s, id, now);
}

int bt_store_run_finish(struct bt_store *s, const char *id, const struct bt_store_run_end *e)
{
    if (!id || !e || !BT_ST_VALID(bt_st_run_state_names, e->state) ||
        e->state == BT_STORE_RUN_RUNNING)
        return bt_st_fail(s, -EINVAL, "a finished run needs an id and an end state");
    int rc = bt_st_tx_begin(s);
    return rc ? rc : bt_st_tx_end(s, bt_st_finish_run(s, id, e, bt_now_ms()));
}

/* Copy a blob column into *p (+ NUL) and its length into *len. */
static void col_blob(sqlite3_stmt *q, int i, char **p, size_t *len)
{
    const void *b = sqlite3_column_blob(q, i);
    *len = (size_t)sqlite3_column_bytes(q, i);
    *p = NULL;
    if (sqlite3_column_type(q, i) == SQLITE_NULL)
        return;
    *p = bt_xmalloc(*len + 1);
    if (*len)
        memcpy(*p, b, *len);
    (*p)[*len] = '\0';
}

static void read_run_usage(sqlite3_stmt *q, struct bt_usage *u)
{
    u->input_tokens = bt_st_col_i64(q, 18, BT_UNKNOWN);
    u->cached_input_tokens = bt_st_col_i64(q, 19, BT_UNKNOWN);
    u->output_tokens = bt_st_col_i64(q, 20, BT_UNKNOWN);
    u->reasoning_tokens = bt_st_col_i64(q, 21, BT_UNKNOWN);
    u->context_tokens = bt_st_col_i64(q, 22, BT_UNKNOWN);
    u->context_window = bt_st_col_i64(q, 23, BT_UNKNOWN);
    u->cost_usd = sqlite3_column_type(q, 24) == SQLITE_NULL ? -1.0 : sqlite3_column_double(q, 24);
}

/* Fill r from a RUN_SELECT row. */
static void read_run(struct bt_store *s, sqlite3_stmt *q, struct bt_store_run *r)
{
    bt_st_col_id(q, 0, r->id);
    bt_st_col_id(q, 1, r->conversation);
    r->turn = sqlite3_column_int64(q, 2);
    r->coder = bt_st_col_str0(q, 3);
    r->coder_version = bt_st_col_str(q, 4);
    r->model = bt_st_col_str(q, 5);
    r->state = (enum bt_store_run_state)BT_ST_COL_ENUM(q, 6, bt_st_run_state_names);
    r->pid = (int)bt_st_col_i64(q, 7, 0);
    r->pgid = (int)bt_st_col_i64(q, 8, 0);
    r->child_start = (uint64_t)bt_st_col_i64(q, 9, 0);
    r->owner_pid = (int)bt_st_col_i64(q, 10, 0);
    r->owner_start = (uint64_t)bt_st_col_i64(q, 11, 0);
    r->exit_code = bt_st_col_i64(q, 12, BT_UNKNOWN);
    r->exit_signal = (int)bt_st_col_i64(q, 13, 0);
    r->error_kind = bt_st_col_str(q, 14);
    r->error_text = bt_st_col_str(q, 15);
    col_blob(q, 16, &r->stderr_tail, &r->stderr_tail_len);
    r->native_session_id = bt_st_col_str(q, 17);
    read_run_usage(q, &r->usage);
    r->message = bt_st_col_i64(q, 25, 0);
    r->started_ms = sqlite3_column_int64(q, 26);
    r->ended_ms = bt_st_col_i64(q, 27, 0);
    r->prompt = bt_st_col_str(q, 28);
    r->cancel_ms = bt_st_col_i64(q, 29, 0);
    r->stop_stage = (int)bt_st_col_i64(q, 30, -1);
    r->tree_start = bt_st_col_str(q, 31);
    r->tree_end = bt_st_col_str(q, 32);
    r->waiting = r->state == BT_STORE_RUN_RUNNING && bt_slot_waiting(s->home, r->id);
}

/* Run a RUN_SELECT statement with ?1 = key and read its row. */
static int get_run(struct bt_store *s, const char *which, const char *key, struct bt_store_run *out)
{
    memset(out, 0, sizeof *out);
    sqlite3_stmt *q = key ? bt_st_sql(s, which) : NULL;
    if (!q)
        return key ? BT_ESTORE : bt_st_fail(s, -EINVAL, "no id given");
    bt_st_bind_text(q, 1, key);
    int rc = bt_st_step(s, q, "get run");
    if (rc != 1)
        return rc ? rc
                  : bt_st_fail(
                        s, BT_ENOTFOUND,
                        which == SQL_RUN_GET ? "no run '%s'" : "conversation '%s' has no run", key);
    read_run(s, q, out);
    return bt_st_done(q, 0);
}

int bt_store_run_get(struct bt_store *s, const char *id, struct bt_store_run *out)
{
    return get_run(s, SQL_RUN_GET, id, out);
}

int bt_store_run_last(struct bt_store *s, const char *conversation, struct bt_store_run *out)
{
    return get_run(s, SQL_RUN_LAST, conversation, out);
}

int bt_store_run_list(struct bt_store *s, const char *conversation, struct bt_store_run **out,
                      size_t *n)
{
    *out = NULL;
    *n = 0;
    sqlite3_stmt *q = bt_st_sql(s, SQL_RUN_LIST);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, conversation);
    size_t cap = 0;
    int rc;
    while ((rc = bt_st_step(s, q, "list runs")) == 1) {
        if (*n == cap) {
            cap = cap ? 2 * cap : 8;
            *out = bt_xrealloc(*out, cap * sizeof **out);
        }
        memset(&(*out)[*n], 0, sizeof **out);
        read_run(s, q, &(*out)[(*n)++]);
    }
    if (rc) {
        bt_store_run_list_free(*out, *n);
        *out = NULL;
        *n = 0;
    }
    return rc;
}

int bt_store_run_set_trees(struct bt_store *s, const char *run, const char *start, const char *end)
{
    if (!run)
        return bt_st_fail(s, -EINVAL, "no run given");
    sqlite3_stmt *q = bt_st_sql(s, SQL_RUN_TREES);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, run);
    bt_st_bind_text(q, 2, start);
    bt_st_bind_text(q, 3, end);
    int rc = bt_st_run(s, q, "store a run's snapshots");
    if (rc == 0 && sqlite3_changes(sqlite3_db_handle(q)) == 0)
        return bt_st_fail(s, BT_ENOTFOUND, "no run '%s'", run);
    return rc;
}

void bt_store_run_list_free(struct bt_store_run *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        bt_store_run_release(&v[i]);
    free(v);
}
