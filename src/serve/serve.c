/* SPDX-License-Identifier: MIT */
/*
 * serve: the loop of baton serve (serve.h). libmicrohttpd runs in its
 * external epoll mode: its epoll fd is watched by one uv_poll_t and MHD_run
 * is called when it is readable or MHD's own timeout is due, so nothing of
 * the server runs on another thread but the operations that may block
 * (rm, handoff: serve-task.c), each on a store handle of its own. Store changes are seen through
 * inotify on $BATON_HOME (a descriptor of serve's own, on_watch): a commit writes the store's
 * -wal file, the change is read on the loop's next turn (one read however
 * many notices came), and only the streams of conversations that got
 * events are woken. A read every BT_SERVE_CHECK_MS covers a file system
 * without notices.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "serve.h"
#include "service-conv.h"
#include "store-follow.h"
#include "store.h"

static void on_mhd_poll(uv_poll_t *p, int status, int events)
{
    (void)status, (void)events;
    bt_serve_service(p->data);
}

/* Let MHD do what it can now, then wait for its next timeout. A timeout
 * of 0 means it has more to do at once (streams woken together are sent
 * over several runs): run it again now, not in 1 ms steps, but a bounded
 * number of times so the loop's other handles are not starved. */

/* A running run that a stream follows is followed through its owner's
 * channel (serve-tap.c) from now on; once the owner answered, each of its
 * commits comes there and wakes the streams, so this read does not wake
 * them again (two wakes per commit, the first before the channel's line,
 * sent every frame through the store and held the line back), unless
 * the channel said nothing since the last read while the store got
 * events: then it is not bringing them. */
static int on_changed(void *data, const char *conv, const char *run, int running, int64_t rowid)
{
    struct bt_serve *srv = data;
    if (running && bt_serve_sse_follows(srv, conv))
        bt_serve_tap_want(srv, conv, run);
    if (!running || !bt_serve_tap_heard(srv, run))
        bt_serve_sse_wake(srv, conv);
    if (rowid > srv->rowid)
        srv->rowid = rowid;
    return 0;
}

/* Wake the streams of the conversations that got events since the last
 * read; force: even when SQLite says nothing was committed. */
static void scan(struct bt_serve *srv, int force)
{
    int64_t version = 0, last = 0;
    if (bt_store_data_version(srv->store, &version) != 0)
        return;
    if (!force && version == srv->data_version)
        return;
    srv->data_version = version;
    if (bt_store_event_last(srv->store, &last) != 0)
        return;
    if (last < srv->rowid) { /* the newest events were deleted: rowids come again */
        srv->rowid = last;
        bt_serve_sse_wake(srv, NULL);
    }
    bt_store_event_changed(srv->store, srv->rowid, on_changed, srv);
    bt_serve_service(srv);
}

/* A notice can come between a commit's write to the -wal file and the
 * update of the wal-index (shared memory, no notice) that makes it
 * visible; a read then misses that commit and no later notice comes. So
 * every notice is followed by reads 2, 4 and 8 ms later (a read that
 * finds nothing new costs one PRAGMA data_version). */
static void on_watch(uv_poll_t *p, int status, int events);

static void on_scan(uv_timer_t *t)
{
    struct bt_serve *srv = t->data;
    if (srv->watch_paused) {
        /* on again before the read: what a commit after it writes wakes us */
        srv->watch_paused = 0;
        uv_poll_start(&srv->watch, UV_READABLE, on_watch);
    }
    scan(srv, 0);
    if (srv->rescans < BT_SERVE_RESCANS && !srv->taps)
        uv_timer_start(&srv->scan, on_scan, 2u << srv->rescans++, 0);
}

/* The read follows a notice on the loop's next turn. While runs are
 * followed through their channels, a commit of theirs wakes the streams
 * by its line there, so the notices are read together, one read at most
 * every BT_SERVE_NOTICE_MS: it finds what no channel says (a run whose
 * owner has none, a run whose owner was not followed yet), and reading
 * at each of them, before the line came, held the line back and took
 * serve's CPU (serve-bench light: about 15% of it). */
static void on_watch(uv_poll_t *p, int status, int events)
{
    (void)status, (void)events;
    struct bt_serve *srv = p->data;
    char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    while (read(srv->watch_fd, buf, sizeof buf) > 0)
        ; /* which file does not matter: the read of the store says what changed */
    if (srv->taps) {
        /* not polled until that read: each write of a commit to the -wal
         * file is a notice (four an event), and each woke serve, which on
         * a busy machine took the committing worker's core in the middle
         * of its commit, the store's write lock held. The notices wait in
         * the inotify queue, the same ones merged, while nobody polls.
         * (Stopping the watch itself is no way: inotify_rm_watch waits for
         * an RCU grace period, about 1 ms here.) */
        srv->watch_paused = 1;
        uv_poll_stop(&srv->watch);
        if (!uv_is_active((uv_handle_t *)&srv->scan))
            uv_timer_start(&srv->scan, on_scan, BT_SERVE_NOTICE_MS, 0);
    } else if (!uv_is_active((uv_handle_t *)&srv->scan) || srv->rescans) {
        srv->rescans = 0;
        uv_timer_start(&srv->scan, on_scan, 0, 0);
    }
}

static void on_beat(uv_timer_t *t)
{
    struct bt_serve *srv = t->data;
    int64_t now = bt_mono_ms();
    int ping = now >= srv->next_ping_ms;
    if (ping)
        srv->next_ping_ms = now + (int64_t)srv->ping_ms;
    scan(srv, 1);
    bt_serve_sse_beat(srv, ping);
    bt_serve_conn_beat(srv);
    bt_serve_service(srv);
}

static void on_signal(uv_signal_t *sig, int signum)
{
    (void)signum;
    struct bt_serve *srv = sig->data;
    srv->stopping = 1;
    uv_stop(&srv->loop);
}

/* libmicrohttpd's messages, but not that a client went away (every event
 * stream ends so when its page closes; a connection shut down for its
 * header deadline or its slot reads as one), nor its answers to bad
 * requests (the client's business, not the operator's), nor those of its
 * start: a failed start is said once, by baton ("Failed to bind to port 0"
 * named the port given in MHD's own argument, not the one asked for). */
static BT_PRINTF(2, 0) void log_mhd(void *cls, const char *fmt, va_list ap)
{
    struct bt_serve *srv = cls;
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (!srv->mhd || strstr(msg, "no longer available") || strstr(msg, "reset by") ||
        strstr(msg, "Broken pipe") || strstr(msg, "connection closure") ||
        strstr(msg, "incomplete request") || strstr(msg, "HTTP response code is"))
        return;
    fprintf(stderr, "baton serve: %s", msg);
}

/* Resolve o->host; refuse an address that is not loopback unless asked. */
static int resolve(const struct bt_serve_opts *o, struct sockaddr_storage *sa, char **why)
{
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE}, *res = NULL;
    char port[16];
    snprintf(port, sizeof port, "%d", o->port);
    int rc = getaddrinfo(o->host, port, &hints, &res);
    if (rc != 0) {
        *why = bt_xasprintf("cannot listen on '%s': %s", o->host, gai_strerror(rc));
        return -1;
    }
    memcpy(sa, res->ai_addr, res->ai_addrlen);
    freeaddrinfo(res);
    int loopback = sa->ss_family == AF_INET
                       ? (ntohl(((struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127
                       : IN6_IS_ADDR_LOOPBACK(&((struct sockaddr_in6 *)sa)->sin6_addr);
    if (!loopback && !o->allow_remote) {
        *why = bt_xasprintf("'%s' is not a loopback address: anyone who reaches it could "
                            "drive your coders with the token; add --allow-remote to mean it",
                            o->host);
        return -1;
    }
    return 0;
}

static int start_daemon(struct bt_serve *srv, const struct bt_serve_opts *o, char **why)
{
    struct sockaddr_storage sa;
    if (resolve(o, &sa, why) != 0)
        return -1;
    char *reason = NULL;
    if (bt_serve_conn_listen(srv, &sa, &reason) != 0) {
        *why = bt_xasprintf("cannot listen on %s:%d: %s", o->host, o->port, reason);
        free(reason);
        return -1;
    }
    /* serve accepts (serve-conn.c) and hands MHD each connection; MHD's
     * limit is never what refuses one. Its buffer per connection holds a
     * request target up to BT_SERVE_URI_MAX and its headers, so that a
     * longer target reaches us and gets our JSON 414 (MHD answers one
     * that does not fit with its own page) */
    unsigned flags = MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG |
                     MHD_USE_NO_LISTEN_SOCKET | (sa.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0);
    srv->mhd = MHD_start_daemon(
        flags, 0, NULL, NULL, bt_serve_http_access, srv, MHD_OPTION_EXTERNAL_LOGGER, log_mhd, srv,
        MHD_OPTION_URI_LOG_CALLBACK, bt_serve_http_uri, srv, MHD_OPTION_NOTIFY_COMPLETED,
        bt_serve_http_completed, srv, MHD_OPTION_NOTIFY_CONNECTION, bt_serve_conn_notify, srv,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned)(BT_SERVE_CONNECTIONS + BT_SERVE_SPARE),
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)BT_SERVE_MEMORY, MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned)BT_SERVE_IDLE_S, MHD_OPTION_END);
    if (!srv->mhd) {
        *why = bt_xasprintf("cannot serve on %s:%d: %s", o->host, o->port,
                            errno ? strerror(errno) : "libmicrohttpd refused");
        return -1;
    }
    const union MHD_DaemonInfo *ep = MHD_get_daemon_info(srv->mhd, MHD_DAEMON_INFO_EPOLL_FD);
    uv_poll_init(&srv->loop, &srv->mhd_poll, ep->epoll_fd);
    srv->mhd_poll.data = srv;
    uv_poll_start(&srv->mhd_poll, UV_READABLE, on_mhd_poll);
    return 0;
}

/* inotify of its own, not uv_fs_event_t: a watch that can wait unpolled
 * (on_watch). What libuv's watch of a directory asks for. */
static void start_watch(struct bt_serve *srv)
{
    const uint32_t mask = IN_ATTRIB | IN_CREATE | IN_MODIFY | IN_DELETE | IN_DELETE_SELF |
                          IN_MOVE_SELF | IN_MOVED_FROM | IN_MOVED_TO;
    srv->watch_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    srv->watching = srv->watch_fd >= 0 &&
                    inotify_add_watch(srv->watch_fd, bt_store_home(srv->store), mask) >= 0 &&
                    uv_poll_init(&srv->loop, &srv->watch, srv->watch_fd) == 0;
    if (srv->watching) {
        srv->watch.data = srv;
        uv_poll_start(&srv->watch, UV_READABLE, on_watch);
    }
    bt_serve_tap_watch(srv);
    if (!srv->watching)
        fprintf(stderr, "baton serve: cannot watch %s for changes; streams read it every %d ms\n",
                bt_store_home(srv->store), BT_SERVE_CHECK_MS);
}

static void init_loop(struct bt_serve *srv)
{
    uv_loop_init(&srv->loop);
    uv_timer_init(&srv->loop, &srv->mhd_timer);
    uv_timer_init(&srv->loop, &srv->scan);
    uv_timer_init(&srv->loop, &srv->beat);
    uv_check_init(&srv->loop, &srv->soon);
    srv->soon.data = srv;
    uv_signal_init(&srv->loop, &srv->sigint);
    uv_signal_init(&srv->loop, &srv->sigterm);
    srv->mhd_timer.data = srv->scan.data = srv->beat.data = srv;
    srv->sigint.data = srv->sigterm.data = srv;
    uv_signal_start(&srv->sigint, on_signal, SIGINT);
    uv_signal_start(&srv->sigterm, on_signal, SIGTERM);
}

static void close_handle(uv_handle_t *h, void *arg)
{
    (void)arg;
    if (!uv_is_closing(h))
        uv_close(h, NULL);
}

static void announce(const struct bt_serve *srv)
{
    int v6 = strchr(srv->host, ':') != NULL;
    printf("http://%s%s%s:%d/#token=%s\n", v6 ? "[" : "", srv->host, v6 ? "]" : "", srv->port,
           srv->token);
    fflush(stdout);
    fprintf(stderr,
            "baton serve: listening on %s%s%s:%d; open the address above (it holds the token "
            "of %s/serve.token). Ctrl-C stops the server; turns go on in their workers.\n",
            v6 ? "[" : "", srv->host, v6 ? "]" : "", srv->port, bt_store_home(srv->store));
}

static void stop(struct bt_serve *srv)
{
    srv->stopping = 1;
    bt_serve_conn_close(srv);
    bt_serve_sse_close_all(srv);
    bt_serve_tap_close_all(srv);
    bt_serve_api_stop(srv);
    bt_serve_task_stop(srv);
    MHD_run(srv->mhd);
    uv_poll_stop(&srv->mhd_poll);
    MHD_stop_daemon(srv->mhd);
    uv_walk(&srv->loop, close_handle, NULL);
    uv_run(&srv->loop, UV_RUN_DEFAULT);
    uv_loop_close(&srv->loop);
    if (srv->watch_fd >= 0)
        close(srv->watch_fd);
}

enum bt_service_result bt_serve_run(const struct bt_serve_opts *o)
{
    struct bt_serve srv = {.ping_ms = o->ping_ms ? o->ping_ms : BT_SERVE_PING_MS,
                           .baton = o->baton,
                           .listen_fd = -1,
                           .watch_fd = -1};
    char *why = NULL;
    struct bt_service_outcome opened = {0};
    enum bt_service_result rc = BT_SERVICE_OK;
    if (bt_service_open(&srv.store, bt_serve_say, NULL, &opened) != 0) {
        fprintf(stderr, "baton: %s\n", opened.message);
        free(opened.message);
        return opened.result;
    }
    snprintf(srv.host, sizeof srv.host, "%s", o->host);
    if (bt_serve_token(bt_store_home(srv.store), srv.token, &why) != 0) {
        fprintf(stderr, "baton: %s\n", why);
        rc = BT_SERVICE_FAILED;
        goto out;
    }
    signal(SIGPIPE, SIG_IGN);
    init_loop(&srv);
    if (start_daemon(&srv, o, &why) != 0) {
        fprintf(stderr, "baton: %s\n", why);
        rc = o->allow_remote || strstr(why, "--allow-remote") == NULL ? BT_SERVICE_FAILED
                                                                      : BT_SERVICE_USAGE;
        bt_serve_conn_close(&srv);
        uv_walk(&srv.loop, close_handle, NULL);
        uv_run(&srv.loop, UV_RUN_DEFAULT);
        uv_loop_close(&srv.loop);
        goto out;
    }
    start_watch(&srv);
    bt_store_data_version(srv.store, &srv.data_version);
    bt_store_event_last(srv.store, &srv.rowid);
    srv.next_ping_ms = bt_mono_ms() + (int64_t)srv.ping_ms;
    uint64_t beat = srv.ping_ms < BT_SERVE_CHECK_MS ? srv.ping_ms : BT_SERVE_CHECK_MS;
    uv_timer_start(&srv.beat, on_beat, beat, beat);
    announce(&srv);
    bt_serve_service(&srv);
    uv_run(&srv.loop, UV_RUN_DEFAULT);
    stop(&srv);
out:
    free(why);
    bt_store_close(srv.store);
    return rc;
}
