/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of control requests (src/store-control.c, store.h "controls")
 * and of what the service does with those left pending by an ended run
 * (bt_service_control_strand, src/service-control.c). Each test gets a
 * fresh $BATON_HOME under /tmp, removed afterwards.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "service.h"
#include "store.h"
#include "unit-fs.h"
#include "util.h"

struct fixture {
    char dir[64];
    struct bt_store *s;
    char conv[BT_ID_SIZE];
    char run[BT_ID_SIZE];
};

static int setup(void **state)
{
    struct fixture *f = bt_xcalloc(1, sizeof *f);
    snprintf(f->dir, sizeof(f->dir), "%s", "/tmp/bt-control-XXXXXX");
    if (!mkdtemp(f->dir))
        return -1;
    char *home = bt_xasprintf("%s/home", f->dir);
    int rc = bt_store_open(home, &f->s, NULL);
    free(home);
    if (rc)
        return -1;
    struct bt_store_conversation_new c = {.coder = "pi", .cwd = "/src/p", .title = "t"};
    struct bt_store_run_new r = {.conversation = f->conv, .coder = "pi"};
    int64_t msg = 0;
    if (bt_store_conversation_create(f->s, &c, f->conv) ||
        bt_store_run_create(f->s, &r, f->run, &msg))
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    bt_store_close(f->s);
    bt_unit_rm_rf(f->dir);
    free(f);
    return 0;
}

static int64_t add(struct fixture *f, const char *kind, const char *body)
{
    int64_t id = 0;
    int rc = bt_store_control_add(f->s, f->conv, f->run, kind, body, &id);
    if (rc)
        print_error("add: %s\n", bt_store_errmsg(f->s));
    assert_int_equal(rc, 0);
    assert_true(id > 0);
    return id;
}

static void end_run(struct fixture *f, enum bt_store_run_state st)
{
    struct bt_store_run_end e = {.state = st, .exit_code = BT_UNKNOWN};
    assert_int_equal(bt_store_run_finish(f->s, f->run, &e), 0);
}

/* What a walk of pending requests saw. */
struct seen {
    int64_t ids[200];
    size_t n;
    int finish;         /* finish each one done as it is seen */
    int64_t stop_at;    /* return 1 at this id */
    struct bt_store *s; /* for finish */
    char kinds[200][BT_STORE_CONTROL_KIND_MAX + 1];
};

static int seen_cb(void *data, const struct bt_store_control *c)
{
    struct seen *w = data;
    assert_true(w->n < BT_ARRAY_SIZE(w->ids));
    assert_int_equal(c->state, BT_STORE_CONTROL_PENDING);
    snprintf(w->kinds[w->n], sizeof w->kinds[0], "%s", c->kind);
    w->ids[w->n++] = c->id;
    if (w->finish)
        assert_int_equal(bt_store_control_finish(w->s, c->id, BT_STORE_CONTROL_DONE, "{}"), 0);
    return c->id == w->stop_at;
}

/* Stored pending with its body, read back whole; finished once. */
static void test_add_get_finish(void **state)
{
    struct fixture *f = *state;
    int64_t id = add(f, "steer", "{\"text\":\"go left\"}");
    struct bt_store_control c;
    assert_int_equal(bt_store_control_get(f->s, id, &c), 0);
    assert_int_equal(c.id, id);
    assert_string_equal(c.conversation, f->conv);
    assert_string_equal(c.run, f->run);
    assert_string_equal(c.kind, "steer");
    assert_string_equal(c.body, "{\"text\":\"go left\"}");
    assert_true(c.created_ms > 0);
    assert_int_equal(c.state, BT_STORE_CONTROL_PENDING);
    assert_null(c.result);
    assert_int_equal(c.done_ms, 0);
    assert_int_equal(c.run_state, BT_STORE_RUN_RUNNING);
    bt_store_control_release(&c);

    assert_int_equal(bt_store_control_finish(f->s, id, BT_STORE_CONTROL_QUEUED, "{\"message\":7}"),
                     0);
    assert_int_equal(bt_store_control_get(f->s, id, &c), 0);
    assert_int_equal(c.state, BT_STORE_CONTROL_QUEUED);
    assert_string_equal(c.result, "{\"message\":7}");
    assert_true(c.done_ms >= c.created_ms);
    bt_store_control_release(&c);
    assert_string_equal(bt_store_control_state_name(BT_STORE_CONTROL_QUEUED), "queued");

    /* finished once: a second finish changes nothing */
    assert_int_equal(bt_store_control_finish(f->s, id, BT_STORE_CONTROL_DONE, NULL), -EALREADY);
    assert_int_equal(bt_store_control_get(f->s, id, &c), 0);
    assert_int_equal(c.state, BT_STORE_CONTROL_QUEUED);
    bt_store_control_release(&c);
    assert_int_equal(bt_store_control_finish(f->s, id + 100, BT_STORE_CONTROL_DONE, NULL),
                     BT_ENOTFOUND);
    assert_int_equal(bt_store_control_get(f->s, id + 100, &c), BT_ENOTFOUND);
    int64_t other = add(f, "cancel", NULL); /* NULL body: {} */
    assert_int_equal(bt_store_control_finish(f->s, other, BT_STORE_CONTROL_PENDING, NULL), -EINVAL);
    assert_int_equal(bt_store_control_get(f->s, other, &c), 0);
    assert_string_equal(c.body, "{}");
    assert_int_equal(c.state, BT_STORE_CONTROL_PENDING);
    bt_store_control_release(&c);
}

/* Bad input is refused with nothing stored; a run that ended or is not
 * the conversation's takes no request. */
static void test_add_refused(void **state)
{
    struct fixture *f = *state;
    int64_t id = 99;
    const char *bad_kinds[] = {"", "Steer", "ste er", "x;drop",
                               "a_very_long_kind_name_over_32_bytes"};
    for (size_t i = 0; i < BT_ARRAY_SIZE(bad_kinds); i++) {
        assert_int_equal(bt_store_control_add(f->s, f->conv, f->run, bad_kinds[i], "{}", &id),
                         -EINVAL);
        assert_int_equal(id, 0);
    }
    assert_int_equal(bt_store_control_add(f->s, f->conv, f->run, NULL, "{}", &id), -EINVAL);
    const char *bad_bodies[] = {"", "[1]", "\"text\"", "{\"a\":", "null"};
    for (size_t i = 0; i < BT_ARRAY_SIZE(bad_bodies); i++)
        assert_int_equal(bt_store_control_add(f->s, f->conv, f->run, "steer", bad_bodies[i], &id),
                         -EINVAL);
    char other[BT_ID_SIZE];
    struct bt_store_conversation_new c = {.coder = "pi", .cwd = "/src/q"};
    assert_int_equal(bt_store_conversation_create(f->s, &c, other), 0);
    assert_int_equal(bt_store_control_add(f->s, other, f->run, "steer", "{}", &id), BT_ENOTFOUND);
    assert_int_equal(bt_store_control_add(f->s, f->conv, "0000000000000000", "steer", "{}", &id),
                     BT_ENOTFOUND);
    struct seen w = {.n = 0};
    assert_int_equal(bt_store_control_pending(f->s, f->run, 0, seen_cb, &w), 0);
    assert_int_equal(w.n, 0);

    end_run(f, BT_STORE_RUN_COMPLETED);
    assert_int_equal(bt_store_control_add(f->s, f->conv, f->run, "steer", "{}", &id), -EALREADY);
    assert_non_null(strstr(bt_store_errmsg(f->s), "completed"));
    assert_int_equal(id, 0);
}

/* Every pending request once, in id order, past the read chunk; after_id
 * skips what was seen; the callback may finish its request through the
 * same handle, and a nonzero return stops the walk. */
static void test_pending_order(void **state)
{
    struct fixture *f = *state;
    int64_t ids[150];
    for (size_t i = 0; i < BT_ARRAY_SIZE(ids); i++)
        ids[i] = add(f, i % 2 ? "steer" : "decision", "{}");
    struct seen w = {.n = 0};
    assert_int_equal(bt_store_control_pending(f->s, f->run, 0, seen_cb, &w), 0);
    assert_int_equal(w.n, BT_ARRAY_SIZE(ids));
    for (size_t i = 0; i < w.n; i++) {
        assert_int_equal(w.ids[i], ids[i]);
        assert_string_equal(w.kinds[i], i % 2 ? "steer" : "decision");
    }
    struct seen after = {.n = 0};
    assert_int_equal(bt_store_control_pending(f->s, f->run, ids[99], seen_cb, &after), 0);
    assert_int_equal(after.n, 50);
    assert_int_equal(after.ids[0], ids[100]);

    struct seen stop = {.stop_at = ids[10], .finish = 1, .s = f->s};
    assert_int_equal(bt_store_control_pending(f->s, f->run, 0, seen_cb, &stop), 1);
    assert_int_equal(stop.n, 11);
    struct seen rest = {.n = 0};
    assert_int_equal(bt_store_control_pending(f->s, f->run, 0, seen_cb, &rest), 0);
    assert_int_equal(rest.n, BT_ARRAY_SIZE(ids) - 11); /* the finished ones are not pending */
    assert_int_equal(rest.ids[0], ids[11]);
    assert_int_equal(bt_store_control_pending(f->s, NULL, 0, seen_cb, &rest), -EINVAL);
}

/* baton cancel stores one pending cancel request with the run's cancel_ms,
 * in its transaction; a second cancel adds none while it waits. */
static void test_cancel_request(void **state)
{
    struct fixture *f = *state;
    struct bt_store_run r;
    assert_int_equal(bt_store_run_cancel(f->s, f->conv, &r), 0);
    assert_string_equal(r.id, f->run);
    bt_store_run_release(&r);
    assert_int_equal(bt_store_run_cancel(f->s, f->conv, &r), 0);
    bt_store_run_release(&r);
    struct seen w = {.n = 0};
    assert_int_equal(bt_store_control_pending(f->s, f->run, 0, seen_cb, &w), 0);
    assert_int_equal(w.n, 1);
    assert_string_equal(w.kinds[0], "cancel");
    int requested = 0;
    assert_int_equal(bt_store_run_cancel_requested(f->s, f->run, &requested), 0);
    assert_true(requested);
}

/* The requests an ended run left: not stranded while the run runs; then a
 * cancel of a run that ended cancelled is done, one that came too late and
 * every other kind refused, each with a reason; finished once. */
static void test_strand(void **state)
{
    struct fixture *f = *state;
    struct bt_store_run r;
    assert_int_equal(bt_store_run_cancel(f->s, f->conv, &r), 0);
    bt_store_run_release(&r);
    int64_t unknown = add(f, "frobnicate", "{}");
    assert_int_equal(bt_service_control_strand(f->s), 0);
    struct bt_store_control c;
    assert_int_equal(bt_store_control_get(f->s, unknown, &c), 0);
    assert_int_equal(c.state, BT_STORE_CONTROL_PENDING); /* its run still runs */
    bt_store_control_release(&c);

    end_run(f, BT_STORE_RUN_CANCELLED);
    assert_int_equal(bt_service_control_strand(f->s), 0);
    struct seen w = {.n = 0};
    assert_int_equal(bt_store_control_pending(f->s, f->run, 0, seen_cb, &w), 0);
    assert_int_equal(w.n, 0);
    assert_int_equal(bt_store_control_get(f->s, unknown - 1, &c), 0);
    assert_string_equal(c.kind, "cancel");
    assert_int_equal(c.state, BT_STORE_CONTROL_DONE);
    assert_int_equal(c.run_state, BT_STORE_RUN_CANCELLED);
    bt_store_control_release(&c);
    assert_int_equal(bt_store_control_get(f->s, unknown, &c), 0);
    assert_int_equal(c.state, BT_STORE_CONTROL_REFUSED);
    assert_non_null(strstr(c.result, "\"reason\""));
    bt_store_control_release(&c);

    /* a cancel that reached a run which then completed on its own */
    struct bt_store_run_new rn = {.conversation = f->conv, .coder = "pi"};
    int64_t msg = 0;
    assert_int_equal(bt_store_run_create(f->s, &rn, f->run, &msg), 0);
    assert_int_equal(bt_store_run_cancel(f->s, f->conv, &r), 0);
    bt_store_run_release(&r);
    end_run(f, BT_STORE_RUN_COMPLETED);
    assert_int_equal(bt_service_control_strand(f->s), 0);
    struct seen all = {.n = 0};
    assert_int_equal(bt_store_control_pending(f->s, f->run, 0, seen_cb, &all), 0);
    assert_int_equal(all.n, 0);
    assert_int_equal(bt_store_control_get(f->s, unknown + 1, &c), 0);
    assert_string_equal(c.kind, "cancel");
    assert_int_equal(c.state, BT_STORE_CONTROL_REFUSED);
    assert_string_equal(c.result, "{\"reason\":\"the turn had ended\"}");
    bt_store_control_release(&c);
}

/* A steer its turn never took becomes one queued message of its
 * conversation (the next turn sends it), in the transaction that finishes
 * it: once, whoever gets there first; a decision is refused. */
static void test_strand_steer_and_decision(void **state)
{
    struct fixture *f = *state;
    int64_t steer = add(f, "steer", "{\"text\":\"use the other file\"}");
    int64_t empty = add(f, "steer", "{}");
    int64_t decision = add(f, "decision", "{\"allow\":true}");
    end_run(f, BT_STORE_RUN_INTERRUPTED);
    assert_int_equal(bt_service_control_strand(f->s), 0);
    struct bt_store_control c;
    assert_int_equal(bt_store_control_get(f->s, steer, &c), 0);
    assert_int_equal(c.state, BT_STORE_CONTROL_QUEUED);
    assert_non_null(strstr(c.result, "\"queue_no\":1}"));
    bt_store_control_release(&c);
    assert_int_equal(bt_store_control_get(f->s, empty, &c), 0);
    assert_int_equal(c.state, BT_STORE_CONTROL_REFUSED);
    bt_store_control_release(&c);
    assert_int_equal(bt_store_control_get(f->s, decision, &c), 0);
    assert_int_equal(c.state, BT_STORE_CONTROL_REFUSED);
    assert_string_equal(c.result, "{\"reason\":\"the turn had ended\"}");
    bt_store_control_release(&c);
    int64_t n = 0;
    assert_int_equal(bt_store_queued_count(f->s, f->conv, &n), 0);
    assert_int_equal(n, 1);
    struct bt_store_message *m = NULL;
    size_t nm = 0;
    assert_int_equal(bt_store_message_list(f->s, f->conv, &m, &nm), 0);
    assert_string_equal(m[nm - 1].text, "use the other file");
    assert_int_equal(m[nm - 1].state, BT_STORE_MSG_QUEUED);
    bt_store_message_list_free(m, nm);
    /* a second claim of the same steer adds nothing */
    int64_t queue_no = 0;
    assert_int_equal(bt_store_control_queue(f->s, steer, "again", NULL, NULL, &queue_no),
                     -EALREADY);
    assert_int_equal(queue_no, 0);
    assert_int_equal(bt_store_queued_count(f->s, f->conv, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(bt_store_control_queue(f->s, steer + 100, "x", NULL, NULL, &queue_no),
                     BT_ENOTFOUND);
}

/* A conversation's requests go with it. */
static void test_removed_with_conversation(void **state)
{
    struct fixture *f = *state;
    int64_t id = add(f, "steer", "{}");
    end_run(f, BT_STORE_RUN_FAILED);
    struct bt_store_removal rm;
    assert_int_equal(bt_store_conversation_delete(f->s, f->conv, &rm), 0);
    bt_store_removal_release(&rm);
    struct bt_store_control c;
    assert_int_equal(bt_store_control_get(f->s, id, &c), BT_ENOTFOUND);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_add_get_finish, setup, teardown),
        cmocka_unit_test_setup_teardown(test_add_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pending_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cancel_request, setup, teardown),
        cmocka_unit_test_setup_teardown(test_strand, setup, teardown),
        cmocka_unit_test_setup_teardown(test_strand_steer_and_decision, setup, teardown),
        cmocka_unit_test_setup_teardown(test_removed_with_conversation, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
