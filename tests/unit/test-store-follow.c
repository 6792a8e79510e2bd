/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of what followers of many runs read (src/store-follow.c): two
 * handles on one store, one writing as a worker does, one reading as
 * baton serve does.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "error.h"
#include "id.h"
#include "store-follow.h"
#include "store.h"
#include "unit-fs.h"
#include "util.h"

struct fixture {
    char dir[64];
    struct bt_store *w, *r; /* writer, reader */
};

static int setup(void **state)
{
    struct fixture *f = bt_xcalloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "%s", "/tmp/bt-follow-XXXXXX");
    if (!mkdtemp(f->dir))
        return -1;
    char *home = bt_xasprintf("%s/home", f->dir);
    int rc = bt_store_open(home, &f->w, NULL) || bt_store_open(home, &f->r, NULL);
    free(home);
    *state = f;
    return rc;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    bt_store_close(f->w);
    bt_store_close(f->r);
    bt_unit_rm_rf(f->dir);
    free(f);
    return 0;
}

static void conversation(struct bt_store *s, char id[BT_ID_SIZE])
{
    struct bt_store_conversation_new o = {.coder = "codex", .cwd = "/src/p", .title = "t"};
    assert_int_equal(bt_store_conversation_create(s, &o, id), 0);
}

static void run(struct bt_store *s, const char *conv, char id[BT_ID_SIZE])
{
    struct bt_store_run_new o = {.conversation = conv, .coder = "codex"};
    int64_t msg;
    assert_int_equal(bt_store_run_create(s, &o, id, &msg), 0);
}

static void event(struct bt_store *s, const char *run, int64_t seq)
{
    char json[64];
    snprintf(json, sizeof json, "{\"seq\":%lld}", (long long)seq);
    struct bt_store_event ev = {.run = run,
                                .seq = seq,
                                .type = "item.delta",
                                .ts_ms = seq,
                                .data = json,
                                .len = strlen(json)};
    assert_int_equal(bt_store_event_append(s, &ev), 0);
}

/* What bt_store_event_after saw, in order. */
struct seen {
    int n;
    char runs[16][BT_ID_SIZE];
    int64_t seqs[16], rowids[16];
    char convs[16][BT_ID_SIZE];
    int running[16];
};

static int on_after(void *data, const struct bt_store_event *ev, const char *conv, int64_t rowid)
{
    struct seen *s = data;
    assert_true(s->n < 16);
    snprintf(s->runs[s->n], BT_ID_SIZE, "%s", ev->run);
    snprintf(s->convs[s->n], BT_ID_SIZE, "%s", conv);
    s->seqs[s->n] = ev->seq;
    s->rowids[s->n++] = rowid;
    return 0;
}

static int on_changed(void *data, const char *conv, const char *run, int running, int64_t rowid)
{
    struct seen *s = data;
    assert_true(s->n < 16);
    snprintf(s->convs[s->n], BT_ID_SIZE, "%s", conv);
    snprintf(s->runs[s->n], BT_ID_SIZE, "%s", run);
    s->running[s->n] = running;
    s->rowids[s->n++] = rowid;
    return 0;
}

/* Another handle's commit changes the data version; reading does not. */
static void test_data_version(void **state)
{
    struct fixture *f = *state;
    int64_t v1, v2, v3;
    char c[BT_ID_SIZE], r[BT_ID_SIZE];
    assert_int_equal(bt_store_data_version(f->r, &v1), 0);
    assert_int_equal(bt_store_data_version(f->r, &v2), 0);
    assert_int_equal(v1, v2);
    conversation(f->w, c);
    run(f->w, c, r);
    event(f->w, r, 1);
    assert_int_equal(bt_store_flush(f->w), 0);
    assert_int_equal(bt_store_data_version(f->r, &v3), 0);
    assert_true(v3 != v2);
}

/* Events in commit order across runs and conversations, with rowids that
 * resume where a cursor stopped; the changed conversations with their
 * largest rowid. */
static void test_after_and_changed(void **state)
{
    struct fixture *f = *state;
    char c1[BT_ID_SIZE], c2[BT_ID_SIZE], r1[BT_ID_SIZE], r2[BT_ID_SIZE];
    int64_t last = -1;
    assert_int_equal(bt_store_event_last(f->r, &last), 0);
    assert_int_equal(last, 0);
    conversation(f->w, c1);
    conversation(f->w, c2);
    run(f->w, c1, r1);
    run(f->w, c2, r2);
    event(f->w, r1, 1);
    event(f->w, r2, 1);
    event(f->w, r1, 2);
    assert_int_equal(bt_store_flush(f->w), 0);
    struct seen s = {0};
    assert_int_equal(bt_store_event_after(f->r, 0, 100, on_after, &s), 0);
    assert_int_equal(s.n, 3);
    assert_string_equal(s.runs[0], r1);
    assert_string_equal(s.runs[1], r2);
    assert_string_equal(s.runs[2], r1);
    assert_int_equal(s.seqs[2], 2);
    assert_string_equal(s.convs[1], c2);
    assert_true(s.rowids[0] < s.rowids[1] && s.rowids[1] < s.rowids[2]);
    /* from the first one's rowid, at most one */
    struct seen t = {0};
    assert_int_equal(bt_store_event_after(f->r, s.rowids[0], 1, on_after, &t), 0);
    assert_int_equal(t.n, 1);
    assert_string_equal(t.runs[0], r2);
    int64_t rowid;
    assert_int_equal(bt_store_event_rowid(f->r, r1, 2, &rowid), 0);
    assert_int_equal(rowid, s.rowids[2]);
    assert_int_equal(bt_store_event_rowid(f->r, r1, 3, &rowid), BT_ENOTFOUND);
    assert_int_equal(bt_store_event_last(f->r, &last), 0);
    assert_int_equal(last, s.rowids[2]);
    /* each run once, in the order of its newest event, with its state */
    struct bt_store_run_end e = {.state = BT_STORE_RUN_COMPLETED};
    assert_int_equal(bt_store_run_finish(f->w, r2, &e), 0);
    struct seen ch = {0};
    assert_int_equal(bt_store_event_changed(f->r, s.rowids[0], on_changed, &ch), 0);
    assert_int_equal(ch.n, 2);
    assert_string_equal(ch.runs[0], r2);
    assert_string_equal(ch.convs[0], c2);
    assert_int_equal(ch.rowids[0], s.rowids[1]);
    assert_false(ch.running[0]);
    assert_string_equal(ch.runs[1], r1);
    assert_string_equal(ch.convs[1], c1);
    assert_int_equal(ch.rowids[1], s.rowids[2]);
    assert_true(ch.running[1]);
    struct seen none = {0};
    assert_int_equal(bt_store_event_changed(f->r, last, on_changed, &none), 0);
    assert_int_equal(none.n, 0);
}

/* A reader that runs the same loop again on its handle, from inside. */
struct nested {
    struct bt_store *s;
    struct seen outer, inner[4];
};

static int on_after_nested(void *data, const struct bt_store_event *ev, const char *conv,
                           int64_t rowid)
{
    struct nested *n = data;
    int i = n->outer.n;
    on_after(&n->outer, ev, conv, rowid);
    assert_int_equal(bt_store_event_after(n->s, rowid, 100, on_after, &n->inner[i]), 0);
    return 0;
}

/* A loop's statement is lent, not shared: the same loop run from its
 * callback on the same handle leaves the outer one where it was (each
 * sees what follows its own cursor), and once both are done the loop
 * still reads, commits made meanwhile included. */
static void test_nested_reads(void **state)
{
    struct fixture *f = *state;
    char c[BT_ID_SIZE], r[BT_ID_SIZE];
    conversation(f->w, c);
    run(f->w, c, r);
    for (int seq = 1; seq <= 3; seq++)
        event(f->w, r, seq);
    assert_int_equal(bt_store_flush(f->w), 0);
    struct nested n = {.s = f->r};
    assert_int_equal(bt_store_event_after(f->r, 0, 100, on_after_nested, &n), 0);
    assert_int_equal(n.outer.n, 3);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(n.outer.seqs[i], i + 1);
        assert_int_equal(n.inner[i].n, 2 - i);
        if (n.inner[i].n)
            assert_int_equal(n.inner[i].seqs[0], i + 2);
    }
    event(f->w, r, 4);
    assert_int_equal(bt_store_flush(f->w), 0);
    struct seen again = {0};
    assert_int_equal(bt_store_event_after(f->r, n.outer.rowids[2], 100, on_after, &again), 0);
    assert_int_equal(again.n, 1);
    assert_int_equal(again.seqs[0], 4);
}

/* A conversation's next run in the order they started: a retry (another
 * run of the same turn) comes next; none after the last, none for a run
 * of another conversation or no run. */
static void test_run_next(void **state)
{
    struct fixture *f = *state;
    char c[BT_ID_SIZE], other[BT_ID_SIZE], r1[BT_ID_SIZE], r2[BT_ID_SIZE], r3[BT_ID_SIZE];
    char next[BT_ID_SIZE];
    conversation(f->w, c);
    conversation(f->w, other);
    run(f->w, c, r1);
    assert_int_equal(bt_store_run_next(f->r, c, r1, next), BT_ENOTFOUND);
    struct bt_store_run_end e = {.state = BT_STORE_RUN_FAILED};
    assert_int_equal(bt_store_run_finish(f->w, r1, &e), 0);
    /* the retry: turn 1 again, started in the same millisecond or later */
    struct bt_store_run_new o = {.conversation = c, .coder = "codex", .turn = 1};
    int64_t msg;
    assert_int_equal(bt_store_run_create(f->w, &o, r2, &msg), 0);
    e.state = BT_STORE_RUN_COMPLETED;
    assert_int_equal(bt_store_run_finish(f->w, r2, &e), 0);
    run(f->w, c, r3);
    struct bt_store_run got;
    assert_int_equal(bt_store_run_get(f->r, r2, &got), 0);
    assert_int_equal(got.turn, 1);
    bt_store_run_release(&got);
    assert_int_equal(bt_store_run_next(f->r, c, r1, next), 0);
    assert_string_equal(next, r2);
    assert_int_equal(bt_store_run_next(f->r, c, r2, next), 0);
    assert_string_equal(next, r3);
    assert_int_equal(bt_store_run_next(f->r, c, r3, next), BT_ENOTFOUND);
    assert_int_equal(bt_store_run_next(f->r, other, r1, next), BT_ENOTFOUND);
    assert_int_equal(bt_store_run_next(f->r, c, "0000000000000000000000", next), BT_ENOTFOUND);
}

/* Deleting the newest events lowers the largest rowid below a cursor that
 * had passed them: the pull-back that followers rely on. */
static void test_rowid_after_delete(void **state)
{
    struct fixture *f = *state;
    char c1[BT_ID_SIZE], c2[BT_ID_SIZE], r1[BT_ID_SIZE], r2[BT_ID_SIZE];
    int64_t before, after;
    conversation(f->w, c1);
    conversation(f->w, c2);
    run(f->w, c1, r1);
    event(f->w, r1, 1);
    run(f->w, c2, r2);
    event(f->w, r2, 1);
    event(f->w, r2, 2);
    assert_int_equal(bt_store_flush(f->w), 0);
    assert_int_equal(bt_store_event_last(f->r, &before), 0);
    struct bt_store_run_end e = {.state = BT_STORE_RUN_COMPLETED};
    assert_int_equal(bt_store_run_finish(f->w, r2, &e), 0);
    struct bt_store_removal gone = {0};
    assert_int_equal(bt_store_conversation_delete(f->w, c2, &gone), 0);
    bt_store_removal_release(&gone);
    assert_int_equal(bt_store_event_last(f->r, &after), 0);
    assert_true(after < before);
}

/* The writer's batch, committed by another thread a while after the
 * reader's handle started its own write. */
struct later {
    struct bt_store *s;
    int rc;
};

static void flush_later(void *arg)
{
    struct later *l = arg;
    uv_sleep(100);
    l->rc = bt_store_flush(l->s);
}

/* A write waits for another handle's open transaction (on_busy of
 * store-open.c) and lands after it, nothing lost on either side. */
static void test_writer_waits(void **state)
{
    struct fixture *f = *state;
    char c[BT_ID_SIZE], r1[BT_ID_SIZE], r2[BT_ID_SIZE];
    conversation(f->w, c);
    run(f->w, c, r1);
    event(f->w, r1, 1); /* the batch stays open: the write lock is held */
    uv_thread_t t;
    struct later l = {.s = f->w, .rc = -1};
    assert_int_equal(uv_thread_create(&t, flush_later, &l), 0);
    char c2[BT_ID_SIZE];
    conversation(f->r, c2); /* waits for the flush */
    run(f->r, c2, r2);
    event(f->r, r2, 1);
    assert_int_equal(bt_store_flush(f->r), 0);
    assert_int_equal(uv_thread_join(&t), 0);
    assert_int_equal(l.rc, 0);
    struct seen s = {0};
    assert_int_equal(bt_store_event_after(f->r, 0, 10, on_after, &s), 0);
    assert_int_equal(s.n, 2);
    assert_string_equal(s.runs[0], r1);
    assert_string_equal(s.runs[1], r2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_data_version, setup, teardown),
        cmocka_unit_test_setup_teardown(test_after_and_changed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nested_reads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_run_next, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rowid_after_delete, setup, teardown),
        cmocka_unit_test_setup_teardown(test_writer_waits, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
