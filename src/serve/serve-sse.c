/* SPDX-License-Identifier: MIT */
/*
 * serve-sse: event streams as Server-Sent Events (docs/api.md). A stream
 * holds a cursor, never a queue: when MHD can send, the reader callback
 * reads the next events from the store (up to BT_SERVE_STREAM_CHUNK bytes)
 * and, when there are none, suspends the connection until serve.c sees the
 * store change and wakes the streams of that conversation. A client that
 * does not read therefore costs its cursor only, and any number of streams
 * see the same events in the same order, each exactly once.
 *
 * Frame ids are "RUN:SEQ", the store's own key of an event: a conversation
 * stream spans runs, and each run numbers its events from 1.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "serve-stream.h"
#include "serve.h"
#include "store-follow.h"
#include "store.h"

static void add_frame(struct bt_serve_stream *st, const struct bt_store_event *ev)
{
    bt_buf_addf(&st->out, "id: %s:%lld\n", ev->run, (long long)ev->seq);
    /* events are one line; a line break would still reach the client whole */
    const char *p = ev->data, *end = ev->data + ev->len;
    do {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *stop = nl ? nl : end;
        bt_buf_adds(&st->out, "data: ");
        bt_buf_add(&st->out, p, (size_t)(stop - p));
        bt_buf_addc(&st->out, '\n');
        p = nl ? nl + 1 : end;
    } while (p < end);
    bt_buf_addc(&st->out, '\n');
}

static int on_event(void *data, const struct bt_store_event *ev)
{
    struct bt_serve_stream *st = data;
    add_frame(st, ev);
    st->next_seq = ev->seq + 1;
    if (strcmp(ev->type, "turn.completed") == 0) {
        st->run_done = 1;
        return 1;
    }
    return st->out.len >= BT_SERVE_STREAM_CHUNK ? 2 : 0;
}

static int on_any_event(void *data, const struct bt_store_event *ev, const char *conv,
                        int64_t rowid)
{
    (void)conv;
    struct bt_serve_stream *st = data;
    add_frame(st, ev);
    st->rowid = rowid;
    st->read++;
    return st->out.len >= BT_SERVE_STREAM_CHUNK;
}

static void stream_error(struct bt_serve_stream *st)
{
    bt_buf_adds(&st->out, ": the store cannot be read: ");
    const char *msg = bt_store_errmsg(st->srv->store);
    bt_buf_add(&st->out, msg, strcspn(msg, "\r\n"));
    bt_buf_adds(&st->out, "\n\n");
    st->ended = 1;
}

/* Take run as the one to read, from seq 1. */
static void set_run(struct bt_serve_stream *st, const char *run)
{
    memcpy(st->run, run, BT_ID_SIZE);
    st->next_seq = 1;
    st->run_done = 0;
}

/* The running or last run, when the stream has none yet; 0 if none is. */
static int pick_run(struct bt_serve_stream *st)
{
    struct bt_store_run r = {0};
    int ok = bt_store_run_last(st->srv->store, st->conv, &r) == 0;
    if (ok) {
        int64_t from = st->next_seq;
        set_run(st, r.id);
        st->next_seq = from;
    }
    bt_store_run_release(&r);
    return ok;
}

/* A stream waiting for a run of a conversation deleted meanwhile (baton rm,
 * DELETE) would wait for ever: it ends. 1 if it ended. */
static int end_if_gone(struct bt_serve_stream *st)
{
    struct bt_store_conversation c = {0};
    if (bt_store_conversation_get(st->srv->store, st->conv, &c) == BT_ENOTFOUND)
        st->ended = 1;
    bt_store_conversation_release(&c);
    return st->ended;
}

static void fill_conversation(struct bt_serve_stream *st)
{
    struct bt_store *s = st->srv->store;
    if (!st->run[0] && !pick_run(st)) {
        end_if_gone(st);
        return; /* the first run is not there yet */
    }
    for (;;) {
        if (!st->run_done) {
            /* what the run's tap kept, without a read of the store: up to
             * date with it, the stream waits for the tap's next wake (the
             * run's end comes from the store once the tap closed) */
            int kept = bt_serve_tap_each(st->srv, st->run, st->next_seq, on_event, st);
            if (kept == 0 || kept == 2)
                return;
        }
        if (!st->run_done) {
            /* the state first: every event committed before the end is read next */
            struct bt_store_run r = {0};
            int got = bt_store_run_get(s, st->run, &r);
            int running = got != 0 || r.state == BT_STORE_RUN_RUNNING;
            bt_store_run_release(&r);
            if (got == BT_ENOTFOUND && end_if_gone(st))
                return;
            int rc = bt_store_event_each(s, st->run, st->next_seq, on_event, st);
            if (rc < 0) {
                stream_error(st);
                return;
            }
            if (rc == 2)
                return; /* a chunk is ready */
            if (!st->run_done && !running)
                st->run_done = 1; /* ended, everything of it sent */
            if (!st->run_done) {
                bt_serve_tap_want(st->srv, st->conv, st->run); /* woken at its next commit */
                return;
            }
        }
        if (!st->follow) {
            st->ended = 1;
            return;
        }
        char next[BT_ID_SIZE];
        if (bt_store_run_next(s, st->conv, st->run, next) != 0) {
            end_if_gone(st);
            return; /* wait for the next run */
        }
        set_run(st, next);
        if (st->out.len >= BT_SERVE_STREAM_CHUNK)
            return;
    }
}

#define BT_SERVE_STREAM_ROWS 256 /* events of one read of the store */

static int on_kept_event(void *data, const struct bt_store_event *ev)
{
    struct bt_serve_stream *st = data;
    add_frame(st, ev);
    st->rowid++;
    return 0;
}

/* Events in commit order: from the taps while they hold the next rowid
 * (each of their lines was committed after everything of a lower rowid,
 * so none is missed), else from the store when it may hold more than
 * the taps (a run followed by no tap, a line that came without its
 * rowid, a tap's later line while this one's next came on no tap). */
static void fill_all(struct bt_serve_stream *st)
{
    int rc = 0;
    while (st->out.len < BT_SERVE_STREAM_CHUNK &&
           (rc = bt_serve_tap_row(st->srv, st->rowid + 1, on_kept_event, st)) == 0)
        ;
    if (rc == 0 || (!st->stale && bt_serve_tap_last_row(st->srv) <= st->rowid))
        return;
    int64_t last = 0;
    if (bt_store_event_last(st->srv->store, &last) != 0) {
        stream_error(st);
        return;
    }
    if (st->rowid > last)
        st->rowid = last; /* the newest events were deleted */
    st->read = 0;
    rc = bt_store_event_after(st->srv->store, st->rowid, BT_SERVE_STREAM_ROWS, on_any_event, st);
    if (rc < 0)
        stream_error(st);
    /* up to date with the store only when the read ran out of events, not
     * when a chunk or the row limit stopped it: nothing else would wake
     * the stream for the rest (a catch-up after every run ended) */
    st->stale = rc != 0 || st->read == BT_SERVE_STREAM_ROWS;
}

static ssize_t reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    struct bt_serve_stream *st = cls;
    if (st->off == st->out.len) {
        bt_buf_reset(&st->out);
        st->off = 0;
        if (!st->ended && !st->srv->stopping)
            st->all ? fill_all(st) : fill_conversation(st);
    }
    if (st->off < st->out.len) {
        size_t n = st->out.len - st->off;
        if (n > max)
            n = max;
        memcpy(buf, st->out.data + st->off, n);
        st->off += n;
        return (ssize_t)n;
    }
    if (st->ended || st->srv->stopping)
        return MHD_CONTENT_READER_END_OF_STREAM;
    MHD_suspend_connection(st->conn);
    st->suspended = 1;
    return 0;
}

static void stream_free(void *cls)
{
    struct bt_serve_stream *st = cls;
    if (st->pprev) {
        *st->pprev = st->next;
        if (st->next)
            st->next->pprev = st->pprev;
    }
    bt_buf_release(&st->out);
    free(st);
}

static enum MHD_Result start(struct bt_serve_req *r, struct bt_serve_stream *st)
{
    struct bt_serve *srv = r->srv;
    st->srv = srv;
    st->conn = r->conn;
    bt_buf_init(&st->out);
    bt_buf_adds(&st->out, "retry: 1000\n\n");
    struct MHD_Response *resp =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16 << 10, reader, st, stream_free);
    if (!resp) {
        stream_free(st);
        return MHD_NO;
    }
    st->next = srv->streams;
    if (st->next)
        st->next->pprev = &st->next;
    st->pprev = &srv->streams;
    srv->streams = st;
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    MHD_add_response_header(resp, "X-Accel-Buffering", "no");
    enum MHD_Result ret = MHD_queue_response(r->conn, MHD_HTTP_OK, resp);
    MHD_destroy_response(resp);
    return ret;
}

/* "RUN:SEQ" (Last-Event-ID or ?after=): 0, or -1 when it is not one. */
static int parse_event_id(const char *text, char run[BT_ID_SIZE], int64_t *seq)
{
    const char *colon = text ? strchr(text, ':') : NULL;
    if (!colon || (size_t)(colon - text) >= BT_ID_SIZE)
        return -1;
    memcpy(run, text, (size_t)(colon - text));
    run[colon - text] = '\0';
    char *end;
    errno = 0;
    long long v = strtoll(colon + 1, &end, 10);
    /* INT64_MAX names no event (seqs are counted from 1) and has no next */
    if (!bt_id_valid(run) || end == colon + 1 || *end || errno || v < 0 || v == INT64_MAX)
        return -1;
    *seq = v;
    return 0;
}

static const char *resume_id(const struct bt_serve_req *r)
{
    const char *h = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Last-Event-ID");
    return h && *h ? h : bt_serve_arg(r, "after");
}

/* A 0/1 query flag: 1, 0, or -1 for another value. */
static int flag(const char *v)
{
    if (!v || strcmp(v, "0") == 0 || strcmp(v, "false") == 0)
        return 0;
    return strcmp(v, "1") == 0 || strcmp(v, "true") == 0 ? 1 : -1;
}

/* ?run=, ?from=, Last-Event-ID/?after= into st; 0 or an error reply. */
static int conversation_cursor(struct bt_serve_req *r, struct bt_serve_stream *st,
                               enum MHD_Result *ret)
{
    const char *run = bt_serve_arg(r, "run"), *from = bt_serve_arg(r, "from");
    const char *resume = resume_id(r);
    char rid[BT_ID_SIZE] = "";
    int64_t seq = 0;
    st->next_seq = 1;
    if (from) {
        char *end;
        long long v = strtoll(from, &end, 10);
        if (end == from || *end || v < 1 || v > INT32_MAX) {
            *ret = bt_serve_fail(r, MHD_HTTP_BAD_REQUEST, "bad_request",
                                 "from takes an event number, 1 or more");
            return -1;
        }
        st->next_seq = v;
    }
    if (resume) {
        if (parse_event_id(resume, rid, &seq) != 0) {
            *ret = bt_serve_fail(r, MHD_HTTP_BAD_REQUEST, "bad_request",
                                 "an event id is RUN:SEQ, as the stream's id: lines");
            return -1;
        }
        st->next_seq = seq + 1;
    } else if (run) {
        if (!bt_id_valid(run)) {
            *ret = bt_serve_fail(r, MHD_HTTP_NOT_FOUND, "not_found",
                                 "conversation %s has no run '%.100s'", st->conv, run);
            return -1;
        }
        snprintf(rid, sizeof rid, "%s", run);
    }
    if (!rid[0])
        return 0;
    struct bt_store_run rr = {0};
    int rc = bt_id_valid(rid) ? bt_store_run_get(r->srv->store, rid, &rr) : BT_ENOTFOUND;
    if (rc == 0 && strcmp(rr.conversation, st->conv) == 0) {
        int64_t first = st->next_seq;
        set_run(st, rid);
        st->next_seq = first;
    } else {
        *ret = bt_serve_fail(r, MHD_HTTP_NOT_FOUND, "not_found", "conversation %s has no run '%s'",
                             st->conv, rid);
    }
    bt_store_run_release(&rr);
    return rc == 0 && st->run[0] ? 0 : -1;
}

enum MHD_Result bt_serve_sse_conversation(struct bt_serve_req *r)
{
    const char *conv = r->conv;
    struct bt_serve_stream *st = bt_xcalloc(1, sizeof *st);
    enum MHD_Result ret = MHD_YES;
    memcpy(st->conv, conv, BT_ID_SIZE);
    st->follow = flag(bt_serve_arg(r, "follow"));
    if (st->follow < 0) {
        free(st);
        return bt_serve_fail(r, MHD_HTTP_BAD_REQUEST, "bad_request",
                             "follow takes 1 or 0 (true or false)");
    }
    if (conversation_cursor(r, st, &ret) != 0) {
        free(st);
        return ret;
    }
    return start(r, st);
}

enum MHD_Result bt_serve_sse_all(struct bt_serve_req *r)
{
    struct bt_serve_stream *st = bt_xcalloc(1, sizeof *st);
    const char *resume = resume_id(r);
    char rid[BT_ID_SIZE];
    int64_t seq;
    st->all = 1;
    st->stale = 1;
    if (resume && parse_event_id(resume, rid, &seq) != 0) {
        free(st);
        return bt_serve_fail(r, MHD_HTTP_BAD_REQUEST, "bad_request",
                             "an event id is RUN:SEQ, as the stream's id: lines");
    }
    /* from now on; after the event named, while the store has it */
    if (!resume || bt_store_event_rowid(r->srv->store, rid, seq, &st->rowid) != 0)
        if (bt_store_event_last(r->srv->store, &st->rowid) != 0) {
            free(st);
            return bt_serve_fail(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal", "%s",
                                 bt_store_errmsg(r->srv->store));
        }
    return start(r, st);
}
