/* SPDX-License-Identifier: MIT */
/*
 * serve-stream: the event streams woken from outside their reader
 * (serve-stream.h): by the store's change, a run's channel (serve-tap.c),
 * the beat with its probes and recovery, and stopping. Below serve-sse.c,
 * serve-tap.c and serve-conn.c: it calls none of them, so the tap that
 * wakes the streams and the streams that read the tap form no circle.
 */
#include <stdio.h>
#include <string.h>

#include "serve-stream.h"
#include "service-conv.h"
#include "util.h"

void bt_serve_stream_wake(struct bt_serve_stream *st)
{
    if (st->suspended) {
        st->suspended = 0;
        MHD_resume_connection(st->conn);
    }
}

/* st follows conv's events (conv NULL: any) */
static int follows(const struct bt_serve_stream *st, const char *conv)
{
    return !conv || st->all || strcmp(st->conv, conv) == 0;
}

void bt_serve_sse_wake(struct bt_serve *srv, const char *conv)
{
    for (struct bt_serve_stream *st = srv->streams; st; st = st->next)
        if (follows(st, conv)) {
            st->stale = 1;
            bt_serve_stream_wake(st);
        }
}

void bt_serve_sse_wake_kept(struct bt_serve *srv, const char *conv)
{
    for (struct bt_serve_stream *st = srv->streams; st; st = st->next)
        if (follows(st, conv))
            bt_serve_stream_wake(st);
}

int bt_serve_sse_follows(const struct bt_serve *srv, const char *conv)
{
    for (const struct bt_serve_stream *st = srv->streams; st; st = st->next)
        if (follows(st, conv))
            return 1;
    return 0;
}

static void probe_all(struct bt_serve *srv)
{
    for (struct bt_serve_stream *st = srv->streams; st; st = st->next) {
        bt_buf_adds(&st->out, ":\n\n");
        bt_serve_stream_wake(st);
    }
}

void bt_serve_sse_probe(struct bt_serve *srv)
{
    probe_all(srv);
    srv->probes = 3;
}

void bt_serve_sse_beat(struct bt_serve *srv, int ping)
{
    char ts[32];
    bt_time_rfc3339(bt_now_ms(), ts);
    for (struct bt_serve_stream *st = srv->streams; st; st = st->next)
        if (ping) {
            bt_buf_addf(&st->out, ": keepalive\n\nevent: ping\ndata: {\"ts\":\"%s\"}\n\n", ts);
            bt_serve_stream_wake(st);
        }
    if (srv->probes > 0) {
        srv->probes--;
        probe_all(srv);
    }
    /* a run whose baton process died ends interrupted, so its followers get
     * the closing turn.completed and the API no longer finds it busy */
    if (bt_serve_recover(srv))
        bt_serve_sse_wake(srv, NULL);
}

void bt_serve_sse_close_all(struct bt_serve *srv)
{
    for (struct bt_serve_stream *st = srv->streams; st; st = st->next) {
        st->ended = 1;
        bt_serve_stream_wake(st);
    }
}

void bt_serve_say(void *data, const char *line)
{
    (void)data;
    fprintf(stderr, "baton: %s\n", line);
}

int bt_serve_recover(struct bt_serve *srv)
{
    return bt_service_recover(srv->store, bt_serve_say, NULL) > 0;
}
