/* SPDX-License-Identifier: MIT */
/*
 * store-rebuild: the store's side of rebuilding a run from its raw output
 * (src/rebuild.h does the re-parsing): which running runs lost their owner,
 * and replacing what a run's stored events lack, with the run's end, in one
 * transaction, so a rebuild cut short leaves the run as it was and can be
 * done again.
 */
#include "store-int.h"

#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "proc.h"
#include "util.h"

static const char *const running_sql =
    "SELECT id, owner_pid, owner_start FROM runs WHERE state = 'running'";

int bt_store_dead_runs(struct bt_store *s, struct bt_store_run **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    char(*ids)[BT_ID_SIZE] = NULL;
    size_t n_ids = 0, cap = 0;
    sqlite3_stmt *q = bt_st_sql(s, running_sql);
    if (!q)
        return BT_ESTORE;
    int rc;
    while ((rc = bt_st_step(s, q, "find running runs")) == 1) {
        if (!bt_proc_pid_gone((int)bt_st_col_i64(q, 1, 0), (uint64_t)bt_st_col_i64(q, 2, 0)))
            continue;
        if (n_ids == cap) {
            cap = cap ? cap * 2 : 4;
            ids = bt_xrealloc(ids, cap * sizeof *ids);
        }
        bt_st_col_id(q, 0, ids[n_ids++]);
    }
    bt_st_done(q, 0);
    if (rc == 0 && n_ids)
        *out = bt_xcalloc(n_ids, sizeof **out);
    for (size_t i = 0; rc == 0 && i < n_ids; i++) {
        int got = bt_store_run_get(s, ids[i], &(*out)[*n]);
        if (got == 0)
            (*n)++;
        else if (got != BT_ENOTFOUND) /* removed meanwhile: not running any more */
            rc = got;
    }
    free(ids);
    if (rc) {
        bt_store_run_list_free(*out, *n);
        *out = NULL;
        *n = 0;
    }
    return rc;
}

/* -EALREADY (naming the state) unless run is running; BT_ENOTFOUND. */
static int check_running(struct bt_store *s, const char *run)
{
    sqlite3_stmt *q = bt_st_sql(s, "SELECT state FROM runs WHERE id = ?1");
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, run);
    int rc = bt_st_step(s, q, "find run");
    if (rc == 1) {
        const char *state = (const char *)sqlite3_column_text(q, 0);
        rc = state && strcmp(state, "running") == 0
                 ? 0
                 : bt_st_fail(s, -EALREADY, "run '%s' has already finished (%s)", run,
                              state ? state : "?");
        return bt_st_done(q, rc);
    }
    return rc ? rc : bt_st_fail(s, BT_ENOTFOUND, "no run '%s'", run);
}

/* The rebuild inside its transaction. */
static int rebuild(struct bt_store *s, const char *run, int64_t kept,
                   const struct bt_store_event *ev, size_t n, const struct bt_store_run_end *e)
{
    int rc = check_running(s, run);
    sqlite3_stmt *q = rc ? NULL : bt_st_sql(s, "DELETE FROM events WHERE run = ?1 AND seq > ?2");
    if (rc || !q)
        return rc ? rc : BT_ESTORE;
    bt_st_bind_text(q, 1, run);
    sqlite3_bind_int64(q, 2, kept);
    rc = bt_st_run(s, q, "drop events to rebuild");
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (strcmp(ev[i].run, run) != 0 || ev[i].seq != kept + 1 + (int64_t)i)
            return bt_st_fail(s, -EINVAL, "rebuilt events of run '%s' must follow seq %lld", run,
                              (long long)kept);
        rc = bt_st_insert_event(s, &ev[i]);
    }
    return rc ? rc : bt_st_finish_run(s, run, e, bt_now_ms());
}

int bt_store_run_rebuild(struct bt_store *s, const char *run, int64_t kept,
                         const struct bt_store_event *ev, size_t n,
                         const struct bt_store_run_end *e)
{
    if (!run || kept < 0 || (n && !ev) || !e || e->state == BT_STORE_RUN_NONE ||
        e->state == BT_STORE_RUN_RUNNING)
        return bt_st_fail(s, -EINVAL, "a rebuild needs a run, events and an end state");
    int rc = bt_st_tx_begin(s);
    return rc ? rc : bt_st_tx_end(s, rebuild(s, run, kept, ev, n, e));
}
