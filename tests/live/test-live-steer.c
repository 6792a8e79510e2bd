/* SPDX-License-Identifier: MIT */
/*
 * live-steer CODER (codex, pi, pi-1, claude): a steer reaches the model inside the same turn, with
 * the real CLI (codex, pi, claude) against the stand-in model. The turn
 * engine runs the coder directly (bt_turn_run): the first answer streams
 * slowly ([[slow:N]]), and at its first message delta the test steers the
 * turn (bt_turn_steer, from a timer on the turn's loop, as the run's owner
 * does). The stand-in echoes the last user message it is sent, so the
 * turn's own answer holding the steer's echo shows the model saw the steer
 * before that turn's last request; the steer is reported taken exactly
 * once, and the stream holds one turn.steered.
 *
 * test_steer_through_baton does the same through the baton binary: `run
 * --detach`, `baton steer` from another process, `attach`.
 *
 * Exits 77 (skipped) when the coder's BATON_TEST_<CODER>_BIN is not set.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "coder.h"
#include "live.h"
#include "turn.h"

#define STEER_TEXT "steer-marker-kumquat"
#define STEER_KEY 42

struct live_coder {
    const char *name;       /* as the test's argument names it */
    const char *coder;      /* baton's coder */
    const char *env_script; /* tests/live/<coder>-env.sh */
    const char *home;       /* its directory in the scratch root */
    const char *bin_var;    /* BATON_TEST_<CODER>_BIN */
    const char *baton_var;  /* BATON_<CODER>_BIN, where baton finds it */
    const char *model;      /* NULL: the coder's default */
};

static const struct live_coder coders[] = {
    {.name = "codex",
     .baton_var = "BATON_CODEX_BIN",
     .coder = "codex",
     .env_script = BT_SOURCE_DIR "/tests/live/codex-env.sh",
     .home = "codex-home",
     .bin_var = "BATON_TEST_CODEX_BIN"},
    {.name = "pi",
     .baton_var = "BATON_PI_BIN",
     .coder = "pi",
     .env_script = BT_SOURCE_DIR "/tests/live/pi-env.sh",
     .home = "pi-agent",
     .bin_var = "BATON_TEST_PI_BIN",
     .model = "baton-standin/baton-test"},
    /* pi 1.x (tests/scripts/install-pi.sh --v1): the same rpc steer */
    {.name = "pi-1",
     .baton_var = "BATON_PI_BIN",
     .coder = "pi",
     .env_script = BT_SOURCE_DIR "/tests/live/pi-env.sh",
     .home = "pi-agent",
     .bin_var = "BATON_TEST_PI1_BIN",
     .model = "baton-standin/baton-test"},
    {.name = "claude",
     .baton_var = "BATON_CLAUDE_BIN",
     .coder = "claude",
     .env_script = BT_SOURCE_DIR "/tests/live/claude-env.sh",
     .home = "claude-config",
     .bin_var = "BATON_TEST_CLAUDE_BIN"},
};

static const struct live_coder *lc;

/* What the turn's callbacks saw. */
struct seen {
    struct bt_turn *turn;
    uv_timer_t timer;
    int timer_on;
    int steer_rc;     /* bt_turn_steer's return */
    int steer_tried;  /* at the first message delta */
    int taken;        /* on_steer: taken count */
    int not_taken;    /* on_steer: not taken count */
    int64_t key_seen; /* on_steer's key */
    int steered_events;
    int64_t steered_control;
    char *steered_text;
};

static void steer_now(uv_timer_t *h)
{
    struct seen *s = h->data;
    s->steer_rc = bt_turn_steer(s->turn, STEER_KEY, STEER_TEXT);
}

static void on_event(void *data, const struct bt_event *ev, const char *json, size_t len)
{
    struct seen *s = data;
    (void)json;
    (void)len;
    if (ev->type == BT_EVENT_ITEM_DELTA && ev->item.kind == BT_ITEM_MESSAGE && !s->steer_tried) {
        s->steer_tried = 1;
        /* not from inside the engine's own event: from the loop, as the
         * owner's channel would */
        uv_timer_start(&s->timer, steer_now, 0, 0);
    }
    if (ev->type == BT_EVENT_TURN_STEERED) {
        s->steered_events++;
        s->steered_control = ev->control;
        free(s->steered_text);
        s->steered_text = bt_xstrdup(ev->steer_text ? ev->steer_text : "");
    }
}

static void on_loop(void *data, struct bt_turn *t)
{
    struct seen *s = data;
    s->turn = t;
    uv_timer_init(bt_turn_loop(t), &s->timer);
    s->timer.data = s;
    s->timer_on = 1;
}

static void on_loop_end(void *data, struct bt_turn *t)
{
    struct seen *s = data;
    (void)t;
    if (s->timer_on)
        uv_close((uv_handle_t *)&s->timer, NULL);
    s->timer_on = 0;
}

static void on_steer(void *data, int64_t key, int taken, const char *why)
{
    struct seen *s = data;
    (void)why;
    s->key_seen = key;
    if (taken)
        s->taken++;
    else
        s->not_taken++;
}

/* The process environment with the harness's lines over it. */
static void coder_env(struct bt_strv *env)
{
    extern char **environ;
    bt_strv_init(env);
    for (char **e = environ; *e; e++) {
        size_t n = strcspn(*e, "=");
        int shadowed = 0;
        for (size_t i = 0; bt_live.env[i]; i++)
            if (strncmp(bt_live.env[i], *e, n + 1) == 0)
                shadowed = 1;
        if (!shadowed)
            bt_strv_push(env, *e);
    }
    for (size_t i = 0; bt_live.env[i]; i++)
        bt_strv_push(env, bt_live.env[i]);
}

static void test_steer_reaches_model(void **state)
{
    (void)state;
    const struct bt_coder *coder = bt_coder_find(lc->coder);
    assert_non_null(coder);
    assert_non_null(coder->runner->steer);
    struct bt_strv env;
    coder_env(&env);
    struct seen s = {0};
    struct bt_turn_options o = {
        .coder = coder,
        .bin = getenv(lc->bin_var),
        .env = env.v,
        .cfg = {.prompt = "first answer [[slow:25]]",
                .model = lc->model,
                .cwd = bt_live.work,
                .approval = BT_APPROVAL_DENY},
        .run_id = "live-steer-run",
        .conversation_id = "live-steer-conv",
        .idle_timeout_ms = 60000,
        .on_event = on_event,
        .on_loop = on_loop,
        .on_loop_end = on_loop_end,
        .on_steer = on_steer,
        .data = &s,
    };
    char *path = NULL, *why = NULL;
    if (coder->runner->new_session_path) {
        /* claude and pi: the session file baton chooses, as a first turn's */
        assert_int_equal(coder->runner->new_session_path(&o.cfg, &path, &why), 0);
        o.cfg.native_session_path = path;
    }
    struct bt_turn_result res;
    assert_int_equal(bt_turn_run(&o, &res), 0);
    if (res.status != BT_TURN_COMPLETED)
        print_error("turn: %s: %s\n", bt_turn_status_name(res.status),
                    res.error_message ? res.error_message : "");
    assert_int_equal(res.status, BT_TURN_COMPLETED);
    assert_true(s.steer_tried);
    assert_int_equal(s.steer_rc, 0);
    /* taken once, never reported otherwise */
    assert_int_equal(s.taken, 1);
    assert_int_equal(s.not_taken, 0);
    assert_int_equal(s.key_seen, STEER_KEY);
    assert_int_equal(s.steered_events, 1);
    assert_int_equal(s.steered_control, STEER_KEY);
    assert_string_equal(s.steered_text, STEER_TEXT);
    /* the model answered the steer inside this turn: the stand-in echoes
     * the last user message of a request, and that echo is this turn's
     * answer, after the slow first answer */
    if (!strstr(res.final_text, "You said: " STEER_TEXT))
        print_error("final_text: %s\n", res.final_text);
    assert_non_null(strstr(res.final_text, "You said: " STEER_TEXT));
    size_t len;
    char *log = bt_test_slurp(bt_live.log, &len);
    assert_non_null(log);
    assert_non_null(strstr(log, STEER_TEXT));
    free(log);
    bt_turn_result_release(&res);
    free(s.steered_text);
    free(path);
    free(why);
    bt_strv_release(&env);
}

/* One JSON object of baton's stdout (args in the project directory,
 * exit 0); caller frees. */
static cJSON *baton_json(const char *const *args)
{
    struct bt_test_result res;
    bt_live_baton(bt_live.work, args, &res, 0);
    if (res.exit_code != 0)
        print_error("baton %s: exit %d: %s\n", args[0], res.exit_code, res.err.data);
    assert_int_equal(res.exit_code, 0);
    cJSON *j = cJSON_Parse(res.out.data);
    assert_non_null(j);
    bt_test_result_release(&res);
    return j;
}

/* 1 if the conversation's answer has begun streaming (show --json). */
static int streaming(const char *conv)
{
    const char *show[] = {"show", "--json", conv, NULL};
    cJSON *j = baton_json(show);
    int yes = 0;
    const cJSON *m;
    cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(j, "messages"))
    {
        const char *role = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "role"));
        const char *text = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "text"));
        yes |= role && strcmp(role, "assistant") == 0 && text && *text;
    }
    cJSON_Delete(j);
    return yes;
}

/* Through the binary, as a person does: `baton run --detach`, then
 * `baton steer` from another process while the answer streams: the steer
 * goes into that turn (turn.steered with its control, the steer's echo in
 * the turn's answer), nothing is queued. */
static void test_steer_through_baton(void **state)
{
    (void)state;
    const char *run[] = {"run", "-c", lc->coder, "--detach", "--json", "first answer [[slow:25]]",
                         NULL,  NULL, NULL};
    if (lc->model) {
        run[5] = "-m";
        run[6] = lc->model;
        run[7] = "first answer [[slow:25]]";
    }
    cJSON *started = baton_json(run);
    char *conv =
        bt_xstrdup(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(started, "conversation")));
    cJSON_Delete(started);
    int64_t t0 = 0;
    while (!streaming(conv) && bt_test_poll(&t0))
        ;
    assert_true(streaming(conv));
    const char *steer[] = {"steer", "--json", conv, STEER_TEXT "-cli", NULL};
    cJSON *st = baton_json(steer);
    const char *state_word = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(st, "state"));
    /* done, or pending while pi has not yet taken it in (it does before
     * its next model request, once the slow answer ends) */
    assert_true(strcmp(state_word, "done") == 0 || strcmp(state_word, "pending") == 0);
    int control = (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(st, "control"));
    assert_true(control >= 1);
    cJSON_Delete(st);
    const char *attach[] = {"attach", "--json", conv, NULL};
    cJSON **lines;
    size_t n = bt_live_json(bt_live.work, attach, 0, &lines);
    const cJSON *steered = bt_live_first(lines, n, "turn.steered");
    assert_non_null(steered);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(steered, "text")),
                        STEER_TEXT "-cli");
    assert_int_equal(
        (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(steered, "control")), control);
    const cJSON *end = lines[n - 1];
    assert_string_equal(bt_live_status(lines, n), "completed");
    assert_non_null(
        strstr(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(end, "final_text")),
               "You said: " STEER_TEXT "-cli"));
    bt_test_lines_free(lines, n);
    /* nothing queued: the steer went into the turn, once */
    const char *show[] = {"show", "--json", conv, NULL};
    cJSON *j = baton_json(show);
    const cJSON *m;
    cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(j, "messages"))
    {
        const char *mst = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "state"));
        assert_string_not_equal(mst ? mst : "", "queued");
    }
    cJSON_Delete(j);
    free(conv);
}

static int setup(void **state)
{
    (void)state;
    bt_live_setup("live-steer", lc->env_script, lc->home, lc->baton_var, getenv(lc->bin_var));
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    bt_live_teardown();
    return 0;
}

int main(int argc, char **argv)
{
    for (size_t i = 0; argc > 1 && i < BT_ARRAY_SIZE(coders); i++)
        if (strcmp(argv[1], coders[i].name) == 0)
            lc = &coders[i];
    if (!lc) {
        fprintf(stderr, "usage: live-steer codex|pi|pi-1|claude\n");
        return 2;
    }
    const char *bin = getenv(lc->bin_var);
    if (!bin || !*bin) {
        fprintf(stderr, "%s not set: live-steer %s skipped\n", lc->bin_var, lc->name);
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_steer_reaches_model, setup, teardown),
        cmocka_unit_test_setup_teardown(test_steer_through_baton, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
