/* SPDX-License-Identifier: MIT */
/*
 * serve: `baton serve`, the HTTP + SSE front end (docs/api.md). One thread:
 * a libuv loop drives libmicrohttpd in its external epoll mode (the
 * daemon's epoll fd is one uv_poll_t), so requests, event streams, worker
 * reports and the store's change notices are all handled on the loop, and
 * the store is one handle used by one thread. serve owns no run: turns go
 * to detached workers (cmd-turn.h), and streams read the store by seq.
 *
 *   serve.c        the loop, the daemon, the store watch, the beat
 *   serve-http.c   a request: checks (Host, Origin, token), body, replies
 *   serve-route.c  the routes of /v1 and the page
 *   serve-api.c    the handlers that change conversations
 *   serve-fanout.c a prompt to several coders (a group)
 *   serve-work.c   a turn's changes, keep, groups
 *   serve-sse.c    event streams
 *   serve-token.c  the token file
 *   serve-conn.c   the listen socket, the connection limit, header deadlines
 *   serve-task.c   rm, handoff and a decision's wait, run off the loop
 *   serve-reply.c  replies, errors, query arguments: the bottom
 *
 * Calls go one way (tests/scripts/cycles.py measures it): serve.c (the
 * loop) over serve-http.c (a request) over serve-route.c (the table) over
 * the handlers (serve-api, -read, -page, -sse, -task) over serve-reply.c;
 * serve-conn.c and serve-token.c beside http, called from above.
 *
 * Every rule about a conversation is the service's (service.h,
 * service-conv.h): these files read requests, call it and write replies;
 * none includes a header of the CLI (cmd-*.h).
 */
#ifndef BT_SERVE_H
#define BT_SERVE_H

#include <microhttpd.h>
#include <stdint.h>
#include <uv.h>

#include "id.h"
#include "service.h"
#include "util.h"

#define BT_SERVE_TOKEN_HEX 64            /* the token: 32 random bytes in hex */
#define BT_SERVE_BODY_MAX (4u << 20)     /* a request body: 413 beyond */
#define BT_SERVE_SPARE 16                /* past that, up to this many more get a 503 */
#define BT_SERVE_CONNECTIONS 256         /* open connections (serve-conn.c says how) */
#define BT_SERVE_IDLE_S 60               /* a connection idle this long closes */
#define BT_SERVE_HEADER_S 15             /* a request's headers and body take at most this long */
#define BT_SERVE_URI_MAX 8192            /* a request target: 414 beyond */
#define BT_SERVE_MEMORY (64u << 10)      /* MHD's buffer per connection: the target and headers */
#define BT_SERVE_PING_MS 15000           /* default beat of pings on streams */
#define BT_SERVE_CHECK_MS 1000           /* the fallback read of the store */
#define BT_SERVE_STREAM_CHUNK (64 << 10) /* bytes a stream reads ahead */
#define BT_SERVE_RESCANS 3               /* reads after a notice, at 2, 4, 8 ms (serve.c) */
#define BT_SERVE_NOTICE_MS 20            /* a notice's read while channels are followed */
#define BT_SERVE_RUNS_AT_ONCE 8          /* MHD runs while it has more to do */

struct bt_store;
struct bt_serve_stream;
struct bt_serve_task;
struct bt_serve_job;
struct bt_serve_fan;
struct bt_serve_conn;

struct bt_serve_opts {
    const char *host;  /* listen address: a name or a numeric address */
    int port;          /* 0: the kernel picks one */
    int allow_remote;  /* a non-loopback address is refused without it */
    uint64_t ping_ms;  /* beat of keepalive comments and ping frames */
    const char *baton; /* the baton program (workers) */
};

struct bt_serve_tap;
struct bt_store_event;

struct bt_serve {
    uv_loop_t loop;
    struct MHD_Daemon *mhd;
    uv_poll_t mhd_poll;          /* the daemon's epoll fd */
    uv_poll_t listen_poll;       /* our listen socket (serve-conn.c) */
    int listen_fd;               /* it, or -1 */
    struct bt_serve_conn *conns; /* every connection MHD holds */
    int nconns;                  /* how many */
    int nshut;                   /* of those, shut down and not yet closed by MHD */
    uv_timer_t mhd_timer;        /* the daemon's own timeouts */
    uv_poll_t watch;             /* $BATON_HOME's inotify: the store's -wal changes */
    int watch_fd;                /* that inotify, -1 if none */
    int watch_paused;            /* watch not polled until the scan timer's read */
    uv_fs_event_t owners;        /* $BATON_HOME/channels: run owners that listen */
    uv_timer_t scan;             /* a change was seen: read it on the next turn */
    uv_check_t soon;             /* bt_serve_service_soon: after this turn's callbacks */
    uv_timer_t beat;             /* BT_SERVE_CHECK_MS: fallback read, pings, owners */
    uv_signal_t sigint, sigterm;
    struct bt_store *store;
    char token[BT_SERVE_TOKEN_HEX + 1];
    char host[256]; /* the listen host, as Host headers may name it */
    int port;       /* the port listened on */
    uint64_t ping_ms;
    int64_t next_ping_ms;            /* monotonic time of the next ping */
    int64_t data_version;            /* the store's, when last read */
    int rescans;                     /* reads again since the last notice */
    int64_t rowid;                   /* events up to this rowid have woken their streams */
    int watching;                    /* the store watch is on */
    struct bt_serve_stream *streams; /* every open event stream */
    struct bt_serve_tap *taps;       /* run owners' channels followed (serve-tap.c) */
    struct bt_serve_job *jobs;       /* every worker report awaited */
    struct bt_serve_task *tasks;     /* every operation run off the loop for a request */
    const char *baton;               /* that baton */
    int probes;                      /* beats that still probe every stream */
    int stopping;
};

/* One request, from its URI to its end (MHD's connection-level pointer). */
struct bt_serve_req {
    struct bt_serve *srv;
    struct MHD_Connection *conn;
    char *uri;          /* as it came, before any unescaping */
    const char *uri_at; /* where MHD holds it (only compared, never read) */
    size_t uri_len;     /* its length as MHD read it */
    const char *method;
    struct bt_buf body;         /* the body so far */
    int started;                /* the first call (headers only) was seen */
    int too_large;              /* the body went over BT_SERVE_BODY_MAX */
    int open;                   /* a route without the token: its body, which no such
                                   route takes, is read and dropped, never kept */
    uint64_t dropped;           /* the bytes of body so dropped */
    int suspended;              /* waiting for a worker's report */
    struct MHD_Response *reply; /* made while suspended, queued on resume */
    unsigned reply_status;
    struct bt_serve_job *job;   /* the worker report awaited, or NULL */
    struct bt_serve_task *task; /* the operation run off the loop for it, or NULL */
    struct bt_serve_fan *fan;   /* the fan-out it waits for, or NULL */
    char *location;             /* a Location header for the reply, or NULL */
    char conv[BT_ID_SIZE];      /* the route's {id}: a conversation that exists, or "" */
    char arg[128];              /* the route's {n} or {file}, unescaped, or "" */
};

/* serve-tap.c: follow run's owner through its channel (channel.h), if
 * not yet, so its commits wake conv's streams at once; nothing when no
 * owner listens (the store's watch wakes them). Close every one (stop). */
void bt_serve_tap_want(struct bt_serve *srv, const char *conv, const char *run);
void bt_serve_tap_close_all(struct bt_serve *srv);
/* Watch the channel directory: each owner that starts to listen is
 * followed at once when a stream follows its conversation (a new run is
 * seen before its first commit's notice is read). Nothing if it cannot
 * be watched (the store's watch sees the run later). */
void bt_serve_tap_watch(struct bt_serve *srv);
/* 1 when run's tap is open, its owner answered, and a line came on it
 * since the last call (which asks anew): its commits come on it and wake
 * the streams, so a read of the store need not; 0 otherwise (no tap, or
 * one that said nothing while the store got events: the streams read
 * the store). */
int bt_serve_tap_heard(struct bt_serve *srv, const char *run);
/* The events of run from seq `from` on that its tap kept (it received
 * them after their commit), each to cb as bt_store_event_each does; cb's
 * nonzero return stops and is returned. -1 when the tap does not hold
 * seq `from` (no tap, nothing kept, or older): read the store. 0 when
 * all were given (none newer than the last kept: up to date). */
int bt_serve_tap_each(struct bt_serve *srv, const char *run, int64_t from,
                      int (*cb)(void *data, const struct bt_store_event *ev), void *data);
/* The event of store rowid `rowid` if a tap kept it (its owner said its
 * rowid, channel.h BT_CHANNEL_ROWIDS), to cb: cb's return, or -1 when no
 * tap holds it, or two do (one is wrong: the store says which). */
int bt_serve_tap_row(struct bt_serve *srv, int64_t rowid,
                     int (*cb)(void *data, const struct bt_store_event *ev), void *data);
/* The largest rowid any tap kept, 0 if none: a stream in commit order
 * whose cursor is below it, and whose next rowid no tap holds, reads the
 * store for what lies between. */
int64_t bt_serve_tap_last_row(const struct bt_serve *srv);

/* serve.c: run the server until SIGINT/SIGTERM. Prints the page's address
 * with the token on stdout (one line), the token file on stderr. Returns
 * OK, USAGE (a remote address without allow_remote) or FAILED (why said
 * on stderr), which main-serve.c makes the exit code. */
enum bt_service_result bt_serve_run(const struct bt_serve_opts *o);
/* serve-stream.c: what the service says (bt_service_say_fn): "baton: LINE" on stderr. */
void bt_serve_say(void *data, const char *line);

/* serve-conn.c: let MHD do what it can now (after a change it does not see
 * through its epoll fd: a connection added or shut down). */
void bt_serve_service(struct bt_serve *srv);
/* The same once the loop has run every callback of this turn (its check
 * phase): the streams woken by several channels' lines read at once are
 * sent in one pass, a /v1/events stream's events together. */
void bt_serve_service_soon(struct bt_serve *srv);

/* serve-conn.c: listen on sa (SO_REUSEADDR, not SO_REUSEPORT; IPv6 only
 * for an IPv6 address) and accept on the loop; sets srv->port and
 * srv->listen_fd. 0, or -1 with *why (owned) the system's reason. */
int bt_serve_conn_listen(struct bt_serve *srv, const struct sockaddr_storage *sa, char **why);
/* Stop accepting and close the listen socket. */
void bt_serve_conn_close(struct bt_serve *srv);
/* MHD's connection notice (MHD_OPTION_NOTIFY_CONNECTION): track it. */
void bt_serve_conn_notify(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe);
/* A request is in, headers and body (it is routed or refused): no
 * deadline until it is done. */
void bt_serve_conn_request_in(struct MHD_Connection *c);
/* A request is done: the connection's next request has BT_SERVE_HEADER_S. */
void bt_serve_conn_request_done(struct MHD_Connection *c);
/* 1 when more than BT_SERVE_CONNECTIONS connections are open (the spare
 * ones, answered 503). */
int bt_serve_conn_over(const struct bt_serve *srv);
/* The beat: shut down the connections past their header deadline. */
void bt_serve_conn_beat(struct bt_serve *srv);

/* serve-token.c: read $BATON_HOME/serve.token, or make it (0600) on the
 * first start. Refuses a token file others can read, or one that is not 64
 * hex digits. Returns 0 or a negative error with *why (owned) set. */
int bt_serve_token(const char *home, char token[BT_SERVE_TOKEN_HEX + 1], char **why);
/* Constant-time comparison of a presented token with ours: 1 when equal. */
int bt_serve_token_equal(const char *a, const char *ours);

/* serve-http.c: the MHD callbacks. */
void *bt_serve_http_uri(void *cls, const char *uri, struct MHD_Connection *c);
enum MHD_Result bt_serve_http_access(void *cls, struct MHD_Connection *c, const char *url,
                                     const char *method, const char *version, const char *upload,
                                     size_t *upload_size, void **con_cls);
void bt_serve_http_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                             enum MHD_RequestTerminationCode toe);

/* Replies. body (owned by the call, may be NULL) is the JSON text; 0
 * status codes are not sent. Each returns what the access handler returns. */
enum MHD_Result bt_serve_reply(struct bt_serve_req *r, unsigned status, struct bt_buf *body);
enum MHD_Result bt_serve_fail(struct bt_serve_req *r, unsigned status, const char *kind,
                              const char *fmt, ...) BT_PRINTF(4, 5);
/* The same for a suspended request (a worker reported): the reply is
 * queued when MHD calls the handler again, which resuming asks for. */
void bt_serve_reply_later(struct bt_serve_req *r, unsigned status, struct bt_buf *body);
void bt_serve_fail_later(struct bt_serve_req *r, unsigned status, const char *kind, const char *fmt,
                         ...) BT_PRINTF(4, 5);
/* The error object {"error":{"kind","message"}} into b. */
void bt_serve_error_json(struct bt_buf *b, const char *kind, const char *message);
/* A query argument, or NULL. */
const char *bt_serve_arg(const struct bt_serve_req *r, const char *key);

/* serve-ask.c: a person's answers (--approval ask); r->conv exists.
 * list: GET .../requests, what waits ({run, requests: [approval.requested
 * events]}); decide: POST .../requests/{n} (r->arg the request id), body
 * {decision: allow|always|deny, answers?}: 202 once stored, 409 when
 * nothing (more) waits as n, 400 for a body that does not fit. */
enum MHD_Result bt_serve_ask_list(struct bt_serve_req *r);
enum MHD_Result bt_serve_ask_decide(struct bt_serve_req *r);

/* serve-route.c: dispatch a whole request (path split from r->uri) by the
 * one table of routes there (method, path pattern, handler). A handler is
 * enum MHD_Result fn(struct bt_serve_req *r), with r->conv and r->arg set
 * from the pattern. */
enum MHD_Result bt_serve_route(struct bt_serve_req *r);
/* 1 when uri, read as bt_serve_route reads it (each segment unescaped),
 * names what anyone may fetch without the token: the page's files and
 * /v1/openapi.json. 0 for everything else, a path that names nothing
 * included, so no spelling of /v1 (%76%31, v%31) passes unchecked. */
int bt_serve_route_open(const char *uri);

/* serve-api.c: the handlers that start turns or change a conversation;
 * r->conv is a full id that exists. */
enum MHD_Result bt_serve_api_create(struct bt_serve_req *r);
enum MHD_Result bt_serve_api_send(struct bt_serve_req *r);
enum MHD_Result bt_serve_api_retry(struct bt_serve_req *r);
enum MHD_Result bt_serve_api_cancel(struct bt_serve_req *r);
enum MHD_Result bt_serve_api_steer(struct bt_serve_req *r);
enum MHD_Result bt_serve_api_remove(struct bt_serve_req *r);
/* For the requests that take no fields (cancel, a queued message's
 * DELETE, a conversation's DELETE, login): no body, or a JSON object with
 * no member. 0, or -1 with the 400 queued in *ret, as a malformed body or
 * an unknown field of any request. */
int bt_serve_body_none(struct bt_serve_req *r, enum MHD_Result *ret);
/* A body that must be one JSON object (POST .../requests/{n}): UTF-8
 * with no NUL, one JSON value and nothing after it. The tree (the
 * caller's, cJSON_Delete), or NULL with the 400 queued in *ret. */
struct cJSON;
struct cJSON *bt_serve_body_object(struct bt_serve_req *r, enum MHD_Result *ret);
/* r->arg: the queued message's number */
enum MHD_Result bt_serve_api_unqueue(struct bt_serve_req *r);
enum MHD_Result bt_serve_api_handoff(struct bt_serve_req *r);
/* The body of POST .../keep: {"prune": bool} or none. 0, or -1 with the
 * 400 queued in *ret. */
int bt_serve_body_keep(struct bt_serve_req *r, int *prune, enum MHD_Result *ret);
/* 1 with a 409 busy queued in *ret when a turn of conv runs, else 0. */
int bt_serve_busy(struct bt_serve_req *r, const char *conv, enum MHD_Result *ret);
/* A request going away while its worker report is awaited. */
void bt_serve_api_forget(struct bt_serve_req *r);
/* Stopping: answer the requests still waiting (503) and stop reading the
 * reports (the workers go on). */
void bt_serve_api_stop(struct bt_serve *srv);

/* serve-fanout.c: POST /v1/conversations with "coders": the service makes
 * the group and its conversations (service-work.h, bt_service_fanout), a
 * worker per member is started with start (serve-api.c's, so that this
 * file calls none of serve-api.c's by name: the calls go one way) and the
 * request waits for every report. start(srv, fan, index, conv, queued, t)
 * starts the worker that flushes conv (its prompt queued as message
 * queued), whose report goes to bt_serve_fan_report; it returns 0, or a
 * negative error (what was stored for it is taken back, and no report
 * comes). coders is the body's array of names (borrowed for the call). */
struct cJSON;
struct bt_service_turn;
typedef int (*bt_serve_member_start_fn)(struct bt_serve *srv, struct bt_serve_fan *fan,
                                        size_t index, const char *conv, int64_t queued,
                                        const struct bt_service_turn *t);
enum MHD_Result bt_serve_fan_create(struct bt_serve_req *r, const struct bt_service_turn *t,
                                    const struct cJSON *coders, bt_serve_member_start_fn start);
/* Member index's worker reported: run started it; NULL: it did not, and o
 * says why (result, error_kind, message), or is NULL when the server
 * stops before the worker reported. */
struct bt_service_outcome;
void bt_serve_fan_report(struct bt_serve_fan *fan, size_t index, const char *run,
                         const struct bt_service_outcome *o);
/* The request of r went away: the reports are still read. */
void bt_serve_fan_forget(struct bt_serve_req *r);

/* serve-work.c: what conversations changed, and keeping it
 * (service-work.h): GET .../diff (every turn) and .../turns/{n}/diff
 * (r->arg the turn), POST .../keep, GET /v1/groups and /v1/groups/{gid}
 * (r->arg the group). */
enum MHD_Result bt_serve_work_diff(struct bt_serve_req *r);
enum MHD_Result bt_serve_work_turn_diff(struct bt_serve_req *r);
enum MHD_Result bt_serve_work_keep(struct bt_serve_req *r);
enum MHD_Result bt_serve_work_groups(struct bt_serve_req *r);
enum MHD_Result bt_serve_work_group(struct bt_serve_req *r);

/* serve-read.c: what reads the store (the views of view.h). */
enum MHD_Result bt_serve_read_coders(struct bt_serve_req *r);
enum MHD_Result bt_serve_read_list(struct bt_serve_req *r);
enum MHD_Result bt_serve_read_detail(struct bt_serve_req *r);

/* serve-task.c: the service's rm and handoff (--print, or --tmux) (and
 * bt_serve_task_decide below) of
 * r->conv, run in libuv's thread pool while the request waits suspended
 * (409 busy first while a turn runs). */
enum MHD_Result bt_serve_task_remove(struct bt_serve_req *r);
enum MHD_Result bt_serve_task_handoff(struct bt_serve_req *r, int tmux);
/* bt_service_decide of d (copied) for r->conv, waiting up to d->wait_ms
 * for the run's owner to take it (or to refuse answers the coder cannot
 * take: 400) off the loop; 202, 400, 409 as serve-ask.c says. */
struct bt_service_decision;
enum MHD_Result bt_serve_task_decide(struct bt_serve_req *r, const struct bt_service_decision *d);
/* A request going away: its task's reply is dropped. */
void bt_serve_task_forget(struct bt_serve_req *r);
/* Stopping: answer the requests still waiting (503); the tasks finish. */
void bt_serve_task_stop(struct bt_serve *srv);

/* serve-page.c: a file of the page (path "/", "/app.js", ...), 404 when
 * there is none; sent with a strict Content-Security-Policy. */
enum MHD_Result bt_serve_page(struct bt_serve_req *r, const char *path);

/* serve-stream.c: recover the running runs whose baton process died, as every
 * front end does (bt_service_recover): they end
 * interrupted with what they stored. Called on the beat and before a
 * request about a conversation, so neither a stream nor a busy check
 * waits on a dead worker. 1 if any run was recovered. */
int bt_serve_recover(struct bt_serve *srv);

/* serve-sse.c: event streams. */
enum MHD_Result bt_serve_sse_conversation(struct bt_serve_req *r);
enum MHD_Result bt_serve_sse_all(struct bt_serve_req *r);
/* serve-stream.c: the streams woken from outside their reader. */
/* Wake the streams of conv (NULL: every stream) to read the store. */
void bt_serve_sse_wake(struct bt_serve *srv, const char *conv);
/* The same for lines that came on conv's tap, each kept with its rowid:
 * a stream of every conversation takes them from the taps without a read
 * of the store (serve-sse.c fill_all). */
void bt_serve_sse_wake_kept(struct bt_serve *srv, const char *conv);
/* 1 if a stream follows conv's events: one of conv, or of every
 * conversation (/v1/events). */
int bt_serve_sse_follows(const struct bt_serve *srv, const char *conv);
/* The beat: a ping to every stream when due, a probe while srv->probes
 * says so, and bt_serve_recover. */
void bt_serve_sse_beat(struct bt_serve *srv, int ping);
/* An empty comment to every stream now and on the next beats: a stream
 * waits suspended, unpolled, so a client that went away is noticed only
 * when something is written to it (and only the second write after its
 * close fails). Called when the connections are at their most, so the
 * slots of closed streams come free without waiting for a ping. */
void bt_serve_sse_probe(struct bt_serve *srv);
/* Stopping: end every stream. */
void bt_serve_sse_close_all(struct bt_serve *srv);

#endif
