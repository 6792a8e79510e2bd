/* SPDX-License-Identifier: MIT */
/*
 * channel: the run owner's local channel. The process that owns a run (a
 * foreground `baton run`, or its detached worker) listens on a Unix socket,
 * $BATON_HOME/channels/<run>.sock (the directory 0700, the socket 0600),
 * while the turn's loop runs. Over it, as JSON lines (framer.h):
 *
 * - a requester that stored a control request (store.h, "controls") wakes
 *   the owner: it sends {"op":"wake"} and closes; the owner delivers what
 *   is pending at once (no poll);
 * - a follower sends {"op":"follow"}, is answered {"op":"following"} once
 *   the owner counts it, and from then on receives every event line of the
 *   run as soon as the owner committed it to the store (after, never
 *   before). Events committed before the answer are in the store: a
 *   follower connects first, then reads the store from its last seq, then
 *   takes the socket's lines, dropping a seq it has seen and filling a gap
 *   from the store, so it loses no event and sees none twice.
 *
 * The owner never blocks on a follower: what a follower has not read is
 * bounded (BT_CHANNEL_BACKLOG_MAX, and BT_CHANNEL_BACKLOG_TOTAL for all
 * of them), and so are the connections (BT_CHANNEL_CONNS_MAX); one that
 * falls behind is cut off and catches up from the store. The socket is removed when the turn's loop
 * ends; a socket left by an owner that died (nobody accepts on it) is
 * stale: the next owner of that path, or recovery, removes it. Nothing is
 * lost with the owner: requests wait stored, events are in the store.
 *
 * Paths: sun_path holds 108 bytes and $BATON_HOME may be longer (a test's
 * directory under /tmp). Such a path is reached through the directory's
 * open descriptor as /proc/self/fd/N/<run>.sock, which the kernel resolves
 * like the long path.
 */
#ifndef BT_CHANNEL_H
#define BT_CHANNEL_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "framer.h"
#include "id.h"

#define BT_CHANNEL_DIR "channels"                /* under $BATON_HOME */
#define BT_CHANNEL_BACKLOG_MAX ((size_t)8 << 20) /* bytes a follower may lag by */
/* bytes all followers together may lag by: many that read nothing cost
 * the owner this much memory at most (each past it is cut off) */
#define BT_CHANNEL_BACKLOG_TOTAL ((size_t)32 << 20)
/* connections open at once; past it the oldest that is no follower is
 * closed, or, all following, the new one as soon as accepted (a follower
 * reads the store), so clients that connect and hold on can neither take
 * the owner's descriptors nor lock followers out */
#define BT_CHANNEL_CONNS_MAX 64
#define BT_CHANNEL_ACK_MS 1000 /* a follower waits this long for its answer */

/* --- the owner's side (on the turn's loop) ------------------------------ */

struct bt_channel;

/* Listen for run (an id, id.h) under home on loop. on_wake is called on
 * the loop for each wake. Returns 0 with *out, -EEXIST when a live owner
 * listens on that path already (nothing changes), or a negative errno
 * (the directory or socket could not be made). A stale socket is
 * replaced. */
int bt_channel_open(uv_loop_t *loop, const char *home, const char *run, void (*on_wake)(void *data),
                    void *data, struct bt_channel **out);

/* Send lines (one or more complete JSON lines, each ending in '\n', of
 * events just committed) to every follower. rowids holds the store rowid
 * of each of the first nrowids lines (0: not known; a line past them has
 * none), for the followers that asked for them (BT_CHANNEL_ROWIDS); NULL
 * sends them the lines alone.
 * Never blocks; a follower whose backlog would pass
 * BT_CHANNEL_BACKLOG_MAX is cut off. */
void bt_channel_publish(struct bt_channel *ch, const char *lines, size_t len, const int64_t *rowids,
                        size_t nrowids);

/* Followers now connected (for tests and benchmarks). */
size_t bt_channel_followers(const struct bt_channel *ch);

/* Remove the socket and close every handle; the memory goes in their close
 * callbacks, so the loop must run once more (uv_run) after this. NULL is a
 * no-op. */
void bt_channel_close(struct bt_channel *ch);

/* --- requesters and followers (any process, no loop) ------------------- */

/* Wake run's owner: a control request of it was stored. 0 when the owner
 * took the wake; -ENOENT or -ECONNREFUSED when no owner listens (the
 * request waits stored: whoever owns the run next, or recovery, finishes
 * it); another negative errno for a failure. Never blocks for long: the
 * socket is non-blocking and the message one short line. */
int bt_channel_wake(const char *home, const char *run);

/* A follower's connection. */
struct bt_channel_conn {
    int fd;                  /* the socket, non-blocking; -1 when closed */
    int acked;               /* the owner answered {"op":"following","run":RUN} */
    int refused;             /* it answered anything else: not run's owner */
    char run[BT_ID_SIZE];    /* the run followed */
    int rowids;              /* asked for rowids (BT_CHANNEL_ROWIDS) */
    int64_t rowid;           /* while on_line runs: its line's rowid, 0 if not known */
    struct bt_framer framer; /* the owner's lines */
    void (*on_line)(void *data, const char *line, size_t len);
    void *data; /* for on_line */
};

/* Connect to run's owner and follow: returns 0 once the owner answered
 * (at most BT_CHANNEL_ACK_MS), so every event committed after this call
 * returned comes on the socket; on_line(data, line, len) gets each event
 * line (without its LF) from bt_channel_conn_read, and an empty line (len
 * 0) in place of one over BT_FRAMER_MAX_LINE_DEFAULT (the store has it). -ENOENT or
 * -ECONNREFUSED when no owner listens (follow the store), -ETIMEDOUT when
 * it did not answer, -EPROTO when what answered is not run's owner (its
 * answer names no run or another), other negative errnos. c is closed on
 * error. */
int bt_channel_follow(const char *home, const char *run, struct bt_channel_conn *c,
                      void (*on_line)(void *data, const char *line, size_t len), void *data);

/* The same without waiting for the answer, for a follower on a loop of
 * its own (baton serve): c->acked becomes 1 when bt_channel_conn_read
 * reads it; only events committed after that are sure to come. flags:
 * BT_CHANNEL_ROWIDS asks for each event's store rowid (c->rowid while
 * on_line runs), for a follower that sends events in commit order across
 * runs without reading the store (baton serve's /v1/events). On the
 * wire, the owner sends {"op":"rowid","from":N} before a line whose
 * rowid is not the one after the line before it; an owner that says
 * nothing (older) leaves c->rowid 0. */
#define BT_CHANNEL_ROWIDS 1u
int bt_channel_follow_start(const char *home, const char *run, unsigned flags,
                            struct bt_channel_conn *c,
                            void (*on_line)(void *data, const char *line, size_t len), void *data);

/* The pid of the process that listens at the other end of c (it made the
 * socket: SO_PEERCRED), or -1 when it cannot be told. A follower that
 * trusts what only the run's owner may say (its rowids) checks it
 * against the run's owner_pid. */
int bt_channel_conn_peer_pid(const struct bt_channel_conn *c);

/* Read what has arrived, without blocking, handing each line to on_line.
 * 0 while the connection is open; -EPIPE when the owner closed it (its
 * turn's loop ended, or it cut this follower off), -EPROTO when the
 * answer was not run's owner's: read the store. */
int bt_channel_conn_read(struct bt_channel_conn *c);

/* Wait up to timeout_ms for something to read (or the end): 1 if ready,
 * 0 on timeout, -EINTR on a signal. */
int bt_channel_conn_wait(struct bt_channel_conn *c, int timeout_ms);

/* Close c (idempotent). */
void bt_channel_conn_close(struct bt_channel_conn *c);

/* The run whose socket a name in the channel directory is (<run>.sock):
 * 0 with run set, -EINVAL for any other name. */
int bt_channel_run_of(const char *name, char run[BT_ID_SIZE]);

/* Make home's channel directory (0700) if it is not there: a follower
 * that watches it for owners (baton serve) sees each socket made in it.
 * 0 with *path (owned), or a negative errno. */
int bt_channel_dir_make(const char *home, char **path);

/* Remove run's socket if it is stale (no owner accepts on it): recovery of
 * a run whose owner died. 1 if removed, 0 if none or live. */
int bt_channel_remove_stale(const char *home, const char *run);

#endif
