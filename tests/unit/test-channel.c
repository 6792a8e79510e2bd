/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the run owner's channel (src/channel.c): the owner's side
 * runs on a libuv loop in a thread of its own, as on a turn's loop; the
 * test's thread is the requester and the follower, as another process
 * would be. Each test gets a fresh $BATON_HOME under /tmp.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "channel.h"
#include "id.h"
#include "unit-fs.h"
#include "util.h"

/* The owner's loop in a thread; loop_call runs a function on it. */
struct owner {
    uv_loop_t loop;
    uv_async_t async;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    void (*fn)(struct owner *o); /* to run on the loop, NULL when done */
    int quit;
    struct bt_channel *ch;
    atomic_int wakes; /* on_wake calls */
    const char *home;
    char run[BT_ID_SIZE];
    int open_rc;
    const char *lines; /* for do_publish */
    size_t len;
    const int64_t *rowids;
    size_t nrowids;
    size_t followers;
};

static void on_async(uv_async_t *h)
{
    struct owner *o = h->data;
    pthread_mutex_lock(&o->mu);
    if (o->fn) {
        o->fn(o);
        o->fn = NULL;
    }
    if (o->quit)
        uv_close((uv_handle_t *)&o->async, NULL);
    pthread_cond_broadcast(&o->cv);
    pthread_mutex_unlock(&o->mu);
}

static void *loop_main(void *data)
{
    struct owner *o = data;
    uv_run(&o->loop, UV_RUN_DEFAULT);
    return NULL;
}

static void loop_call(struct owner *o, void (*fn)(struct owner *o))
{
    pthread_mutex_lock(&o->mu);
    o->fn = fn;
    uv_async_send(&o->async);
    while (o->fn)
        pthread_cond_wait(&o->cv, &o->mu);
    pthread_mutex_unlock(&o->mu);
}

static void on_wake(void *data)
{
    struct owner *o = data;
    atomic_fetch_add(&o->wakes, 1);
}

static void do_open(struct owner *o)
{
    o->open_rc = bt_channel_open(&o->loop, o->home, o->run, on_wake, o, &o->ch);
}

static void do_publish(struct owner *o)
{
    bt_channel_publish(o->ch, o->lines, o->len, o->rowids, o->nrowids);
}

static void do_count(struct owner *o)
{
    o->followers = bt_channel_followers(o->ch);
}

static void do_close(struct owner *o)
{
    bt_channel_close(o->ch);
    o->ch = NULL;
}

static void do_quit(struct owner *o)
{
    o->quit = 1;
}

static void owner_start(struct owner *o, const char *home)
{
    memset(o, 0, sizeof *o);
    o->home = home;
    assert_int_equal(bt_id_new(o->run), 0);
    assert_int_equal(uv_loop_init(&o->loop), 0);
    assert_int_equal(uv_async_init(&o->loop, &o->async, on_async), 0);
    o->async.data = o;
    pthread_mutex_init(&o->mu, NULL);
    pthread_cond_init(&o->cv, NULL);
    assert_int_equal(pthread_create(&o->thread, NULL, loop_main, o), 0);
    loop_call(o, do_open);
}

static void owner_stop(struct owner *o)
{
    if (o->ch)
        loop_call(o, do_close);
    loop_call(o, do_quit);
    pthread_join(o->thread, NULL);
    assert_int_equal(uv_loop_close(&o->loop), 0); /* every handle was closed */
    pthread_mutex_destroy(&o->mu);
    pthread_cond_destroy(&o->cv);
}

static void publish(struct owner *o, const char *lines)
{
    o->lines = lines;
    o->len = strlen(lines);
    loop_call(o, do_publish);
}

struct fixture {
    char dir[64];
    char *home;
};

static int setup(void **state)
{
    struct fixture *f = bt_xcalloc(1, sizeof *f);
    snprintf(f->dir, sizeof(f->dir), "%s", "/tmp/bt-channel-XXXXXX");
    if (!mkdtemp(f->dir))
        return -1;
    f->home = bt_xasprintf("%s/home", f->dir);
    if (mkdir(f->home, 0700) != 0)
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    bt_unit_rm_rf(f->dir);
    free(f->home);
    free(f);
    return 0;
}

/* What a follower received. */
struct got {
    struct bt_buf all;
    int lines;
    struct bt_channel_conn *conn; /* set: each line's rowid is added after it */
};

static void on_line(void *data, const char *line, size_t len)
{
    struct got *g = data;
    bt_buf_add(&g->all, line, len);
    if (g->conn)
        bt_buf_addf(&g->all, "@%lld", (long long)g->conn->rowid);
    bt_buf_add(&g->all, "|", 1);
    g->lines++;
}

/* Read c until want lines came or the owner closed it (-EPIPE). */
static int read_until(struct bt_channel_conn *c, struct got *g, int want)
{
    for (int rounds = 0; g->lines < want && rounds < 500; rounds++) {
        bt_channel_conn_wait(c, 20);
        int rc = bt_channel_conn_read(c);
        if (rc)
            return rc;
    }
    return 0;
}

static mode_t mode_of(const char *path)
{
    struct stat st;
    assert_int_equal(lstat(path, &st), 0);
    return st.st_mode;
}

/* The socket, 0600, in its 0700 directory while the owner listens; a wake
 * reaches on_wake; gone once closed, and a wake then finds nobody. */
static void test_wake_and_modes(void **state)
{
    struct fixture *f = *state;
    struct owner o;
    owner_start(&o, f->home);
    assert_int_equal(o.open_rc, 0);
    char *dir = bt_xasprintf("%s/%s", f->home, BT_CHANNEL_DIR);
    char *sock = bt_xasprintf("%s/%s.sock", dir, o.run);
    assert_int_equal(mode_of(dir) & 07777, 0700);
    assert_true(S_ISSOCK(mode_of(sock)));
    assert_int_equal(mode_of(sock) & 07777, 0600);
    assert_int_equal(bt_channel_wake(f->home, o.run), 0);
    assert_int_equal(bt_channel_wake(f->home, o.run), 0);
    for (int i = 0; i < 500 && atomic_load(&o.wakes) < 2; i++)
        usleep(2000);
    assert_int_equal(atomic_load(&o.wakes), 2);
    loop_call(&o, do_close);
    struct stat st;
    assert_int_equal(lstat(sock, &st), -1); /* removed with the channel */
    assert_int_equal(bt_channel_wake(f->home, o.run), -ENOENT);
    char other[BT_ID_SIZE];
    assert_int_equal(bt_id_new(other), 0);
    assert_int_equal(bt_channel_wake(f->home, other), -ENOENT);
    assert_int_equal(bt_channel_wake(f->home, "../../etc/x"), -EINVAL);
    owner_stop(&o);
    free(sock);
    free(dir);
}

/* A client whose request line passes the bound is cut off, and what it
 * sent after it in the same write counts for nothing: it is no follower
 * (the count stays 0) and wakes nobody; garbage lines before are ignored
 * and the owner goes on (a wake from another client still comes). */
static void test_overlong_request_cut_off(void **state)
{
    struct fixture *f = *state;
    struct owner o;
    owner_start(&o, f->home);
    assert_int_equal(o.open_rc, 0);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s/%s/%s.sock", f->home, BT_CHANNEL_DIR, o.run);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    struct bt_buf b = BT_BUF_INIT;
    bt_buf_adds(&b, "not json\n{\"op\":42}\n[]\n");
    for (int i = 0; i < 5000; i++)
        bt_buf_addc(&b, 'x');
    bt_buf_adds(&b, "\n{\"op\":\"follow\"}\n{\"op\":\"wake\"}\n");
    assert_int_equal(send(fd, b.data, b.len, MSG_NOSIGNAL), (ssize_t)b.len);
    char buf[256];
    ssize_t n;
    struct bt_buf said = BT_BUF_INIT;
    while ((n = recv(fd, buf, sizeof buf, 0)) > 0)
        bt_buf_add(&said, buf, (size_t)n);
    assert_int_equal(n, 0);                                       /* cut off */
    assert_null(strstr(said.data ? said.data : "", "following")); /* never answered */
    bt_buf_release(&said);
    close(fd);
    loop_call(&o, do_count);
    assert_int_equal(o.followers, 0);
    assert_int_equal(atomic_load(&o.wakes), 0);
    assert_int_equal(bt_channel_wake(f->home, o.run), 0);
    for (int i = 0; i < 500 && atomic_load(&o.wakes) < 1; i++)
        usleep(2000);
    assert_int_equal(atomic_load(&o.wakes), 1);
    bt_buf_release(&b);
    owner_stop(&o);
}

/* A follower gets every line published after its answer, in order, none
 * before it; two followers the same; the end of the channel is -EPIPE. */
static void test_follow(void **state)
{
    struct fixture *f = *state;
    struct owner o;
    owner_start(&o, f->home);
    assert_int_equal(o.open_rc, 0);
    publish(&o, "{\"seq\":1}\n"); /* nobody follows yet: nobody gets it */
    struct bt_channel_conn a, b;
    struct got ga = {BT_BUF_INIT, 0, NULL}, gb = {BT_BUF_INIT, 0, NULL};
    assert_int_equal(bt_channel_follow(f->home, o.run, &a, on_line, &ga), 0);
    assert_int_equal(bt_channel_follow(f->home, o.run, &b, on_line, &gb), 0);
    loop_call(&o, do_count);
    assert_int_equal(o.followers, 2);
    publish(&o, "{\"seq\":2}\n{\"seq\":3}\n");
    publish(&o, "{\"seq\":4}\n");
    assert_int_equal(read_until(&a, &ga, 3), 0);
    assert_int_equal(read_until(&b, &gb, 3), 0);
    bt_buf_add(&ga.all, "", 1);
    bt_buf_add(&gb.all, "", 1);
    assert_string_equal(ga.all.data, "{\"seq\":2}|{\"seq\":3}|{\"seq\":4}|");
    assert_string_equal(gb.all.data, ga.all.data);
    bt_channel_conn_close(&b);
    for (int i = 0; i < 500 && o.followers != 1; i++) {
        usleep(2000);
        loop_call(&o, do_count);
    }
    assert_int_equal(o.followers, 1);
    loop_call(&o, do_close);
    assert_int_equal(read_until(&a, &ga, 100), -EPIPE);
    assert_int_equal(ga.lines, 3);
    bt_channel_conn_close(&a);
    bt_channel_conn_close(&a); /* twice is fine */
    owner_stop(&o);
    bt_buf_release(&ga.all);
    bt_buf_release(&gb.all);
}

/* A follower that asks for rowids gets each line's (0 where the owner
 * knows none, and across a gap), and the same lines as one that does
 * not, which is told nothing more. */
static void test_follow_rowids(void **state)
{
    struct fixture *f = *state;
    struct owner o;
    owner_start(&o, f->home);
    assert_int_equal(o.open_rc, 0);
    struct bt_channel_conn a, b;
    struct got ga = {BT_BUF_INIT, 0, &a}, gb = {BT_BUF_INIT, 0, NULL};
    assert_int_equal(bt_channel_follow_start(f->home, o.run, BT_CHANNEL_ROWIDS, &a, on_line, &ga),
                     0);
    assert_int_equal(bt_channel_follow(f->home, o.run, &b, on_line, &gb), 0);
    for (int i = 0; i < 500 && (!a.acked || o.followers != 2); i++) {
        bt_channel_conn_wait(&a, 2);
        assert_int_equal(bt_channel_conn_read(&a), 0);
        loop_call(&o, do_count);
    }
    assert_true(a.acked);
    static const int64_t first[] = {7, 8, 12}, second[] = {13, 0, 0, 20};
    o.rowids = first;
    o.nrowids = 3;
    publish(&o, "{\"seq\":1}\n{\"seq\":2}\n{\"seq\":3}\n");
    o.rowids = second;
    o.nrowids = 4;
    publish(&o, "{\"seq\":4}\n{\"seq\":5}\n{\"seq\":6}\n{\"seq\":7}\n");
    o.rowids = NULL; /* not known at all */
    o.nrowids = 0;
    publish(&o, "{\"seq\":8}\n");
    assert_int_equal(read_until(&a, &ga, 8), 0);
    assert_int_equal(read_until(&b, &gb, 8), 0);
    bt_buf_add(&ga.all, "", 1);
    bt_buf_add(&gb.all, "", 1);
    assert_string_equal(ga.all.data, "{\"seq\":1}@7|{\"seq\":2}@8|{\"seq\":3}@12|{\"seq\":4}@13|"
                                     "{\"seq\":5}@0|{\"seq\":6}@0|{\"seq\":7}@20|{\"seq\":8}@21|");
    assert_string_equal(gb.all.data, "{\"seq\":1}|{\"seq\":2}|{\"seq\":3}|{\"seq\":4}|{\"seq\":5}|"
                                     "{\"seq\":6}|{\"seq\":7}|{\"seq\":8}|");
    bt_channel_conn_close(&a);
    bt_channel_conn_close(&b);
    owner_stop(&o);
    bt_buf_release(&ga.all);
    bt_buf_release(&gb.all);
}

/* What an owner says of rowids is read strictly: a rowid line that is not
 * one (no number, a negative one, one past int64_t) makes the rowids not
 * known, the last int64_t is counted past without overflow, and the
 * follower reads on. The owner here is a plain socket at the run's path,
 * so that it can say what baton's owner never would. */
static void test_rowids_bad_lines(void **state)
{
    struct fixture *f = *state;
    char run[BT_ID_SIZE], dir[512];
    assert_int_equal(bt_id_new(run), 0);
    snprintf(dir, sizeof dir, "%s/" BT_CHANNEL_DIR, f->home);
    assert_int_equal(mkdir(dir, 0700), 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    int m = snprintf(sa.sun_path, sizeof sa.sun_path, "%s/%s.sock", dir, run);
    assert_true(m > 0 && (size_t)m < sizeof sa.sun_path);
    int lfd = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(listen(lfd, 4), 0);
    struct bt_channel_conn c;
    struct got g = {BT_BUF_INIT, 0, &c};
    assert_int_equal(bt_channel_follow_start(f->home, run, BT_CHANNEL_ROWIDS, &c, on_line, &g), 0);
    int fd = accept(lfd, NULL, NULL);
    assert_true(fd >= 0);
    char req[128] = "";
    assert_true(read(fd, req, sizeof req - 1) > 0);
    assert_non_null(strstr(req, "\"rowids\":true"));
    char out[1024];
    int n = snprintf(out, sizeof out,
                     "{\"op\":\"following\",\"run\":\"%s\"}\n"
                     "{\"op\":\"rowid\",\"from\":5}\n{\"seq\":1}\n"
                     "{\"op\":\"rowid\",\"from\":99999999999999999999}\n{\"seq\":2}\n"
                     "{\"op\":\"rowid\",\"from\":-5}\n{\"seq\":3}\n"
                     "{\"op\":\"rowid\",\"from\":12x}\n{\"seq\":4}\n"
                     "{\"op\":\"rowid\",\"from\":9223372036854775806}\n"
                     "{\"seq\":5}\n{\"seq\":6}\n{\"seq\":7}\n",
                     run);
    assert_int_equal(write(fd, out, (size_t)n), n);
    assert_int_equal(read_until(&c, &g, 7), 0);
    bt_buf_add(&g.all, "", 1);
    assert_string_equal(g.all.data, "{\"seq\":1}@5|{\"seq\":2}@0|{\"seq\":3}@0|{\"seq\":4}@0|"
                                    "{\"seq\":5}@9223372036854775806|"
                                    "{\"seq\":6}@9223372036854775807|{\"seq\":7}@0|");
    bt_channel_conn_close(&c);
    close(fd);
    close(lfd);
    bt_buf_release(&g.all);
}

/* A link at another run's socket path leads to this owner: its answer
 * names its own run, and the follower of the other refuses it (-EPROTO:
 * it reads the store) instead of taking its lines as the other run's. */
static void test_follow_another_owner(void **state)
{
    struct fixture *f = *state;
    struct owner o;
    owner_start(&o, f->home);
    assert_int_equal(o.open_rc, 0);
    char other[BT_ID_SIZE];
    assert_int_equal(bt_id_new(other), 0);
    char *to = bt_xasprintf("%s/%s/%s.sock", f->home, BT_CHANNEL_DIR, o.run);
    char *at = bt_xasprintf("%s/%s/%s.sock", f->home, BT_CHANNEL_DIR, other);
    assert_int_equal(symlink(to, at), 0);
    struct bt_channel_conn c;
    struct got g = {BT_BUF_INIT, 0, NULL};
    assert_int_equal(bt_channel_follow(f->home, other, &c, on_line, &g), -EPROTO);
    assert_int_equal(c.fd, -1);
    /* the same without waiting: read refuses once the answer is in */
    assert_int_equal(bt_channel_follow_start(f->home, other, 0, &c, on_line, &g), 0);
    publish(&o, "{\"seq\":1}\n");
    int rc = 0;
    for (int i = 0; i < 500 && rc == 0; i++) {
        assert_true(bt_channel_conn_wait(&c, 20) >= 0);
        rc = bt_channel_conn_read(&c);
    }
    assert_int_equal(rc, -EPROTO);
    assert_false(c.acked);
    assert_int_equal(g.lines, 0);
    bt_channel_conn_close(&c);
    /* the names in the directory: a run's socket, and nothing else */
    char run[BT_ID_SIZE];
    assert_int_equal(bt_channel_run_of(strrchr(at, '/') + 1, run), 0);
    assert_string_equal(run, other);
    const char *bad[] = {NULL, "", ".sock", "x.sock", "not-an-id-at-all-here.sock", other};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(bt_channel_run_of(bad[i], run), -EINVAL);
    /* its own run's follower is answered as before */
    assert_int_equal(bt_channel_follow(f->home, o.run, &c, on_line, &g), 0);
    bt_channel_conn_close(&c);
    unlink(at);
    free(at);
    free(to);
    owner_stop(&o);
    bt_buf_release(&g.all);
}

/* A follower that reads nothing is cut off once its backlog passes the
 * bound; the owner never waits for it, and others go on. */
static void test_slow_follower_cut_off(void **state)
{
    struct fixture *f = *state;
    struct owner o;
    owner_start(&o, f->home);
    struct bt_channel_conn slow;
    struct got g = {BT_BUF_INIT, 0, NULL};
    assert_int_equal(bt_channel_follow(f->home, o.run, &slow, on_line, &g), 0);
    size_t size = (size_t)64 * 1024;
    char *line = bt_xmalloc(size + 1);
    memset(line, 'x', size - 1);
    line[size - 1] = '\n';
    line[size] = '\0';
    size_t published = 0;
    for (; published < 2 * BT_CHANNEL_BACKLOG_MAX + 4 * size; published += size)
        publish(&o, line);
    loop_call(&o, do_count);
    assert_int_equal(o.followers, 0);
    int rc = 0;
    while (rc == 0) { /* what it was sent before the cut, then the end */
        bt_channel_conn_wait(&slow, 1000);
        rc = bt_channel_conn_read(&slow);
    }
    assert_int_equal(rc, -EPIPE);
    assert_true((size_t)g.lines * size < published);
    bt_channel_conn_close(&slow);
    free(line);
    bt_buf_release(&g.all);
    owner_stop(&o);
}

/* Followers that read nothing cost the owner BT_CHANNEL_BACKLOG_TOTAL at
 * most together: of eight, each kept below its own bound, one at least is
 * cut off, and the owner goes on with the others. */
static void test_followers_backlog_total(void **state)
{
    struct fixture *f = *state;
    struct owner o;
    owner_start(&o, f->home);
    enum { N = 8 };
    struct bt_channel_conn slow[N];
    struct got g[N];
    for (int i = 0; i < N; i++) {
        g[i] = (struct got){BT_BUF_INIT, 0, NULL};
        assert_int_equal(bt_channel_follow(f->home, o.run, &slow[i], on_line, &g[i]), 0);
    }
    size_t size = (size_t)64 * 1024;
    char *line = bt_xmalloc(size + 1);
    memset(line, 'x', size - 1);
    line[size - 1] = '\n';
    line[size] = '\0';
    /* N times this is past the total; each alone is below its bound */
    size_t each = BT_CHANNEL_BACKLOG_TOTAL / N + BT_CHANNEL_BACKLOG_TOTAL / 16;
    assert_true(each < BT_CHANNEL_BACKLOG_MAX);
    for (size_t published = 0; published < each; published += size)
        publish(&o, line);
    loop_call(&o, do_count);
    assert_true(o.followers < N);
    assert_true(o.followers >= 1);
    for (int i = 0; i < N; i++) {
        bt_channel_conn_close(&slow[i]);
        bt_buf_release(&g[i].all);
    }
    free(line);
    owner_stop(&o);
}

/* Clients that connect and hold on take BT_CHANNEL_CONNS_MAX connections
 * at most, and never lock a follower out: a follower past the bound gets
 * in, the oldest holder closed; with every connection following, one more
 * is closed at once (a follower is told to read the store, never left
 * waiting), and gets in once one lets go. */
static void test_connections_bounded(void **state)
{
    struct fixture *f = *state;
    struct owner o;
    owner_start(&o, f->home);
    enum { MAX = BT_CHANNEL_CONNS_MAX };
    int fds[MAX];
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s/%s/%s.sock", f->home, BT_CHANNEL_DIR, o.run);
    for (int i = 0; i < MAX; i++) {
        fds[i] = socket(AF_UNIX, SOCK_STREAM, 0);
        assert_int_equal(connect(fds[i], (struct sockaddr *)&sa, sizeof sa), 0);
    }
    static struct bt_channel_conn fol[MAX + 1];
    struct got g = {BT_BUF_INIT, 0, NULL};
    assert_int_equal(bt_channel_follow(f->home, o.run, &fol[0], on_line, &g), 0);
    char c;
    assert_int_equal(recv(fds[0], &c, 1, 0), 0); /* the oldest holder made room */
    /* followers take the holders' places, one by one */
    for (int i = 1; i < MAX; i++)
        assert_int_equal(bt_channel_follow(f->home, o.run, &fol[i], on_line, &g), 0);
    for (int i = 0; i < MAX; i++)
        close(fds[i]);
    loop_call(&o, do_count);
    assert_int_equal(o.followers, MAX);
    /* all following: one more is turned away, not kept waiting */
    assert_int_equal(bt_channel_follow(f->home, o.run, &fol[MAX], on_line, &g), -EPIPE);
    bt_channel_conn_close(&fol[0]);
    int rc = -EPIPE;
    for (int i = 0; i < 500 && rc != 0; i++) { /* the owner sees the close on its loop */
        rc = bt_channel_follow(f->home, o.run, &fol[MAX], on_line, &g);
        if (rc)
            usleep(2000);
    }
    assert_int_equal(rc, 0);
    publish(&o, "{\"seq\":1}\n");
    assert_int_equal(read_until(&fol[MAX], &g, 1), 0);
    assert_string_equal(g.all.data, "{\"seq\":1}|");
    for (int i = 1; i <= MAX; i++)
        bt_channel_conn_close(&fol[i]);
    bt_buf_release(&g.all);
    owner_stop(&o);
}

/* A socket nobody accepts on (its owner died) is stale: replaced by the
 * next owner, removed by bt_channel_remove_stale; a live one is refused
 * (-EEXIST) and left alone. */
static void test_stale_and_live(void **state)
{
    struct fixture *f = *state;
    struct owner o;
    owner_start(&o, f->home);
    assert_int_equal(o.open_rc, 0);
    struct owner second;
    memset(&second, 0, sizeof second);
    assert_int_equal(uv_loop_init(&second.loop), 0);
    struct bt_channel *ch = NULL;
    assert_int_equal(bt_channel_open(&second.loop, f->home, o.run, on_wake, &second, &ch), -EEXIST);
    assert_null(ch);
    assert_int_equal(bt_channel_remove_stale(f->home, o.run), 0);
    assert_int_equal(bt_channel_wake(f->home, o.run), 0); /* still the first's */

    /* a dead owner's socket: bound, never listened on, its fd closed */
    assert_int_equal(bt_id_new(second.run), 0);
    char *path = bt_xasprintf("%s/%s/%s.sock", f->home, BT_CHANNEL_DIR, second.run);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    close(fd);
    assert_int_equal(bt_channel_wake(f->home, second.run), -ECONNREFUSED);
    assert_int_equal(bt_channel_open(&second.loop, f->home, second.run, on_wake, &second, &ch), 0);
    assert_int_equal(bt_channel_wake(f->home, second.run), 0);
    bt_channel_close(ch);
    uv_run(&second.loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&second.loop), 0);

    fd = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    close(fd);
    assert_int_equal(bt_channel_remove_stale(f->home, second.run), 1);
    struct stat st;
    assert_int_equal(lstat(path, &st), -1);
    free(path);
    owner_stop(&o);
}

/* $BATON_HOME longer than sun_path holds: the owner listens and followers
 * and requesters reach it all the same. */
static void test_long_home(void **state)
{
    struct fixture *f = *state;
    char *home = bt_xasprintf("%s/%s", f->dir,
                              "a-directory-name-long-enough-that-the-socket-path-passes-the-"
                              "hundred-and-eight-bytes-of-sun-path/and-then-some-more");
    for (char *p = home + strlen(f->dir) + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            assert_int_equal(mkdir(home, 0700), 0);
            *p = '/';
        }
    assert_int_equal(mkdir(home, 0700), 0);
    struct owner o;
    owner_start(&o, home);
    assert_int_equal(o.open_rc, 0);
    char *sock = bt_xasprintf("%s/%s/%s.sock", home, BT_CHANNEL_DIR, o.run);
    assert_true(strlen(sock) >= sizeof(((struct sockaddr_un *)0)->sun_path));
    assert_true(S_ISSOCK(mode_of(sock)));
    struct bt_channel_conn c;
    struct got g = {BT_BUF_INIT, 0, NULL};
    assert_int_equal(bt_channel_follow(home, o.run, &c, on_line, &g), 0);
    publish(&o, "{\"seq\":1}\n");
    assert_int_equal(read_until(&c, &g, 1), 0);
    assert_int_equal(g.lines, 1);
    assert_int_equal(bt_channel_wake(home, o.run), 0);
    bt_channel_conn_close(&c);
    loop_call(&o, do_close);
    struct stat st;
    assert_int_equal(lstat(sock, &st), -1);
    owner_stop(&o);
    bt_buf_release(&g.all);
    free(sock);
    free(home);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_wake_and_modes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_follow, setup, teardown),
        cmocka_unit_test_setup_teardown(test_follow_rowids, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rowids_bad_lines, setup, teardown),
        cmocka_unit_test_setup_teardown(test_follow_another_owner, setup, teardown),
        cmocka_unit_test_setup_teardown(test_overlong_request_cut_off, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slow_follower_cut_off, setup, teardown),
        cmocka_unit_test_setup_teardown(test_followers_backlog_total, setup, teardown),
        cmocka_unit_test_setup_teardown(test_connections_bounded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stale_and_live, setup, teardown),
        cmocka_unit_test_setup_teardown(test_long_home, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
