/* SPDX-License-Identifier: MIT */
/*
 * store-follow: what a process that follows many runs at once (baton
 * serve) reads from the store (store-follow.c).
 */
#ifndef BT_STORE_FOLLOW_H
#define BT_STORE_FOLLOW_H

#include "store.h"

/* SQLite's data_version of this handle: it changes when another handle
 * commits, so a follower reads only after a change. */
int bt_store_data_version(struct bt_store *s, int64_t *version);

/* The largest event rowid (0 when there is no event). Rowids grow in
 * commit order; deleting the newest events lets them be given again, so a
 * cursor above this is pulled back to it. */
int bt_store_event_last(struct bt_store *s, int64_t *rowid);

/* The largest seq of run's events, 0 when it has none. */
int bt_store_event_max_seq(struct bt_store *s, const char *run, int64_t *seq);

/* The rowid of (run, seq); BT_ENOTFOUND when the store has no such event. */
int bt_store_event_rowid(struct bt_store *s, const char *run, int64_t seq, int64_t *rowid);

/* Called for each event with its conversation and rowid; as
 * bt_store_event_fn otherwise. */
typedef int (*bt_store_follow_fn)(void *data, const struct bt_store_event *ev,
                                  const char *conversation, int64_t rowid);

/* Call fn for at most limit events with rowid > after, in rowid (commit)
 * order. Returns 0, fn's non-zero value, or BT_ESTORE. */
int bt_store_event_after(struct bt_store *s, int64_t after, size_t limit, bt_store_follow_fn fn,
                         void *data);

/* Called once per run with events of rowid > after: its conversation,
 * whether it is running now, and the largest such rowid. */
typedef int (*bt_store_changed_fn)(void *data, const char *conversation, const char *run,
                                   int running, int64_t rowid);

/* Call fn for each run with events of rowid > after, in the order of
 * their largest such rowid. Returns 0, fn's non-zero value, or
 * BT_ESTORE. */
int bt_store_event_changed(struct bt_store *s, int64_t after, bt_store_changed_fn fn, void *data);

/* The id of the run of conversation conv that started next after run
 * (a retry of the same turn counts: runs are taken in the order they
 * started); BT_ENOTFOUND when there is none yet, or run is not conv's. */
int bt_store_run_next(struct bt_store *s, const char *conv, const char *run, char id[BT_ID_SIZE]);

#endif
