/* SPDX-License-Identifier: MIT */
/*
 * serve-conn: the connections of baton serve, from accept to close.
 *
 * serve listens and accepts itself and hands each socket to libmicrohttpd
 * (MHD_add_connection), because MHD 0.9.75 in its epoll mode takes its
 * listen socket out of the epoll set once it holds its connection limit:
 * every later client then waits in the kernel's listen backlog, unanswered,
 * for as long as the clients holding the slots please, and a client that
 * sends a byte of its headers now and then keeps its slot for ever (MHD's
 * connection timeout counts idle time only). So:
 *
 *  - a connection has BT_SERVE_HEADER_S to send a request's headers and
 *    its body, from its accept or from the end of its previous request;
 *    past that it is shut down, however many bytes it trickled (a body
 *    sent a byte at a time held its slot for ever, and 256 of them, with
 *    no token, locked every client out);
 *  - at BT_SERVE_CONNECTIONS open connections, a new one takes the slot of
 *    the connection that has waited longest for its headers (which is shut
 *    down); when every connection is past its headers (streams, requests
 *    being answered), the new one is still taken, up to BT_SERVE_SPARE more,
 *    and answered 503 once its headers are in (serve-http.c); beyond those
 *    it is answered 503 at once and closed.
 *
 * A connection is shut down (shutdown(2), not close(2)): MHD still owns the
 * descriptor, reads its end at once and closes it as a client that went
 * away, so no descriptor is closed under MHD nor reused while it holds it.
 */
#define _GNU_SOURCE /* accept4: the socket non-blocking and close-on-exec in one call */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "serve.h"

/* One TCP connection MHD holds (its socket context). */
struct bt_serve_conn {
    struct bt_serve_conn *prev, *next;
    int fd;            /* the socket, MHD's */
    int64_t header_ms; /* monotonic ms since its headers are awaited, 0: not awaited */
    int shut;          /* shut down: MHD closes it on its next run */
};

static struct bt_serve_conn *conn_of(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info ? info->socket_context : NULL;
}

void bt_serve_conn_notify(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    struct bt_serve *srv = cls;
    struct bt_serve_conn *conn = *socket_context;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *fd =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        conn = bt_xcalloc(1, sizeof *conn);
        conn->fd = fd ? fd->connect_fd : -1;
        conn->header_ms = bt_mono_ms();
        conn->next = srv->conns;
        if (srv->conns)
            srv->conns->prev = conn;
        srv->conns = conn;
        srv->nconns++;
        *socket_context = conn;
        return;
    }
    if (!conn)
        return;
    if (conn->prev)
        conn->prev->next = conn->next;
    else
        srv->conns = conn->next;
    if (conn->next)
        conn->next->prev = conn->prev;
    srv->nconns--;
    srv->nshut -= conn->shut;
    free(conn);
    *socket_context = NULL;
}

void bt_serve_conn_request_in(struct MHD_Connection *c)
{
    struct bt_serve_conn *conn = conn_of(c);
    if (conn)
        conn->header_ms = 0;
}

void bt_serve_conn_request_done(struct MHD_Connection *c)
{
    struct bt_serve_conn *conn = conn_of(c);
    if (conn)
        conn->header_ms = bt_mono_ms(); /* a keep-alive connection: the next request's */
}

int bt_serve_conn_over(const struct bt_serve *srv)
{
    return srv->nconns - srv->nshut > BT_SERVE_CONNECTIONS;
}

static void shut(struct bt_serve *srv, struct bt_serve_conn *conn)
{
    if (conn->shut || conn->fd < 0)
        return;
    shutdown(conn->fd, SHUT_RDWR);
    conn->shut = 1;
    srv->nshut++;
}

void bt_serve_conn_beat(struct bt_serve *srv)
{
    int64_t deadline = bt_mono_ms() - (int64_t)BT_SERVE_HEADER_S * 1000;
    for (struct bt_serve_conn *c = srv->conns; c; c = c->next)
        if (c->header_ms && c->header_ms <= deadline)
            shut(srv, c);
}

/* The connection that has waited longest for its headers, or NULL. */
static struct bt_serve_conn *oldest_waiting(struct bt_serve *srv)
{
    struct bt_serve_conn *best = NULL;
    for (struct bt_serve_conn *c = srv->conns; c; c = c->next)
        if (c->header_ms && !c->shut && (!best || c->header_ms < best->header_ms))
            best = c;
    return best;
}

/* Over every limit: a 503 now, without reading the request, and close.
 * Best effort: the socket is new, its buffer takes the few bytes; what the
 * client sent meanwhile is drained so the close sends a FIN, not a reset
 * that could discard the reply before the client reads it. */
static void refuse_now(int fd)
{
    struct bt_buf body = BT_BUF_INIT, reply = BT_BUF_INIT;
    bt_serve_error_json(&body, "unavailable",
                        "the server has its most connections open; try again");
    bt_buf_addf(&reply,
                "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
                "Cache-Control: no-store\r\nConnection: close\r\nContent-Length: %zu\r\n\r\n",
                body.len);
    bt_buf_add(&reply, body.data, body.len);
    ssize_t w = send(fd, reply.data, reply.len, MSG_NOSIGNAL | MSG_DONTWAIT);
    (void)w;
    shutdown(fd, SHUT_WR);
    char sink[4096];
    while (recv(fd, sink, sizeof sink, MSG_DONTWAIT) > 0)
        ;
    close(fd);
    bt_buf_release(&body);
    bt_buf_release(&reply);
}

static void take(struct bt_serve *srv, int fd, const struct sockaddr *sa, socklen_t len)
{
    if (srv->nconns - srv->nshut >= BT_SERVE_CONNECTIONS) {
        struct bt_serve_conn *old = oldest_waiting(srv);
        if (old) {
            shut(srv, old);
            MHD_run(srv->mhd); /* closes it now: a burst of accepts takes no spare */
        } else
            bt_serve_sse_probe(srv); /* closed streams may hold slots */
    }
    if (srv->stopping || srv->nconns >= BT_SERVE_CONNECTIONS + BT_SERVE_SPARE) {
        refuse_now(fd);
        return;
    }
    if (MHD_add_connection(srv->mhd, fd, sa, len) != MHD_YES) /* it closed fd */
        fprintf(stderr, "baton serve: a connection was dropped: %s\n", strerror(errno));
}

static void on_listen(uv_poll_t *p, int status, int events)
{
    (void)status, (void)events;
    struct bt_serve *srv = p->data;
    for (;;) {
        struct sockaddr_storage sa;
        socklen_t len = sizeof sa;
        int fd =
            accept4(srv->listen_fd, (struct sockaddr *)&sa, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK) /* EMFILE, ENOBUFS: later */
                fprintf(stderr, "baton serve: cannot accept a connection: %s\n", strerror(errno));
            break;
        }
        take(srv, fd, (struct sockaddr *)&sa, len);
    }
    bt_serve_service(srv);
}

int bt_serve_conn_listen(struct bt_serve *srv, const struct sockaddr_storage *sa, char **why)
{
    socklen_t len =
        sa->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
    int one = 1;
    int fd = socket(sa->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    /* SO_REUSEADDR alone: a restart binds past TIME_WAIT, while a second
     * server on a port in use fails (with SO_REUSEPORT the kernel would
     * split connections between the two) */
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        (sa->ss_family == AF_INET6 &&
         setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one) != 0) ||
        bind(fd, (const struct sockaddr *)sa, len) != 0 || listen(fd, SOMAXCONN) != 0) {
        *why = bt_xasprintf("%s", strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    struct sockaddr_storage got = *sa; /* the port asked for, if the kernel cannot say */
    len = sizeof got;
    getsockname(fd, (struct sockaddr *)&got, &len);
    srv->port = ntohs(got.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&got)->sin6_port
                                                : ((struct sockaddr_in *)&got)->sin_port);
    srv->listen_fd = fd;
    uv_poll_init(&srv->loop, &srv->listen_poll, fd);
    srv->listen_poll.data = srv;
    uv_poll_start(&srv->listen_poll, UV_READABLE, on_listen);
    return 0;
}

void bt_serve_conn_close(struct bt_serve *srv)
{
    if (srv->listen_fd >= 0) {
        uv_poll_stop(&srv->listen_poll);
        close(srv->listen_fd);
        srv->listen_fd = -1;
    }
}

static void on_mhd_timer(uv_timer_t *t)
{
    bt_serve_service(t->data);
}

static void on_soon(uv_check_t *c)
{
    uv_check_stop(c);
    bt_serve_service(c->data);
}

void bt_serve_service_soon(struct bt_serve *srv)
{
    uv_check_start(&srv->soon, on_soon);
}

void bt_serve_service(struct bt_serve *srv)
{
    MHD_UNSIGNED_LONG_LONG ms = 0;
    int more = 0;
    for (int i = 0; i < BT_SERVE_RUNS_AT_ONCE; i++) {
        MHD_run(srv->mhd);
        more = MHD_get_timeout(srv->mhd, &ms) == MHD_YES;
        if (!more || ms)
            break;
    }
    if (more)
        uv_timer_start(&srv->mhd_timer, on_mhd_timer, ms ? ms : 1, 0);
    else
        uv_timer_stop(&srv->mhd_timer);
}
