/* SPDX-License-Identifier: MIT */
/*
 * unit-turn-batch: the turn engine's points to commit (turn.h on_batch),
 * on a real loop with tests/fake-coder as claude. Its caller commits the
 * store's open batch there, and an open batch holds the store's write
 * lock, so no event may wait for the coder without one: not turn.started,
 * not one a timer emitted (a steer claude takes at once, while the coder
 * is quiet), which the next tick must find committed (before the loop
 * waits, or at the end of the pass: a slow machine, valgrind, runs the
 * tick again at the start of the next pass); and none is left when
 * on_end runs (it may read a large working tree).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmocka.h>

#include "coder.h"
#include "event.h"
#include "turn.h"

#define FAKE_CODER BT_BINARY_DIR "/tests/fake-coder/fake-coder"
#define FIXTURE BT_SOURCE_DIR "/fixtures/claude/2.1.332/text.jsonl"

struct rec {
    struct bt_turn *turn;
    int unbatched;     /* events since the last on_batch */
    int events;        /* all of them */
    int worst_at_tick; /* the most unbatched events a tick found */
    int steer_rc;      /* bt_turn_steer's, once sent */
    int steer_sent;
    int steered;         /* turn.steered events */
    int at_end;          /* unbatched events when on_end ran; -1 before */
    int steered_at_tick; /* ticks that found the steer's event since */
    const char *go;      /* FAKE_CODER_PAUSE_FILE: made once the steer was checked */
};

static void on_event(void *data, const struct bt_event *ev, const char *json, size_t len)
{
    struct rec *r = data;
    (void)json;
    (void)len;
    r->unbatched++;
    r->events++;
    r->steered += ev->type == BT_EVENT_TURN_STEERED;
}

static void on_batch(void *data)
{
    struct rec *r = data;
    r->unbatched = 0;
}

/* A timer's callback, as the owner's channel is: it finds every event of
 * the passes before committed. It steers once while the coder is quiet,
 * which claude takes at once (turn.steered, emitted here and in no read
 * of the coder's output), and lets the coder go on three ticks later. */
static int on_tick(void *data)
{
    struct rec *r = data;
    if (r->unbatched > r->worst_at_tick)
        r->worst_at_tick = r->unbatched;
    if (r->steer_sent && r->steered && ++r->steered_at_tick == 3) {
        FILE *f = fopen(r->go, "w"); /* the coder goes on */
        assert_non_null(f);
        fclose(f);
    }
    if (!r->steer_sent && r->events >= 3 && r->turn) {
        r->steer_sent = 1;
        r->steer_rc = bt_turn_steer(r->turn, 1, "and one more thing");
    }
    return 0;
}

static void on_loop(void *data, struct bt_turn *t)
{
    ((struct rec *)data)->turn = t;
}

static void on_loop_end(void *data, struct bt_turn *t)
{
    (void)t;
    ((struct rec *)data)->turn = NULL;
}

static char *on_end(void *data)
{
    struct rec *r = data;
    r->at_end = r->unbatched;
    return NULL;
}

static void test_no_event_left_open(void **state)
{
    (void)state;
    const struct bt_coder *claude = bt_coder_find("claude");
    assert_non_null(claude);
    /* the coder says nothing after its first delta until the file exists */
    char dir[] = "/tmp/unit-turn-batch-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char go[sizeof dir + 8], pause[sizeof go + 32];
    snprintf(go, sizeof go, "%s/go", dir);
    snprintf(pause, sizeof pause, "FAKE_CODER_PAUSE_FILE=%s", go);
    char *const env[] = {"FAKE_CODER_REPLAY=" FIXTURE, "FAKE_CODER_PAUSE_AFTER=5", pause, NULL};
    struct rec r = {.at_end = -1, .go = go};
    struct bt_turn_options o = {
        .coder = claude,
        .bin = FAKE_CODER,
        .env = env,
        .cfg = {.prompt = "Say hi",
                .cwd = BT_BINARY_DIR,
                .approval = BT_APPROVAL_DENY,
                .native_session_id = "00000000-0000-4000-8000-000000000001"},
        .run_id = "batch-run",
        .conversation_id = "batch-conv",
        .timeout_ms = 30000,
        .on_event = on_event,
        .on_batch = on_batch,
        .on_tick = on_tick,
        .tick_ms = 1,
        .on_loop = on_loop,
        .on_loop_end = on_loop_end,
        .on_end = on_end,
        .data = &r,
    };
    struct bt_turn_result res;
    assert_int_equal(bt_turn_run(&o, &res), 0);
    bt_turn_result_release(&res);
    unlink(go);
    rmdir(dir);
    assert_true(r.steer_sent);
    assert_int_equal(r.steer_rc, 0);
    assert_int_equal(r.steered, 1);
    assert_true(r.steered_at_tick >= 3); /* ticks came after it: it was checked */
    assert_int_equal(r.worst_at_tick, 0);
    assert_int_equal(r.at_end, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_event_left_open),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
