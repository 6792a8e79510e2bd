/* SPDX-License-Identifier: MIT */
/*
 * Integration tests of the run owner's channel (src/channel.h) through the
 * baton binary and the fake coder: followers from other processes that
 * join late see every event once; a cancel delivered through the socket;
 * an owner killed with SIGKILL leaves its requests stored and its socket
 * stale, and recovery handles both; a $BATON_HOME longer than sun_path.
 * The tests wait for states (a socket there, events stored), never for a
 * fixed time.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "channel.h"
#include "harness.h"
#include "id.h"
#include "store.h"
#include "util.h"

static char *home_of(struct ctx *c)
{
    for (int i = 0; i < c->nenv; i++)
        if (strncmp(c->env[i], "BATON_HOME=", 11) == 0)
            return bt_xstrdup(c->env[i] + 11);
    return path_in(c, "home");
}

static struct bt_store *open_store(struct ctx *c)
{
    char *home = home_of(c);
    struct bt_store *s = NULL;
    assert_int_equal(bt_store_open(home, &s, NULL), 0);
    free(home);
    return s;
}

static char *socket_of(struct ctx *c, const char *run)
{
    char *home = home_of(c);
    char *p = bt_xasprintf("%s/%s/%s.sock", home, BT_CHANNEL_DIR, run);
    free(home);
    return p;
}

static int exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

struct events {
    struct bt_buf all; /* the stored lines, one per event */
    int64_t n;
};

static int collect(void *data, const struct bt_store_event *ev)
{
    struct events *e = data;
    bt_buf_add(&e->all, ev->data, ev->len);
    bt_buf_addc(&e->all, '\n');
    e->n = ev->seq;
    return 0;
}

/* `baton run --detach` held mid-turn (the fake coder waits for
 * release_turns); returns once its run stored min events and its owner
 * listens on its socket. */
static void held_run(struct ctx *c, int64_t min, char conv[64], struct bt_store_run *r)
{
    struct bt_test_result res;
    replay(c, "text");
    hold_turns(c, 12);
    baton(c, &res, NULL, 0, "run", "--detach", "channel", END);
    assert_int_equal(res.exit_code, 0);
    assert_int_equal(sscanf(res.out.data, "%63s", conv), 1);
    bt_test_result_release(&res);
    struct bt_store *s = open_store(c);
    for (int64_t t0 = 0; bt_test_poll(&t0);) {
        if (bt_store_run_last(s, conv, r) == 0) {
            struct events e = {BT_BUF_INIT, 0};
            assert_int_equal(bt_store_event_each(s, r->id, 1, collect, &e), 0);
            bt_buf_release(&e.all);
            char *sock = socket_of(c, r->id);
            int ready = e.n >= min && r->pgid > 0 && exists(sock);
            free(sock);
            if (ready) {
                bt_store_close(s);
                return;
            }
            bt_store_run_release(r);
        }
    }
    bt_test_give_up("the run did not store %lld events with its socket", (long long)min);
}

/* Lines of a --json output file, checked to be seq 1..n, each once. */
static size_t check_sequence(const char *text, cJSON ***lines)
{
    size_t n = bt_test_json_lines(text, lines);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(cJSON_GetObjectItem((*lines)[i], "seq")->valueint, (int)i + 1);
    return n;
}

/* What a follower in this process received on the socket. */
struct live {
    int64_t first, last; /* seqs */
    int lines;
    int gap; /* a seq that was not the one after the last */
};

static void on_live(void *data, const char *line, size_t len)
{
    struct live *l = data;
    cJSON *o = cJSON_ParseWithLength(line, len);
    int64_t seq = (int64_t)cJSON_GetNumberValue(cJSON_GetObjectItem(o, "seq"));
    cJSON_Delete(o);
    if (l->lines++ == 0)
        l->first = seq;
    else if (seq != l->last + 1)
        l->gap = 1;
    l->last = seq;
}

/* Two attachers in other processes join a running turn late, one more
 * after its end; a follower in this process takes the socket's lines:
 * every attacher prints every event once, in order, as stored; what came
 * live came in order from the follower's answer on, and reached the end. */
static void test_followers_join_late(void **state)
{
    struct ctx *c = *state;
    char conv[64];
    struct bt_store_run r;
    held_run(c, 3, conv, &r);
    char *home = home_of(c);
    struct bt_channel_conn conn;
    struct live live = {0};
    assert_int_equal(bt_channel_follow(home, r.id, &conn, on_live, &live), 0);
    pid_t a = baton_bg(c, "a.out", "attach", "--json", conv, END);
    pid_t b = baton_bg(c, "b.out", "attach", "--json", conv, END);
    char *pa = path_in(c, "a.out"), *pb = path_in(c, "b.out");
    for (int64_t t0 = 0; bt_test_poll(&t0);) { /* both printed what was stored */
        char *ta = bt_test_slurp(pa, NULL), *tb = bt_test_slurp(pb, NULL);
        int ready = ta && tb && strstr(ta, "\"seq\":3,") && strstr(tb, "\"seq\":3,");
        free(ta);
        free(tb);
        if (ready)
            break;
    }
    setenv_kv(c, "FAKE_CODER_DELAY_MS=20");
    release_turns(c);
    assert_int_equal(wait_exit(a), 0);
    assert_int_equal(wait_exit(b), 0);
    int rc = 0;
    while (rc == 0 && bt_channel_conn_wait(&conn, 10000) > 0)
        rc = bt_channel_conn_read(&conn);
    assert_int_equal(rc, -EPIPE); /* the owner closed it at the end */
    bt_channel_conn_close(&conn);

    struct bt_store *s = open_store(c);
    struct events stored = {BT_BUF_INIT, 0};
    assert_int_equal(bt_store_event_each(s, r.id, 1, collect, &stored), 0);
    bt_store_close(s);
    char *ta = bt_test_slurp(pa, NULL), *tb = bt_test_slurp(pb, NULL);
    assert_string_equal(ta, stored.all.data);
    assert_string_equal(tb, stored.all.data);
    cJSON **lines;
    size_t n = check_sequence(ta, &lines);
    assert_int_equal((int64_t)n, stored.n);
    assert_string_equal(bt_test_jstr(lines[n - 1], "type"), "turn.completed");
    bt_test_lines_free(lines, n);
    assert_true(live.lines > 0);
    assert_false(live.gap);
    assert_true(live.first > 3);            /* from its answer on, not what was stored before */
    assert_true(live.last <= stored.n - 1); /* turn.completed is read from the store */

    struct bt_test_result res;
    baton(c, &res, NULL, 0, "attach", "--json", conv, END);
    assert_int_equal(res.exit_code, 0);
    assert_string_equal(res.out.data, stored.all.data);
    bt_test_result_release(&res);
    char *sock = socket_of(c, r.id);
    assert_false(exists(sock)); /* removed when the run ended */
    free(sock);
    free(ta);
    free(tb);
    free(pa);
    free(pb);
    free(home);
    bt_buf_release(&stored.all);
    bt_store_run_release(&r);
}

/* The rows of the controls table of run as "kind state result;". */
static char *controls_of(struct ctx *c, const char *run)
{
    struct bt_store *s = open_store(c);
    struct bt_buf b = BT_BUF_INIT;
    for (int64_t id = 1; id < 100; id++) {
        struct bt_store_control ctl;
        if (bt_store_control_get(s, id, &ctl) != 0)
            continue;
        if (strcmp(ctl.run, run) == 0)
            bt_buf_addf(&b, "%s %s %s;", ctl.kind, bt_store_control_state_name(ctl.state),
                        ctl.result ? ctl.result : "-");
        bt_store_control_release(&ctl);
    }
    bt_store_close(s);
    bt_buf_addc(&b, '\0');
    return bt_buf_detach(&b, NULL);
}

/* baton cancel stores the request and wakes the owner through its socket:
 * the coder is stopped, the run ends cancelled, the request is done; an
 * attacher sees the end. */
static void test_cancel_through_channel(void **state)
{
    struct ctx *c = *state;
    char conv[64];
    struct bt_store_run r;
    held_run(c, 3, conv, &r);
    pid_t a = baton_bg(c, "a.out", "attach", "--json", conv, END);
    struct bt_test_result res;
    baton(c, &res, NULL, 0, "cancel", conv, END);
    assert_int_equal(res.exit_code, 0);
    assert_non_null(strstr(res.err.data, "ended cancelled"));
    bt_test_result_release(&res);
    assert_int_equal(wait_exit(a), 130);
    char *rows = controls_of(c, r.id);
    assert_string_equal(rows, "cancel done {\"stopping\":true};");
    free(rows);
    char *sock = socket_of(c, r.id);
    assert_false(exists(sock));
    free(sock);
    assert_int_equal(kill(-r.pgid, 0), -1);
    bt_store_run_release(&r);
}

/* An owner killed with SIGKILL: its requests wait stored and its socket is
 * stale (nobody accepts); attach finds the owner dead and recovers the
 * run: cancelled for the pending cancel, which is done, the pending
 * decision refused, the pending steer a queued message (show lists it),
 * the socket removed, the coder's group gone. */
static void test_owner_killed(void **state)
{
    struct ctx *c = *state;
    char conv[64];
    struct bt_store_run r;
    held_run(c, 3, conv, &r);
    assert_int_equal(kill(r.owner_pid, SIGSTOP), 0); /* it cannot take them */
    struct bt_store *s = open_store(c);
    struct bt_store_run cr;
    assert_int_equal(bt_store_run_cancel(s, conv, &cr), 0);
    bt_store_run_release(&cr);
    int64_t decision = 0;
    assert_int_equal(bt_store_control_add(s, conv, r.id, "decision", "{\"allow\":true}", &decision),
                     0);
    assert_int_equal(bt_store_control_add(s, conv, r.id, "steer",
                                          "{\"text\":\"and run the tests too\"}", &decision),
                     0);
    bt_store_close(s);
    assert_int_equal(kill(r.owner_pid, SIGKILL), 0);
    char *rows = controls_of(c, r.id);
    assert_string_equal(rows, "cancel pending -;decision pending -;steer pending -;");
    free(rows);
    char *home = home_of(c), *sock = socket_of(c, r.id);
    for (int64_t t0 = 0; bt_test_poll(&t0);) /* the owner is gone, its socket stays */
        if (bt_channel_wake(home, r.id) == -ECONNREFUSED)
            break;
    assert_int_equal(bt_channel_wake(home, r.id), -ECONNREFUSED);
    assert_true(exists(sock));

    struct bt_test_result res;
    baton(c, &res, NULL, 0, "attach", "--json", conv, END);
    assert_int_equal(res.exit_code, 130);
    cJSON **lines;
    size_t n = check_sequence(res.out.data, &lines);
    assert_string_equal(bt_test_jstr(lines[n - 1], "status"), "cancelled");
    bt_test_lines_free(lines, n);
    bt_test_result_release(&res);
    rows = controls_of(c, r.id);
    char *want = bt_xasprintf("cancel done {\"stopping\":true};"
                              "decision refused {\"reason\":\"the turn had ended\"};"
                              "steer queued {\"reason\":\"the turn had ended\",");
    assert_memory_equal(rows, want, strlen(want));
    assert_non_null(strstr(rows, ",\"queue_no\":2};")); /* --detach queued the prompt as #1 */
    free(want);
    free(rows);
    baton(c, &res, NULL, 0, "show", "--json", conv, END);
    assert_int_equal(res.exit_code, 0);
    const char *steer = strstr(res.out.data, "\"and run the tests too\"");
    assert_non_null(steer);
    bt_test_result_release(&res);
    assert_false(exists(sock));
    assert_int_equal(kill(-r.pgid, 0), -1);
    free(sock);
    free(home);
    bt_store_run_release(&r);
}

/* A $BATON_HOME whose socket path is longer than sun_path's 108 bytes: the
 * owner listens, an attacher follows it to the end, a cancel reaches it. */
static void test_long_home(void **state)
{
    struct ctx *c = *state;
    char *home = path_in(c, "a-state-directory-named-at-length-so-that-the-socket-path-is-"
                            "far-beyond-the-hundred-and-eight-bytes-of-sun-path");
    char *kv = bt_xasprintf("BATON_HOME=%s", home);
    setenv_kv(c, kv);
    char conv[64];
    struct bt_store_run r;
    held_run(c, 3, conv, &r);
    char *sock = socket_of(c, r.id);
    assert_true(strlen(sock) > sizeof(((struct sockaddr_un *)0)->sun_path));
    assert_true(exists(sock));
    pid_t a = baton_bg(c, "a.out", "attach", "--json", conv, END);
    struct bt_test_result res;
    baton(c, &res, NULL, 0, "cancel", conv, END);
    assert_int_equal(res.exit_code, 0);
    bt_test_result_release(&res);
    assert_int_equal(wait_exit(a), 130);
    char *rows = controls_of(c, r.id);
    assert_string_equal(rows, "cancel done {\"stopping\":true};");
    free(rows);
    assert_false(exists(sock));
    free(sock);
    free(kv);
    free(home);
    bt_store_run_release(&r);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_followers_join_late),
        T(test_cancel_through_channel),
        T(test_owner_killed),
        T(test_long_home),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
