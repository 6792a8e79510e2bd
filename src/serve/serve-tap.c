/* SPDX-License-Identifier: MIT */
/*
 * serve-tap: baton serve as a follower of the runs its event streams read
 * (src/channel.h). One connection per running run that a stream waits on,
 * its socket watched by the loop: each batch of events its owner committed
 * wakes the streams of that conversation at once. The tap keeps the last
 * lines it received, in seq order without a gap (BT_SERVE_TAP_KEEP); a
 * stream whose cursor is among them takes them from there, the others read
 * the store by their cursor (serve-sse.c), so a stream still sees each
 * event once, in order, however it joined, and the store is not read for
 * each commit. The connection's answer wakes them too: an event committed
 * between a stream's last read and the answer is read from the store
 * then. When the owner closes it (its coder is gone) the streams
 * are woken for the run's end. The inotify watch and the beat of serve.c
 * stay as they were for what no channel says: a run without one, and the
 * streams of every conversation (/v1/events).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "channel.h"
#include "id.h"
#include "json.h"
#include "serve.h"
#include "store.h"

/* Lines a tap keeps for its streams (the last ones), and their bytes. */
#define BT_SERVE_TAP_KEEP 256
#define BT_SERVE_TAP_BYTES ((size_t)4 << 20)

struct kept {
    int64_t seq;
    int64_t rowid; /* in the store, 0 if its owner did not say */
    char *type;    /* the event's type */
    char *data;    /* the line, without its LF */
    size_t len;
};

struct bt_serve_tap {
    uv_poll_t poll;
    struct bt_serve *srv;
    struct bt_channel_conn conn;
    char run[BT_ID_SIZE];
    char conv[BT_ID_SIZE];
    int closing;
    int heard;                           /* a line came since bt_serve_tap_heard last asked */
    int unsure;                          /* since the last read: a line not kept with its rowid */
    int trusted;                         /* what listens is the run's owner: its lines are kept */
    struct kept kept[BT_SERVE_TAP_KEEP]; /* a ring: seqs first .. first + n - 1 */
    size_t head;                         /* index of the oldest */
    size_t n;
    size_t bytes;
    struct bt_serve_tap *next;
};

static void drop_oldest(struct bt_serve_tap *t)
{
    struct kept *k = &t->kept[t->head];
    t->bytes -= k->len;
    free(k->type);
    free(k->data);
    memset(k, 0, sizeof *k);
    t->head = (t->head + 1) % BT_SERVE_TAP_KEEP;
    t->n--;
}

/* Keep an event line; one that does not follow the last kept starts over
 * (the store has what lies between). A line not kept (too long, or one
 * the channel could not pass whole: len 0) forgets them all, so that a
 * stream whose cursor is past the last kept reads the store, not waits. */
static void on_line(void *data, const char *line, size_t len)
{
    struct bt_serve_tap *t = data;
    if (!t->trusted) { /* a wake, no more: the streams read the store */
        t->unsure = 1;
        return;
    }
    cJSON *o = len <= BT_SERVE_TAP_BYTES ? cJSON_ParseWithLength(line, len) : NULL;
    const char *type = bt_json_str(o, "type"), *run = bt_json_str(o, "run");
    int64_t seq = bt_json_int(o, "seq");
    t->heard = 1;
    if (t->conn.rowid == 0)
        t->unsure = 1;
    if (!type || seq < 1 || !run || strcmp(run, t->run) != 0) {
        t->unsure = 1;
        cJSON_Delete(o);
        while (t->n)
            drop_oldest(t);
        return;
    }
    if (t->n && t->kept[(t->head + t->n - 1) % BT_SERVE_TAP_KEEP].seq + 1 != seq)
        while (t->n)
            drop_oldest(t);
    while (t->n == BT_SERVE_TAP_KEEP || (t->n && t->bytes + len > BT_SERVE_TAP_BYTES))
        drop_oldest(t);
    struct kept *k = &t->kept[(t->head + t->n++) % BT_SERVE_TAP_KEEP];
    k->seq = seq;
    k->rowid = t->conn.rowid;
    k->type = bt_xstrdup(type);
    k->data = bt_xmalloc(len + 1);
    memcpy(k->data, line, len);
    k->data[len] = '\0';
    k->len = len;
    t->bytes += len;
    cJSON_Delete(o);
}

static struct bt_serve_tap *find(const struct bt_serve *srv, const char *run)
{
    struct bt_serve_tap *t = srv->taps;
    while (t && strcmp(t->run, run) != 0)
        t = t->next;
    return t;
}

static void tap_closed(uv_handle_t *h)
{
    struct bt_serve_tap *t = h->data;
    bt_channel_conn_close(&t->conn);
    while (t->n)
        drop_oldest(t);
    free(t);
}

static void tap_close(struct bt_serve_tap *t)
{
    if (t->closing)
        return;
    t->closing = 1;
    for (struct bt_serve_tap **p = &t->srv->taps; *p; p = &(*p)->next)
        if (*p == t) {
            *p = t->next;
            break;
        }
    uv_poll_stop(&t->poll);
    uv_close((uv_handle_t *)&t->poll, tap_closed);
}

static void on_readable(uv_poll_t *p, int status, int events)
{
    (void)events;
    struct bt_serve_tap *t = p->data;
    struct bt_serve *srv = t->srv;
    int acked = t->conn.acked;
    t->unsure = 0;
    int rc = status < 0 ? -1 : bt_channel_conn_read(&t->conn);
    if (rc != 0)
        tap_close(t); /* the owner closed it: the run's end is in the store soon */
    /* the answer: what was committed before it is in the store only */
    if (rc != 0 || !acked || t->unsure)
        bt_serve_sse_wake(srv, t->conv);
    else
        bt_serve_sse_wake_kept(srv, t->conv);
    bt_serve_service_soon(srv);
}

/* 1 if pid is run's owner. Anything can listen at a run's socket path
 * (a socket put there by hand, another run's owner through a link, which
 * the answer's run already tells), and what it says is kept for the
 * streams only when it is the owner's: a line with the rowid of another
 * run's next event would be sent on /v1/events in its place, and one
 * never stored on the run's own stream. Anything else only wakes the
 * streams, which read the store. */
static int owned_by(struct bt_serve *srv, const char *run, int pid)
{
    struct bt_store_run r = {0};
    int yes = pid > 0 && bt_store_run_get(srv->store, run, &r) == 0 && r.owner_pid == pid;
    bt_store_run_release(&r);
    return yes;
}

void bt_serve_tap_want(struct bt_serve *srv, const char *conv, const char *run)
{
    if (srv->stopping || find(srv, run))
        return;
    struct bt_serve_tap *t = bt_xcalloc(1, sizeof *t);
    if (bt_channel_follow_start(bt_store_home(srv->store), run, BT_CHANNEL_ROWIDS, &t->conn,
                                on_line, t) != 0) {
        free(t); /* no owner listens (yet, or any more): the store's watch serves */
        return;
    }
    t->srv = srv;
    t->trusted = owned_by(srv, run, bt_channel_conn_peer_pid(&t->conn));
    memcpy(t->run, run, BT_ID_SIZE);
    memcpy(t->conv, conv, BT_ID_SIZE);
    uv_poll_init(&srv->loop, &t->poll, t->conn.fd);
    t->poll.data = t;
    t->next = srv->taps;
    srv->taps = t;
    uv_poll_start(&t->poll, UV_READABLE | UV_DISCONNECT, on_readable);
}

int bt_serve_tap_heard(struct bt_serve *srv, const char *run)
{
    struct bt_serve_tap *t = find(srv, run);
    if (!t)
        return 0;
    int heard = !t->closing && t->conn.acked && t->heard;
    t->heard = 0;
    return heard;
}

int bt_serve_tap_each(struct bt_serve *srv, const char *run, int64_t from,
                      int (*cb)(void *data, const struct bt_store_event *ev), void *data)
{
    struct bt_serve_tap *t = find(srv, run);
    if (!t || !t->n || t->kept[t->head].seq > from)
        return -1; /* not kept: the store has it */
    int rc = 0;
    for (size_t i = 0; i < t->n && rc == 0; i++) {
        const struct kept *k = &t->kept[(t->head + i) % BT_SERVE_TAP_KEEP];
        if (k->seq < from)
            continue;
        struct bt_store_event ev = {
            .run = t->run, .seq = k->seq, .type = k->type, .data = k->data, .len = k->len};
        rc = cb(data, &ev);
    }
    return rc;
}

/* The line that tap t kept with rowid, or NULL. */
static const struct kept *kept_row(const struct bt_serve_tap *t, int64_t rowid)
{
    for (size_t i = t->n; i-- > 0;) { /* rowids grow with seqs: from the newest */
        const struct kept *k = &t->kept[(t->head + i) % BT_SERVE_TAP_KEEP];
        if (k->rowid && k->rowid < rowid)
            break;
        if (k->rowid == rowid)
            return k;
    }
    return NULL;
}

/* Two taps that claim one rowid cannot both be right (only owners' lines
 * are kept, but a rowid can be given again once the newest events were
 * deleted), so neither is taken: the store says. */
int bt_serve_tap_row(struct bt_serve *srv, int64_t rowid,
                     int (*cb)(void *data, const struct bt_store_event *ev), void *data)
{
    const struct bt_serve_tap *from = NULL;
    const struct kept *found = NULL;
    for (const struct bt_serve_tap *t = srv->taps; t; t = t->next) {
        const struct kept *k = kept_row(t, rowid);
        if (k && found)
            return -1;
        if (k)
            from = t, found = k;
    }
    if (!found)
        return -1;
    struct bt_store_event ev = {.run = from->run,
                                .seq = found->seq,
                                .type = found->type,
                                .data = found->data,
                                .len = found->len};
    return cb(data, &ev);
}

int64_t bt_serve_tap_last_row(const struct bt_serve *srv)
{
    int64_t last = 0;
    for (const struct bt_serve_tap *t = srv->taps; t; t = t->next)
        for (size_t i = t->n; i-- > 0;) {
            int64_t r = t->kept[(t->head + i) % BT_SERVE_TAP_KEEP].rowid;
            if (r) {
                if (r > last)
                    last = r;
                break;
            }
        }
    return last;
}

/* A socket came or went in the channel directory: an owner that listens
 * now (its bind, a moment before its listen, is what the notice says; a
 * follow refused then waits for the store's notice) is followed when its
 * run runs and a stream follows its conversation. */
static void on_owner(uv_fs_event_t *w, const char *name, int events, int status)
{
    (void)events;
    struct bt_serve *srv = w->data;
    char run[BT_ID_SIZE];
    if (status < 0 || srv->stopping || bt_channel_run_of(name, run) != 0)
        return;
    struct bt_store_run r = {0};
    if (bt_store_run_get(srv->store, run, &r) == 0 && r.state == BT_STORE_RUN_RUNNING &&
        bt_serve_sse_follows(srv, r.conversation))
        bt_serve_tap_want(srv, r.conversation, run);
    bt_store_run_release(&r);
}

void bt_serve_tap_watch(struct bt_serve *srv)
{
    char *dir = NULL;
    uv_fs_event_init(&srv->loop, &srv->owners);
    srv->owners.data = srv;
    if (bt_channel_dir_make(bt_store_home(srv->store), &dir) == 0 &&
        uv_fs_event_start(&srv->owners, on_owner, dir, 0) == 0) {
        free(dir);
        return;
    }
    fprintf(stderr,
            "baton serve: cannot watch %s/%s for runs that start; their events come "
            "through the store's watch\n",
            bt_store_home(srv->store), BT_CHANNEL_DIR);
    free(dir);
}

void bt_serve_tap_close_all(struct bt_serve *srv)
{
    while (srv->taps)
        tap_close(srv->taps);
}
