/* SPDX-License-Identifier: MIT */
/*
 * channel: the run owner's Unix socket (see channel.h): the owner's
 * listener and connections on the turn's libuv loop, and the plain
 * non-blocking sockets of requesters and followers in any process.
 */
/* O_PATH (Linux): the socket directory held open for /proc/self/fd/N */
#define _GNU_SOURCE
#include "channel.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "id.h"
#include "json.h"
#include "util.h"

#define REQUEST_MAX 4096 /* a request line's bound, in bytes */
#define LINE_WAKE "{\"op\":\"wake\"}\n"
#define SOCK_SUFFIX ".sock" /* <run>.sock */
#define LINE_FOLLOW "{\"op\":\"follow\"}\n"
#define LINE_FOLLOW_ROWIDS "{\"op\":\"follow\",\"rowids\":true}\n"
/* before an event line whose rowid is not the one after the line before
 * it, to a follower that asked for rowids; never the start of an event
 * line (bt_event_to_json begins with "type") */
#define LINE_ROWID_PREFIX "{\"op\":\"rowid\",\"from\":"
/* the answer names the run, so that a follower knows whose lines come
 * (a socket path can lead to another run's owner: a link put there) */
#define LINE_FOLLOWING_FMT "{\"op\":\"following\",\"run\":\"%s\"}\n"

/* --- addresses ------------------------------------------------------------ */

/* Where run's socket is: its directory open (O_PATH) and the address to
 * bind or connect to. */
struct addr {
    int dirfd;                 /* $BATON_HOME/channels */
    char name[BT_ID_SIZE + 8]; /* <run>.sock */
    struct sockaddr_un sa;
    socklen_t len;
};

/* The directory, made 0700 when create (and tightened if it is looser). */
static int open_dir(const char *home, int create, int *dirfd)
{
    char *path = bt_xasprintf("%s/%s", home, BT_CHANNEL_DIR);
    int rc = 0;
    if (create && mkdir(path, 0700) != 0 && errno != EEXIST)
        rc = -errno;
    struct stat st;
    if (rc == 0 && create && lstat(path, &st) == 0 && S_ISDIR(st.st_mode) &&
        (st.st_mode & 077) != 0 && chmod(path, 0700) != 0)
        rc = -errno;
    if (rc == 0) {
        *dirfd = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (*dirfd < 0)
            rc = -errno;
    }
    free(path);
    return rc;
}

static void addr_release(struct addr *a)
{
    if (a->dirfd >= 0)
        close(a->dirfd);
    a->dirfd = -1;
}

/* run's address. The whole path when it fits in sun_path; else through the
 * directory's descriptor, /proc/self/fd/N/<run>.sock, which is short
 * whatever $BATON_HOME is (the kernel follows the descriptor's link to the
 * directory, so bind and connect reach the same file). */
static int make_addr(const char *home, const char *run, int create, struct addr *a)
{
    memset(a, 0, sizeof *a);
    a->dirfd = -1;
    if (!home || !run || !bt_id_valid(run))
        return -EINVAL;
    snprintf(a->name, sizeof a->name, "%s" SOCK_SUFFIX, run);
    int rc = open_dir(home, create, &a->dirfd);
    if (rc)
        return rc;
    a->sa.sun_family = AF_UNIX;
    int n =
        snprintf(a->sa.sun_path, sizeof a->sa.sun_path, "%s/%s/%s", home, BT_CHANNEL_DIR, a->name);
    if (n < 0 || (size_t)n >= sizeof a->sa.sun_path)
        n = snprintf(a->sa.sun_path, sizeof a->sa.sun_path, "/proc/self/fd/%d/%s", a->dirfd,
                     a->name);
    a->len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + (size_t)n + 1);
    return 0;
}

/* A connected non-blocking socket to a, or a negative errno. */
static int connect_addr(const struct addr *a, int *fd)
{
    *fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (*fd < 0)
        return -errno;
    if (connect(*fd, (const struct sockaddr *)&a->sa, a->len) == 0)
        return 0;
    int rc = -errno;
    close(*fd);
    *fd = -1;
    return rc;
}

/* 1 if the socket at a is stale: it exists and nobody accepts on it. */
static int stale(const struct addr *a)
{
    int fd = -1, rc = connect_addr(a, &fd);
    if (fd >= 0)
        close(fd);
    return rc == -ECONNREFUSED;
}

int bt_channel_remove_stale(const char *home, const char *run)
{
    struct addr a;
    int removed = 0;
    if (make_addr(home, run, 0, &a) == 0 && stale(&a))
        removed = unlinkat(a.dirfd, a.name, 0) == 0;
    addr_release(&a);
    return removed;
}

/* --- the owner ------------------------------------------------------------ */

struct conn {
    uv_pipe_t pipe;
    struct bt_channel *ch;
    struct bt_framer framer; /* requests */
    char buf[REQUEST_MAX];   /* read buffer */
    int follower;            /* asked to follow and answered */
    int rowids;              /* and to be told the lines' rowids */
    int closing;
    struct conn *next;
};

struct bt_channel {
    uv_pipe_t listen;
    struct addr addr;
    void (*on_wake)(void *data);
    void *data;
    char run[BT_ID_SIZE];
    struct conn *conns; /* open connections */
    size_t nconns;      /* in conns */
    size_t followers;
    int handles; /* handles not yet closed: the channel goes with the last */
    int closing;
};

struct write_req {
    uv_write_t req;
    char data[]; /* what uv_try_write could not send at once */
};

static void channel_unref(struct bt_channel *ch)
{
    if (--ch->handles == 0) {
        addr_release(&ch->addr);
        free(ch);
    }
}

static void conn_closed(uv_handle_t *h)
{
    struct conn *c = h->data;
    struct bt_channel *ch = c->ch;
    bt_framer_release(&c->framer);
    free(c);
    channel_unref(ch);
}

static void conn_close(struct conn *c)
{
    if (c->closing)
        return;
    c->closing = 1;
    struct bt_channel *ch = c->ch;
    for (struct conn **p = &ch->conns; *p; p = &(*p)->next)
        if (*p == c) {
            *p = c->next;
            ch->nconns--;
            break;
        }
    if (c->follower)
        ch->followers--;
    uv_close((uv_handle_t *)&c->pipe, conn_closed);
}

static void write_done(uv_write_t *req, int status)
{
    (void)status; /* a failed write closes the connection on its read side */
    free(req);
}

/* What the followers together have not read yet, in bytes. */
static size_t backlog(const struct bt_channel *ch)
{
    size_t n = 0;
    for (const struct conn *c = ch->conns; c; c = c->next)
        n += uv_stream_get_write_queue_size((const uv_stream_t *)&c->pipe);
    return n;
}

/* Send len bytes to c without blocking: what the socket takes now, the rest
 * queued, and c cut off when its backlog would pass the bound. */
static void conn_send(struct conn *c, const char *data, size_t len)
{
    if (c->closing)
        return;
    uv_buf_t b = uv_buf_init((char *)data, (unsigned)len);
    int n = uv_try_write((uv_stream_t *)&c->pipe, &b, 1);
    if (n == (int)len)
        return;
    if (n < 0 && n != UV_EAGAIN) {
        conn_close(c);
        return;
    }
    size_t sent = n > 0 ? (size_t)n : 0;
    if (uv_stream_get_write_queue_size((uv_stream_t *)&c->pipe) + (len - sent) >
            BT_CHANNEL_BACKLOG_MAX ||
        backlog(c->ch) + (len - sent) > BT_CHANNEL_BACKLOG_TOTAL) {
        conn_close(c); /* it catches up from the store */
        return;
    }
    struct write_req *w = bt_xmalloc(sizeof *w + (len - sent));
    memcpy(w->data, data + sent, len - sent);
    b = uv_buf_init(w->data, (unsigned)(len - sent));
    if (uv_write(&w->req, (uv_stream_t *)&c->pipe, &b, 1, write_done) != 0) {
        free(w);
        conn_close(c);
    }
}

static void on_request(void *data, char *line, size_t len)
{
    struct conn *c = data;
    (void)len;
    /* cut off (a line past the bound) while the rest of its read is
     * framed: what follows counts for nothing */
    if (c->closing)
        return;
    cJSON *o = cJSON_Parse(line);
    const char *op = bt_json_str(o, "op");
    if (op && strcmp(op, "wake") == 0 && !c->ch->closing) {
        c->ch->on_wake(c->ch->data);
    } else if (op && strcmp(op, "follow") == 0 && !c->follower) {
        c->follower = 1;
        c->rowids = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "rowids"));
        c->ch->followers++;
        char answer[sizeof LINE_FOLLOWING_FMT + BT_ID_SIZE];
        int n = snprintf(answer, sizeof answer, LINE_FOLLOWING_FMT, c->ch->run);
        conn_send(c, answer, (size_t)n);
    }
    cJSON_Delete(o);
}

static void on_request_too_long(void *data, size_t dropped)
{
    (void)dropped;
    conn_close(data);
}

static const struct bt_framer_ops request_ops = {on_request, on_request_too_long};

static void conn_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *b)
{
    struct conn *c = h->data;
    (void)suggested;
    *b = uv_buf_init(c->buf, sizeof c->buf);
}

static void conn_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
    struct conn *c = s->data;
    if (n < 0) {
        conn_close(c);
        return;
    }
    if (n > 0)
        bt_framer_feed(&c->framer, b->base, (size_t)n);
}

/* All connections are taken: the oldest that is no follower (it asked
 * nothing, or sent what it had: a wake closes at once) is closed, so
 * clients that hold on do not lock followers out. None: nothing changes. */
static void make_room(struct bt_channel *ch)
{
    struct conn *idle = NULL;
    for (struct conn *c = ch->conns; c; c = c->next) /* newest first */
        if (!c->follower)
            idle = c;
    if (idle)
        conn_close(idle);
}

static void on_connection(uv_stream_t *server, int status)
{
    struct bt_channel *ch = server->data;
    if (status < 0 || ch->closing)
        return;
    struct conn *c = bt_xcalloc(1, sizeof *c);
    c->ch = ch;
    bt_framer_init(&c->framer, REQUEST_MAX, &request_ops, c);
    uv_pipe_init(server->loop, &c->pipe, 0);
    c->pipe.data = c;
    ch->handles++;
    if (ch->nconns == BT_CHANNEL_CONNS_MAX) /* room for c, or c goes */
        make_room(ch);
    c->next = ch->conns;
    ch->conns = c;
    ch->nconns++;
    /* accepted even past the bound: one left in the backlog would wake
     * the loop for ever */
    if (uv_accept(server, (uv_stream_t *)&c->pipe) != 0 || ch->nconns > BT_CHANNEL_CONNS_MAX ||
        uv_read_start((uv_stream_t *)&c->pipe, conn_alloc, conn_read) != 0)
        conn_close(c);
}

/* Bind fd to a; a stale socket there (its owner died) is replaced, a live
 * one refused (-EEXIST). */
static int bind_addr(int fd, const struct addr *a)
{
    if (bind(fd, (const struct sockaddr *)&a->sa, a->len) == 0)
        return 0;
    if (errno != EADDRINUSE)
        return -errno;
    if (!stale(a))
        return -EEXIST;
    if (unlinkat(a->dirfd, a->name, 0) != 0 && errno != ENOENT)
        return -errno;
    return bind(fd, (const struct sockaddr *)&a->sa, a->len) == 0 ? 0 : -errno;
}

/* A listening socket at a, 0600 (the directory, 0700, keeps others out
 * between bind and chmod). */
static int listen_at(const struct addr *a, int *out)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -errno;
    int rc = bind_addr(fd, a), bound = rc == 0;
    if (rc == 0 && fchmodat(a->dirfd, a->name, 0600, 0) != 0)
        rc = -errno;
    if (rc == 0 && listen(fd, SOMAXCONN) != 0)
        rc = -errno;
    if (rc) {
        if (bound) /* ours: anything else at the name is left alone */
            unlinkat(a->dirfd, a->name, 0);
        close(fd);
        return rc;
    }
    *out = fd;
    return 0;
}

static void listen_closed(uv_handle_t *h)
{
    channel_unref(h->data);
}

int bt_channel_open(uv_loop_t *loop, const char *home, const char *run, void (*on_wake)(void *data),
                    void *data, struct bt_channel **out)
{
    *out = NULL;
    struct bt_channel *ch = bt_xcalloc(1, sizeof *ch);
    int fd = -1, rc = make_addr(home, run, 1, &ch->addr);
    if (rc == 0)
        rc = listen_at(&ch->addr, &fd);
    if (rc) {
        addr_release(&ch->addr);
        free(ch);
        return rc;
    }
    ch->on_wake = on_wake;
    ch->data = data;
    snprintf(ch->run, sizeof ch->run, "%s", run);
    uv_pipe_init(loop, &ch->listen, 0);
    ch->listen.data = ch;
    ch->handles = 1;
    rc = uv_pipe_open(&ch->listen, fd);
    if (rc)
        close(fd); /* not the handle's */
    if (rc == 0)
        rc = uv_listen((uv_stream_t *)&ch->listen, SOMAXCONN, on_connection);
    if (rc) {
        bt_channel_close(ch); /* freed once the loop ran the close */
        return rc;
    }
    *out = ch;
    return 0;
}

/* lines with a rowid line before the first and before each that does not
 * follow the one before it by one, into out; a line past the n rowids
 * has none (0) */
static void with_rowids(const char *lines, size_t len, const int64_t *rowids, size_t n,
                        struct bt_buf *out)
{
    int64_t prev = 0;
    size_t i = 0;
    for (size_t off = 0, k; off < len; off += k, i++) {
        const char *nl = memchr(lines + off, '\n', len - off);
        k = nl ? (size_t)(nl - lines - off) + 1 : len - off;
        int64_t rowid = i < n ? rowids[i] : 0;
        int64_t expected = prev && prev < INT64_MAX ? prev + 1 : 0;
        if (i == 0 || rowid != expected)
            bt_buf_addf(out, LINE_ROWID_PREFIX "%lld}\n", (long long)rowid);
        bt_buf_add(out, lines + off, k);
        prev = rowid;
    }
}

void bt_channel_publish(struct bt_channel *ch, const char *lines, size_t len, const int64_t *rowids,
                        size_t nrowids)
{
    if (!ch || ch->closing || len == 0)
        return;
    struct bt_buf annotated = BT_BUF_INIT;
    for (struct conn *c = ch->conns, *next; c; c = next) {
        next = c->next; /* conn_send may cut c off */
        if (!c->follower)
            continue;
        if (!c->rowids || !rowids) {
            conn_send(c, lines, len);
            continue;
        }
        if (!annotated.len)
            with_rowids(lines, len, rowids, nrowids, &annotated);
        conn_send(c, annotated.data, annotated.len);
    }
    bt_buf_release(&annotated);
}

size_t bt_channel_followers(const struct bt_channel *ch)
{
    return ch ? ch->followers : 0;
}

void bt_channel_close(struct bt_channel *ch)
{
    if (!ch || ch->closing)
        return;
    ch->closing = 1;
    unlinkat(ch->addr.dirfd, ch->addr.name, 0); /* no new connection finds it */
    while (ch->conns)
        conn_close(ch->conns);
    uv_close((uv_handle_t *)&ch->listen, listen_closed);
}

int bt_channel_run_of(const char *name, char run[BT_ID_SIZE])
{
    size_t n = name ? strlen(name) : 0, k = sizeof SOCK_SUFFIX - 1;
    if (n <= k || n - k >= BT_ID_SIZE || strcmp(name + n - k, SOCK_SUFFIX) != 0)
        return -EINVAL;
    memcpy(run, name, n - k);
    run[n - k] = '\0';
    return bt_id_valid(run) ? 0 : -EINVAL;
}

int bt_channel_dir_make(const char *home, char **path)
{
    int fd = -1;
    int rc = open_dir(home, 1, &fd);
    if (fd >= 0)
        close(fd);
    *path = rc == 0 ? bt_xasprintf("%s/%s", home, BT_CHANNEL_DIR) : NULL;
    return rc;
}

/* --- requesters and followers --------------------------------------------- */

static int connect_run(const char *home, const char *run, int *fd)
{
    struct addr a;
    int rc = make_addr(home, run, 0, &a);
    if (rc == 0)
        rc = connect_addr(&a, fd);
    addr_release(&a);
    return rc;
}

/* Send a whole short line on a fresh connection: it fits the socket's
 * buffer, so a non-blocking send takes it at once or fails. */
static int send_line(int fd, const char *line)
{
    size_t len = strlen(line);
    ssize_t n = send(fd, line, len, MSG_NOSIGNAL);
    return n == (ssize_t)len ? 0 : n < 0 ? -errno : -EAGAIN;
}

int bt_channel_wake(const char *home, const char *run)
{
    int fd = -1, rc = connect_run(home, run, &fd);
    if (rc)
        return rc;
    rc = send_line(fd, LINE_WAKE);
    close(fd);
    return rc;
}

/* The line's rowid taken, the next one's counted. */
static void pass_line(struct bt_channel_conn *c, const char *line, size_t len)
{
    c->on_line(c->data, line, len);
    if (c->rowid)
        c->rowid = c->rowid < INT64_MAX ? c->rowid + 1 : 0;
}

static void follower_line(void *data, char *line, size_t len)
{
    struct bt_channel_conn *c = data;
    size_t k = sizeof LINE_ROWID_PREFIX - 1;
    if (c->acked && c->rowids && len > k && memcmp(line, LINE_ROWID_PREFIX, k) == 0) {
        char *end;
        long long v = strtoll(line + k, &end, 10);
        c->rowid = *end == '}' && v > 0 && v < INT64_MAX ? v : 0; /* else not known */
        return;
    }
    if (c->acked) {
        pass_line(c, line, len);
        return;
    }
    cJSON *o = cJSON_Parse(line);
    const char *op = bt_json_str(o, "op"), *run = bt_json_str(o, "run");
    c->acked = op && strcmp(op, "following") == 0 && run && strcmp(run, c->run) == 0;
    c->refused = !c->acked;
    cJSON_Delete(o);
}

/* An event line over the framer's bound: the store has it, and the
 * follower hears of it as an empty line. */
static void follower_too_long(void *data, size_t dropped)
{
    (void)dropped;
    struct bt_channel_conn *c = data;
    if (c->acked)
        pass_line(c, "", 0);
}

static const struct bt_framer_ops follower_ops = {follower_line, follower_too_long};

int bt_channel_follow_start(const char *home, const char *run, unsigned flags,
                            struct bt_channel_conn *c,
                            void (*on_line)(void *data, const char *line, size_t len), void *data)
{
    memset(c, 0, sizeof *c);
    c->fd = -1;
    c->rowids = (flags & BT_CHANNEL_ROWIDS) != 0;
    c->on_line = on_line;
    c->data = data;
    snprintf(c->run, sizeof c->run, "%s", run);
    bt_framer_init(&c->framer, 0, &follower_ops, c);
    int rc = connect_run(home, run, &c->fd);
    if (rc == 0)
        rc = send_line(c->fd, c->rowids ? LINE_FOLLOW_ROWIDS : LINE_FOLLOW);
    if (rc)
        bt_channel_conn_close(c);
    return rc;
}

int bt_channel_follow(const char *home, const char *run, struct bt_channel_conn *c,
                      void (*on_line)(void *data, const char *line, size_t len), void *data)
{
    int rc = bt_channel_follow_start(home, run, 0, c, on_line, data);
    /* the answer comes first: lines read with it are events already */
    for (int64_t until = bt_mono_ms() + BT_CHANNEL_ACK_MS; rc == 0 && !c->acked;) {
        int64_t left = until - bt_mono_ms();
        if (left <= 0) {
            rc = -ETIMEDOUT;
            break;
        }
        int ready = bt_channel_conn_wait(c, (int)left);
        if (ready < 0 && ready != -EINTR)
            rc = ready;
        else if (ready > 0)
            rc = bt_channel_conn_read(c);
    }
    if (rc)
        bt_channel_conn_close(c);
    return rc;
}

int bt_channel_conn_peer_pid(const struct bt_channel_conn *c)
{
    struct ucred cred;
    socklen_t len = sizeof cred;
    if (c->fd < 0 || getsockopt(c->fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
        return -1;
    return cred.pid > 0 ? (int)cred.pid : -1;
}

int bt_channel_conn_read(struct bt_channel_conn *c)
{
    char buf[65536];
    if (c->fd < 0)
        return -EPIPE;
    for (;;) {
        ssize_t n = recv(c->fd, buf, sizeof buf, 0);
        if (n > 0) {
            bt_framer_feed(&c->framer, buf, (size_t)n);
            if (c->refused)
                return -EPROTO; /* not run's owner: read the store */
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        return -EPIPE; /* the owner closed it, or the connection broke */
    }
}

int bt_channel_conn_wait(struct bt_channel_conn *c, int timeout_ms)
{
    if (c->fd < 0)
        return 1; /* nothing to wait for: the caller reads the end */
    struct pollfd p = {.fd = c->fd, .events = POLLIN};
    int n = poll(&p, 1, timeout_ms);
    if (n < 0)
        return -errno;
    return n > 0;
}

void bt_channel_conn_close(struct bt_channel_conn *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    bt_framer_release(&c->framer);
    bt_framer_init(&c->framer, 0, &follower_ops, c); /* closed twice is fine */
}
