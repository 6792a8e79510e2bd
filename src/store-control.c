/* SPDX-License-Identifier: MIT */
/*
 * store-control: control requests to a run's owner (store.h, "controls";
 * docs/store.md, "Controls"): stored pending before they are delivered,
 * read back in id order by the owner, finished once with a result.
 */
#include "store-int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "json.h"
#include "util.h"

/* The request goes in only while its run runs: the owner finishes the run
 * before it finishes what is still pending, so nothing added is missed. */
static const char SQL_ADD[] = "INSERT INTO controls (conversation, run, kind, body, created_ms)"
                              " SELECT ?1, ?2, ?3, ?4, ?5 WHERE EXISTS (SELECT 1 FROM runs"
                              " WHERE id = ?2 AND conversation = ?1 AND state = 'running')";
static const char SQL_RUN_STATE[] = "SELECT state FROM runs WHERE id = ?2 AND conversation = ?1";
#define CONTROL_SELECT                                                                             \
    "SELECT c.id, c.conversation, c.run, c.kind, c.body, c.created_ms, c.state, c.result,"         \
    " c.done_ms, (SELECT r.state FROM runs r WHERE r.id = c.run) FROM controls c"
static const char SQL_PENDING[] = CONTROL_SELECT " WHERE c.run = ?1 AND c.state = 'pending'"
                                                 " AND c.id > ?2 ORDER BY c.id LIMIT ?3";
/* requests left pending by a run that ended (its owner died, or it ended
 * between the request and its delivery); a run that is gone counts too */
static const char SQL_STRANDED[] = CONTROL_SELECT " WHERE c.state = 'pending' AND c.id > ?2"
                                                  " AND NOT EXISTS (SELECT 1 FROM"
                                                  " runs r WHERE r.id = c.run AND"
                                                  " r.state = 'running') ORDER BY c.id LIMIT ?3";
static const char SQL_GET[] = CONTROL_SELECT " WHERE c.id = ?1";
static const char SQL_FINISH[] = "UPDATE controls SET state = ?2, result = ?3, done_ms = ?4"
                                 " WHERE id = ?1 AND state = 'pending'";
static const char SQL_EXISTS[] = "SELECT state FROM controls WHERE id = ?1";

/* Rows read per step of bt_store_control_pending: a bound on memory, not
 * on the requests delivered (the walk goes on past it). */
#define PENDING_CHUNK 64

static const char *const state_names[] = {"none",
#define BT_STORE_X(name, text) text,
                                          BT_STORE_CONTROL_STATES(BT_STORE_X)
#undef BT_STORE_X
};

const char *bt_store_control_state_name(enum bt_store_control_state st)
{
    return BT_ST_VALID(state_names, st) ? state_names[st] : "none";
}

void bt_store_control_release(struct bt_store_control *c)
{
    if (!c)
        return;
    free(c->kind);
    free(c->body);
    free(c->result);
    memset(c, 0, sizeof *c);
}

/* A kind is a short word of [a-z_]: it names a handler, never data. */
static int kind_ok(const char *kind)
{
    size_t n = kind ? strlen(kind) : 0;
    if (n == 0 || n > BT_STORE_CONTROL_KIND_MAX)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!((kind[i] >= 'a' && kind[i] <= 'z') || kind[i] == '_'))
            return 0;
    return 1;
}

/* The body is a JSON object: what the handler reads must parse. */
static int body_ok(const char *body)
{
    if (strlen(body) > BT_STORE_CONTROL_BODY_MAX)
        return 0;
    cJSON *o = cJSON_Parse(body);
    int ok = cJSON_IsObject(o);
    cJSON_Delete(o);
    return ok;
}

/* Why a request for run was not stored: it ended, or there is no such run. */
static int add_refused(struct bt_store *s, const char *conversation, const char *run)
{
    sqlite3_stmt *q = bt_st_sql(s, SQL_RUN_STATE);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, conversation);
    bt_st_bind_text(q, 2, run);
    int rc = bt_st_step(s, q, "read run state");
    if (rc != 1)
        return rc ? rc
                  : bt_st_fail(s, BT_ENOTFOUND, "conversation '%s' has no run '%s'", conversation,
                               run);
    char *state = bt_st_col_str0(q, 0);
    rc = bt_st_fail(s, -EALREADY, "run '%s' has ended (%s)", run, state);
    free(state);
    return bt_st_done(q, rc);
}

int bt_store_control_add(struct bt_store *s, const char *conversation, const char *run,
                         const char *kind, const char *body_json, int64_t *id)
{
    *id = 0;
    if (!conversation || !run)
        return bt_st_fail(s, -EINVAL, "no conversation or run id");
    if (!kind_ok(kind))
        return bt_st_fail(s, -EINVAL, "invalid control kind");
    const char *body = body_json ? body_json : "{}";
    if (!body_ok(body))
        return bt_st_fail(s, -EINVAL, "a control's body must be a JSON object of at most %zu bytes",
                          BT_STORE_CONTROL_BODY_MAX);
    sqlite3_stmt *q = bt_st_write_sql(s, SQL_ADD);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, conversation);
    bt_st_bind_text(q, 2, run);
    bt_st_bind_text(q, 3, kind);
    bt_st_bind_text(q, 4, body);
    sqlite3_bind_int64(q, 5, bt_now_ms());
    int rc = bt_st_run(s, q, "store control request");
    if (rc)
        return rc;
    if (sqlite3_changes(s->db) == 0)
        return add_refused(s, conversation, run);
    *id = sqlite3_last_insert_rowid(s->db);
    return 0;
}

static void read_control(sqlite3_stmt *q, struct bt_store_control *c)
{
    memset(c, 0, sizeof *c);
    c->id = sqlite3_column_int64(q, 0);
    bt_st_col_id(q, 1, c->conversation);
    bt_st_col_id(q, 2, c->run);
    c->kind = bt_st_col_str0(q, 3);
    c->body = bt_st_col_str0(q, 4);
    c->created_ms = sqlite3_column_int64(q, 5);
    c->state = BT_ST_COL_ENUM(q, 6, state_names);
    c->result = bt_st_col_str(q, 7);
    c->done_ms = bt_st_col_i64(q, 8, 0);
    c->run_state = BT_ST_COL_ENUM(q, 9, bt_st_run_state_names);
}

static void free_rows(struct bt_store_control *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        bt_store_control_release(&v[i]);
}

/* Up to PENDING_CHUNK pending requests after after_id into v: of run, or
 * with run NULL those whose run ended. */
static int read_chunk(struct bt_store *s, const char *run, int64_t after_id,
                      struct bt_store_control *v, size_t *n)
{
    *n = 0;
    sqlite3_stmt *q = bt_st_sql(s, run ? SQL_PENDING : SQL_STRANDED);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, run);
    sqlite3_bind_int64(q, 2, after_id);
    sqlite3_bind_int64(q, 3, PENDING_CHUNK);
    int rc;
    while ((rc = bt_st_step(s, q, "read pending controls")) == 1)
        read_control(q, &v[(*n)++]);
    if (rc)
        free_rows(v, *n);
    return rc;
}

static int walk(struct bt_store *s, const char *run, int64_t after_id, bt_store_control_fn cb,
                void *data)
{
    struct bt_store_control v[PENDING_CHUNK];
    for (;;) {
        size_t n = 0;
        int rc = read_chunk(s, run, after_id, v, &n);
        if (rc)
            return rc;
        for (size_t i = 0; i < n && rc == 0; i++) {
            rc = cb(data, &v[i]);
            after_id = v[i].id;
        }
        free_rows(v, n);
        if (rc || n < PENDING_CHUNK)
            return rc;
    }
}

int bt_store_control_pending(struct bt_store *s, const char *run, int64_t after_id,
                             bt_store_control_fn cb, void *data)
{
    if (!run)
        return bt_st_fail(s, -EINVAL, "no run id");
    return walk(s, run, after_id, cb, data);
}

int bt_store_control_stranded(struct bt_store *s, bt_store_control_fn cb, void *data)
{
    return walk(s, NULL, 0, cb, data);
}

/* Why finishing id changed nothing: finished before, or no such request. */
static int finish_refused(struct bt_store *s, int64_t id)
{
    sqlite3_stmt *q = bt_st_sql(s, SQL_EXISTS);
    if (!q)
        return BT_ESTORE;
    sqlite3_bind_int64(q, 1, id);
    int rc = bt_st_step(s, q, "read control");
    if (rc != 1)
        return rc ? rc : bt_st_fail(s, BT_ENOTFOUND, "no control request %lld", (long long)id);
    return bt_st_done(
        q, bt_st_fail(s, -EALREADY, "control request %lld was already finished", (long long)id));
}

int bt_store_control_finish(struct bt_store *s, int64_t id, enum bt_store_control_state state,
                            const char *result_json)
{
    if (state != BT_STORE_CONTROL_DONE && state != BT_STORE_CONTROL_REFUSED &&
        state != BT_STORE_CONTROL_QUEUED)
        return bt_st_fail(s, -EINVAL, "a control request is finished done, refused or queued");
    sqlite3_stmt *q = bt_st_write_sql(s, SQL_FINISH);
    if (!q)
        return BT_ESTORE;
    sqlite3_bind_int64(q, 1, id);
    bt_st_bind_text(q, 2, state_names[state]);
    bt_st_bind_text(q, 3, result_json);
    sqlite3_bind_int64(q, 4, bt_now_ms());
    int rc = bt_st_run(s, q, "finish control request");
    if (rc == 0 && sqlite3_changes(s->db) == 0)
        rc = finish_refused(s, id);
    return rc;
}

int bt_store_control_get(struct bt_store *s, int64_t id, struct bt_store_control *out)
{
    memset(out, 0, sizeof *out);
    sqlite3_stmt *q = bt_st_sql(s, SQL_GET);
    if (!q)
        return BT_ESTORE;
    sqlite3_bind_int64(q, 1, id);
    int rc = bt_st_step(s, q, "read control");
    if (rc != 1)
        return rc ? rc : bt_st_fail(s, BT_ENOTFOUND, "no control request %lld", (long long)id);
    read_control(q, out);
    return bt_st_done(q, 0);
}
