/* SPDX-License-Identifier: MIT */
/*
 * serve-stream: an event stream's state (serve-sse.c) and its waking,
 * shared by the stream's reader (serve-sse.c) and what wakes the streams
 * from outside it (serve-stream.c: the store changed, a run's channel
 * spoke (serve-tap.c), a beat, a probe, stopping). Not for use outside
 * src/serve/.
 */
#ifndef BT_SERVE_STREAM_H
#define BT_SERVE_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "serve.h"

struct bt_serve_stream {
    struct bt_serve *srv;
    struct MHD_Connection *conn;
    struct bt_serve_stream *next, **pprev;
    int all;               /* /v1/events: every conversation, by rowid */
    char conv[BT_ID_SIZE]; /* the conversation followed */
    char run[BT_ID_SIZE];  /* the run read now, "" until there is one */
    int64_t next_seq;      /* the next seq of run to send */
    int64_t rowid;         /* all: events up to this rowid were sent */
    int stale;             /* all: the store may hold more than the taps say */
    unsigned read;         /* all: events the present read of the store gave */
    int follow;            /* go on with the conversation's later runs */
    int run_done;          /* run's last event was sent */
    int ended;             /* nothing more: end once out is sent */
    int suspended;         /* waiting for a change */
    struct bt_buf out;     /* frames not yet taken by MHD, from off */
    size_t off;
};

/* A suspended stream resumes: MHD calls its reader again, which reads
 * the store. Nothing when it is not suspended. */
void bt_serve_stream_wake(struct bt_serve_stream *st);

#endif
