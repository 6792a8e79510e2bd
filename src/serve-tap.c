/* SPDX-License-Identifier: MIT */
/*
 * serve-tap: baton serve as a follower of the runs its event streams read
 * (src/channel.h). One connection per running run that a stream waits on,
 * its socket watched by the loop: each batch of events its owner committed
 * wakes the streams of that conversation at once, and they read the events
 * from the store by their cursor (serve-sse.c), so a stream still sees each
 * event once, in order, however it joined. The connection's answer wakes
 * them too: an event committed between a stream's last read and the answer
 * is read then. When the owner closes it (its coder is gone) the streams
 * are woken for the run's end. The inotify watch and the beat of serve.c
 * stay as they were for what no channel says: a run without one, and the
 * streams of every conversation (/v1/events).
 */
#include <stdlib.h>
#include <string.h>

#include "channel.h"
#include "serve.h"
#include "store.h"

struct bt_serve_tap {
    uv_poll_t poll;
    struct bt_serve *srv;
    struct bt_channel_conn conn;
    char run[BT_ID_SIZE];
    char conv[BT_ID_SIZE];
    int closing;
    struct bt_serve_tap *next;
};

/* The lines themselves are the store's, read by each stream's cursor. */
static void on_line(void *data, const char *line, size_t len)
{
    (void)data, (void)line, (void)len;
}

static void tap_closed(uv_handle_t *h)
{
    struct bt_serve_tap *t = h->data;
    bt_channel_conn_close(&t->conn);
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
    int rc = status < 0 ? -1 : bt_channel_conn_read(&t->conn);
    if (rc != 0)
        tap_close(t); /* the owner closed it: the run's end is in the store soon */
    bt_serve_sse_wake(srv, t->conv);
    bt_serve_service(srv);
}

void bt_serve_tap_want(struct bt_serve *srv, const char *conv, const char *run)
{
    if (srv->stopping)
        return;
    for (struct bt_serve_tap *t = srv->taps; t; t = t->next)
        if (strcmp(t->run, run) == 0)
            return;
    struct bt_serve_tap *t = bt_xcalloc(1, sizeof *t);
    if (bt_channel_follow_start(bt_store_home(srv->store), run, &t->conn, on_line, t) != 0) {
        free(t); /* no owner listens (yet, or any more): the store's watch serves */
        return;
    }
    t->srv = srv;
    memcpy(t->run, run, BT_ID_SIZE);
    memcpy(t->conv, conv, BT_ID_SIZE);
    uv_poll_init(&srv->loop, &t->poll, t->conn.fd);
    t->poll.data = t;
    t->next = srv->taps;
    srv->taps = t;
    uv_poll_start(&t->poll, UV_READABLE | UV_DISCONNECT, on_readable);
}

void bt_serve_tap_close_all(struct bt_serve *srv)
{
    while (srv->taps)
        tap_close(srv->taps);
}
