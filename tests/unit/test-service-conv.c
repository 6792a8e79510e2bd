/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the conversation operations every front end shares
 * (src/service-conv.h): what a cancel, a take back, a created
 * conversation and a worker's report line come back as (result and
 * sentence), on a real store in a scratch directory. The CLI, the API and
 * `baton acp` only say these results their way (tests/serve/test_api.py
 * compares two of them through the binaries).
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
#include "id.h"
#include "service-conv.h"
#include "store.h"
#include "unit-fs.h"
#include "util.h"

struct fixture {
    char dir[64];
    struct bt_store *s;
    char conv[BT_ID_SIZE];
};

static int setup(void **state)
{
    struct fixture *f = bt_xcalloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "%s", "/tmp/bt-svc-XXXXXX");
    if (!mkdtemp(f->dir))
        return -1;
    char *home = bt_xasprintf("%s/home", f->dir);
    int rc = bt_store_open(home, &f->s, NULL);
    free(home);
    struct bt_store_conversation_new o = {.coder = "codex", .cwd = "/src/p", .title = "t"};
    if (rc == 0)
        rc = bt_store_conversation_create(f->s, &o, f->conv);
    *state = f;
    return rc;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    bt_store_close(f->s);
    bt_unit_rm_rf(f->dir);
    free(f);
    return 0;
}

static int64_t queue(struct fixture *f, const char *text)
{
    struct bt_store_message_new m = {.conversation = f->conv,
                                     .role = BT_STORE_ROLE_USER,
                                     .state = BT_STORE_MSG_QUEUED,
                                     .text = text};
    int64_t id = 0;
    assert_int_equal(bt_store_message_add(f->s, &m, &id), 0);
    return id;
}

static void test_cancel(void **state)
{
    struct fixture *f = *state;
    struct bt_service_outcome o = {0};
    /* nothing runs: refused as asked, the sentence every front end says */
    assert_int_equal(bt_service_cancel(f->s, f->conv, &o), BT_ENOTFOUND);
    assert_int_equal(o.result, BT_SERVICE_USAGE);
    char *want = bt_xasprintf("no turn of %s is running: nothing to cancel", f->conv);
    assert_string_equal(o.message, want);
    free(want);
    free(o.message);
    /* a running run: the request is stored first, the run named */
    struct bt_store_run_new rn = {.conversation = f->conv, .coder = "codex", .prompt = "p"};
    char run[BT_ID_SIZE];
    int64_t msg;
    assert_int_equal(bt_store_run_create(f->s, &rn, run, &msg), 0);
    o = (struct bt_service_outcome){0};
    assert_int_equal(bt_service_cancel(f->s, f->conv, &o), 0);
    assert_int_equal(o.result, BT_SERVICE_OK);
    assert_null(o.message);
    assert_string_equal(o.run, run);
    assert_string_equal(o.conversation, f->conv);
    int requested = 0;
    assert_int_equal(bt_store_run_cancel_requested(f->s, run, &requested), 0);
    assert_int_equal(requested, 1);
}

static void test_unqueue(void **state)
{
    struct fixture *f = *state;
    queue(f, "first");
    queue(f, "second");
    struct bt_service_outcome o = {0};
    assert_int_equal(bt_service_unqueue(f->s, f->conv, 2, &o), 0);
    assert_int_equal(o.result, BT_SERVICE_OK);
    assert_int_equal(o.queue_no, 2);
    /* #2 is gone and never given again; #7 never was */
    int64_t again[] = {2, 7};
    for (size_t i = 0; i < BT_ARRAY_SIZE(again); i++) {
        o = (struct bt_service_outcome){0};
        assert_int_equal(bt_service_unqueue(f->s, f->conv, again[i], &o), BT_ENOTFOUND);
        assert_int_equal(o.result, BT_SERVICE_USAGE);
        assert_non_null(strstr(o.message, "#1")); /* what is queued now */
        free(o.message);
    }
    int64_t n = 0;
    assert_int_equal(bt_store_queued_count(f->s, f->conv, &n), 0);
    assert_int_equal(n, 1);
}

static void test_take_back(void **state)
{
    struct fixture *f = *state;
    int64_t msg = queue(f, "for a worker that never started");
    assert_int_equal(bt_service_take_back(f->s, f->conv, msg, 0), 0);
    int64_t n = -1;
    assert_int_equal(bt_store_queued_count(f->s, f->conv, &n), 0);
    assert_int_equal(n, 0);
    struct bt_store_conversation c = {0};
    assert_int_equal(bt_store_conversation_get(f->s, f->conv, &c), 0); /* kept: not created */
    bt_store_conversation_release(&c);
    /* the conversation made for the prompt goes with it when no run is there */
    msg = queue(f, "the first prompt of a new conversation");
    assert_int_equal(bt_service_take_back(f->s, f->conv, msg, 1), 0);
    assert_int_equal(bt_store_conversation_get(f->s, f->conv, &c), BT_ENOTFOUND);
    bt_store_conversation_release(&c);
}

static void test_create(void **state)
{
    struct fixture *f = *state;
    char id[BT_ID_SIZE];
    bt_id_new(id);
    struct bt_store_conversation_new cn = {.id = id, .coder = "nosuch", .cwd = "/src/p"};
    struct bt_service_outcome o = {0};
    assert_int_equal(bt_service_create(f->s, &cn, &o), -EINVAL);
    assert_int_equal(o.result, BT_SERVICE_USAGE);
    assert_string_equal(o.message, "no coder 'nosuch'");
    free(o.message);
    struct bt_store_conversation c = {0};
    assert_int_equal(bt_store_conversation_get(f->s, id, &c), BT_ENOTFOUND);
    bt_store_conversation_release(&c);
}

static void test_worker_line(void **state)
{
    (void)state;
    static const struct {
        const char *line;
        int rc;
        enum bt_service_result result;
        enum bt_error_kind kind;
        const char *message; /* NULL: none */
    } cases[] = {
        {"end 0 nothing was queued", 0, BT_SERVICE_OK, BT_ERROR_KIND_NONE, "nothing was queued"},
        {"end 2 a turn of X is running", -1, BT_SERVICE_USAGE, BT_ERROR_KIND_NONE,
         "a turn of X is running"},
        {"end 3 codex is not installed", -1, BT_SERVICE_NOT_INSTALLED, BT_ERROR_KIND_NONE,
         "codex is not installed"},
        {"end 4 log in first", -1, BT_SERVICE_FAILED, BT_ERROR_KIND_AUTH_REQUIRED, "log in first"},
        {"end 130 interrupted", -1, BT_SERVICE_CANCELLED, BT_ERROR_KIND_NONE, "interrupted"},
        {"end 1 the store failed", -1, BT_SERVICE_FAILED, BT_ERROR_KIND_NONE, "the store failed"},
    };
    for (size_t i = 0; i < BT_ARRAY_SIZE(cases); i++) {
        struct bt_service_outcome o = {0};
        assert_int_equal(bt_service_worker_line(cases[i].line, &o), cases[i].rc);
        assert_int_equal(o.result, cases[i].result);
        assert_int_equal(o.error_kind, cases[i].kind);
        assert_string_equal(o.message, cases[i].message);
        assert_string_equal(o.run, "");
        free(o.message);
    }
    char c[BT_ID_SIZE], r[BT_ID_SIZE];
    bt_id_new(c);
    bt_id_new(r);
    char *line = bt_xasprintf("run %s %s", c, r);
    struct bt_service_outcome o = {0};
    assert_int_equal(bt_service_worker_line(line, &o), 0);
    assert_int_equal(o.result, BT_SERVICE_OK);
    assert_string_equal(o.conversation, c);
    assert_string_equal(o.run, r);
    assert_null(o.message);
    free(line);
    /* a worker that died before it said anything, or said nonsense */
    const char *bad[] = {"", "run x y", "end", "end 2", "end 300 x", "hello"};
    for (size_t i = 0; i < BT_ARRAY_SIZE(bad); i++) {
        o = (struct bt_service_outcome){0};
        assert_int_equal(bt_service_worker_line(bad[i], &o), -1);
        assert_int_equal(o.result, BT_SERVICE_FAILED);
        assert_non_null(strstr(o.message, "the worker ended before it started the turn"));
        free(o.message);
    }
}

static void test_words(void **state)
{
    (void)state;
    enum bt_approval a = BT_APPROVAL_AUTO;
    assert_int_equal(bt_service_approval_parse("decline", &a), 0);
    assert_int_equal(a, BT_APPROVAL_DENY);
    assert_int_equal(bt_service_approval_parse("never", &a), 0);
    assert_string_equal(bt_service_approval_name(a), "never");
    assert_int_equal(bt_service_approval_parse("Auto", &a), -1);
    uint64_t ms = 7;
    assert_int_equal(bt_service_seconds_parse("1.5", &ms), 0);
    assert_int_equal(ms, 1500);
    assert_int_equal(bt_service_seconds_parse("0.0001", &ms), 0);
    assert_int_equal(ms, 1); /* a tiny limit never turns into none */
    const char *bad[] = {"", ".", "-1", "+1", " 1", "1e3", "0x10", "1.2.3", "10000001"};
    for (size_t i = 0; i < BT_ARRAY_SIZE(bad); i++)
        assert_int_equal(bt_service_seconds_parse(bad[i], &ms), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_cancel, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unqueue, setup, teardown),
        cmocka_unit_test_setup_teardown(test_take_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_create, setup, teardown),
        cmocka_unit_test(test_worker_line),
        cmocka_unit_test(test_words),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
