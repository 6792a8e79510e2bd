/* SPDX-License-Identifier: MIT */
/*
 * integration tests of `baton steer` (and `send --steer`) through the baton
 * binary, with tests/fake-coder as codex and tests/fake-coder/fake-acp as
 * gemini (docs/events.md, turn.steered):
 *   - delivered: the replay is fixtures/codex/0.171.0/steer.jsonl, a real
 *     codex steer; the fake coder writes codex's answer to turn/steer only
 *     once baton sent it, so the turn cannot end before the steer came,
 *     whatever the timing. The steer is done, the stream holds
 *     turn.steered with its control, the turn's answer is the steer's, and
 *     `show` prints it in its turn;
 *   - refused by the coder: the same replay with an error answer to
 *     turn/steer: the steer is queued (exactly one message, sent as the
 *     next turn by the worker that takes the queue), never lost or twice;
 *   - no turn running: queued at once, numbered, said why;
 *   - a coder that cannot steer (an ACP agent), its turn running: queued
 *     at once, the turn untouched;
 *   - the turn's owner killed: the steer is queued once, by recovery's
 *     rule or at once.
 * The tests wait for the store to show the turn running, never for a time.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "harness.h"
#include "store.h"

#define FAKE_ACP BT_BINARY_DIR "/tests/fake-coder/fake-acp"
#define STEER_TEXT "steer-words-banana"
/* the answer to turn/steer in steer.jsonl (its line 17) */
#define STEER_ANSWER_LINE 17
#define STEER_REFUSED                                                                              \
    "{\"id\":100,\"error\":{\"code\":-32600,\"message\":\"no active turn to steer\"}}\n"

static void assert_has(const char *text, const char *what)
{
    if (!text || !strstr(text, what))
        fail_msg("expected '%s' in: %s", what, text ? text : "(nothing)");
}

/* Replay steer.jsonl, its answer to turn/steer replaced by answer when
 * not NULL, and log what baton writes to the coder. */
static void steer_replay(struct ctx *c, const char *answer)
{
    FILE *in = fopen(FIXTURES "/steer.jsonl", "r");
    char *path = path_in(c, "steer.jsonl");
    FILE *out = fopen(path, "w");
    assert_non_null(in);
    assert_non_null(out);
    static char line[1 << 16];
    for (int n = 1; fgets(line, sizeof(line), in); n++)
        fputs(n == STEER_ANSWER_LINE && answer ? answer : line, out);
    fclose(in);
    fclose(out);
    replay_logged(c, path);
    free(path);
}

/* The state of the only conversation's last run, and its id. */
struct last {
    char conv[BT_ID_SIZE];
    char run[BT_ID_SIZE];
    enum bt_store_run_state state;
    int64_t turn;
};

static int read_last(struct ctx *c, struct last *l)
{
    char *home = path_in(c, "home");
    struct bt_store *s = NULL;
    int found = 0;
    if (bt_store_open(home, &s, NULL) == 0) {
        struct bt_store_conversation *v = NULL;
        size_t n = 0;
        struct bt_store_run r;
        if (bt_store_conversation_list(s, 0, &v, &n) == 0 && n == 1 &&
            bt_store_run_last(s, v[0].id, &r) == 0) {
            memcpy(l->conv, v[0].id, BT_ID_SIZE);
            memcpy(l->run, r.id, BT_ID_SIZE);
            l->state = r.state;
            l->turn = r.turn;
            found = 1;
            bt_store_run_release(&r);
        }
        bt_store_conversation_list_free(v, n);
        bt_store_close(s);
    }
    free(home);
    return found;
}

/* Wait until the only conversation's run `turn` is running (>= 1) or has
 * ended (0 for running: any run not running). */
static void wait_run(struct ctx *c, int64_t turn, int running, struct last *l)
{
    for (int64_t t0 = 0; bt_test_poll(&t0);) {
        if (read_last(c, l) && l->turn == turn &&
            (running ? l->state == BT_STORE_RUN_RUNNING : l->state != BT_STORE_RUN_RUNNING))
            return;
    }
    bt_test_give_up("turn %lld never %s", (long long)turn, running ? "ran" : "ended");
}

/* `baton steer --json CONV text`, or with idle `send --steer --json
 * --idle-timeout IDLE CONV text`: its one JSON object (caller frees). */
static cJSON *steer_idle(struct ctx *c, const char *conv, const char *text, const char *idle)
{
    struct bt_test_result res;
    if (idle)
        baton(c, &res, NULL, 0, "send", "--steer", "--json", "--idle-timeout", idle, conv, text,
              END);
    else
        baton(c, &res, NULL, 0, "steer", "--json", conv, text, END);
    if (res.exit_code != 0)
        fail_msg("steer exited %d: %s", res.exit_code, res.err.data);
    cJSON *j = cJSON_Parse(res.out.data);
    assert_non_null(j);
    bt_test_result_release(&res);
    return j;
}

static cJSON *steer(struct ctx *c, const char *conv, const char *text)
{
    return steer_idle(c, conv, text, NULL);
}

static const char *str(const cJSON *j, const char *key)
{
    return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, key));
}

static double num(const cJSON *j, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
    return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

/* How many messages of the conversation hold text, and how many of them
 * are queued (show --json). */
static void count_text(struct ctx *c, const char *conv, const char *text, int *all, int *queued)
{
    struct bt_test_result res;
    baton(c, &res, NULL, 0, "show", "--json", conv, END);
    assert_int_equal(res.exit_code, 0);
    *all = *queued = 0;
    for (char *line = res.out.data, *nl; line && *line; line = nl ? nl + 1 : NULL) {
        nl = strchr(line, '\n');
        cJSON *j = cJSON_ParseWithLength(line, nl ? (size_t)(nl - line) : strlen(line));
        const cJSON *m;
        cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(j, "messages"))
        {
            const char *t = str(m, "text");
            if (t && strcmp(t, text) == 0) {
                (*all)++;
                *queued += str(m, "state") && strcmp(str(m, "state"), "queued") == 0;
            }
        }
        cJSON_Delete(j);
    }
    bt_test_result_release(&res);
}

/* The steer goes into the running turn: done, turn.steered with its
 * control in the stream, the steer's answer the turn's, shown in its turn. */
static void test_steer_delivered(void **state)
{
    struct ctx *c = *state;
    steer_replay(c, NULL);
    pid_t pid = baton_bg(c, "out", "run", "--json", "first [[slow:25]]", END);
    struct last l;
    wait_run(c, 1, 1, &l);
    cJSON *j = steer(c, l.conv, STEER_TEXT);
    assert_string_equal(str(j, "state"), "done");
    assert_string_equal(str(j, "run"), l.run);
    assert_true(num(j, "control") >= 1);
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(j, "queue_no")));
    char *control = bt_xasprintf("\"control\":%d", (int)num(j, "control"));
    cJSON_Delete(j);
    assert_int_equal(wait_exit(pid), 0);
    char *path = path_in(c, "out");
    char *out = bt_test_slurp(path, NULL);
    assert_has(out, "\"type\":\"turn.steered\"");
    assert_has(strstr(out, "\"type\":\"turn.steered\""), "\"text\":\"" STEER_TEXT "\"");
    assert_has(strstr(out, "\"type\":\"turn.steered\""), control);
    assert_has(out, "\"final_text\":\"Hello! You said: " STEER_TEXT "\"");
    /* what baton wrote: turn/steer with the turn codex named */
    char *log = path_in(c, "stdin.log");
    char *in = bt_test_slurp(log, NULL);
    assert_has(in, "\"method\":\"turn/steer\"");
    assert_has(in, "\"expectedTurnId\":\"01a24ea4-92c1-76b0-a525-fd2fcdc9cd2d\"");
    assert_null(strstr(strstr(in, "turn/steer") + 1, "turn/steer")); /* once */
    /* show: the steer in its turn, before the answer; not queued */
    struct bt_test_result res;
    baton(c, &res, NULL, 0, "show", l.conv, END);
    assert_has(res.out.data, "you (into the running turn):\n" STEER_TEXT);
    assert_true(strstr(res.out.data, STEER_TEXT) < strstr(res.out.data, "Hello! You said"));
    assert_null(strstr(res.out.data, "queued"));
    bt_test_result_release(&res);
    free(in);
    free(log);
    free(out);
    free(path);
    free(control);
}

/* codex refuses the steer: it waits queued (said why), exactly once, and
 * the worker that takes the queue after the turn sends it as turn 2, with
 * the steer's sender's settings (its idle timeout ends that turn: the
 * replay waits there for a steer that never comes). */
static void test_steer_refused_queued_once(void **state)
{
    struct ctx *c = *state;
    steer_replay(c, STEER_REFUSED);
    pid_t pid = baton_bg(c, "out", "run", "--json", "first [[slow:25]]", END);
    struct last l;
    wait_run(c, 1, 1, &l);
    cJSON *j = steer_idle(c, l.conv, STEER_TEXT, "1");
    assert_string_equal(str(j, "state"), "queued");
    assert_int_equal((int)num(j, "queue_no"), 1);
    assert_has(str(j, "reason"), "no active turn to steer");
    cJSON_Delete(j);
    assert_int_equal(wait_exit(pid), 0);
    char *path = path_in(c, "out");
    char *out = bt_test_slurp(path, NULL);
    assert_null(strstr(out, "turn.steered"));
    int all, queued;
    wait_run(c, 2, 0, &l); /* the worker sent the queue as turn 2 */
    count_text(c, l.conv, STEER_TEXT, &all, &queued);
    assert_int_equal(all, 1);
    assert_int_equal(queued, 0);
    free(out);
    free(path);
}

/* A steer as large as a prompt may be, of characters JSON escapes six
 * times over (U+0001 as \\u0001): stored for the running turn like any
 * other, not refused for its request's size, and, refused by codex,
 * queued once, whole. */
static void test_steer_large_text(void **state)
{
    struct ctx *c = *state;
    steer_replay(c, STEER_REFUSED);
    pid_t pid = baton_bg(c, "out", "run", "--json", "first [[slow:25]]", END);
    struct last l;
    wait_run(c, 1, 1, &l);
    size_t n = (size_t)3 << 20; /* 18 MiB escaped: past 16 MiB */
    char *text = bt_xmalloc(n + 1);
    memset(text, '\x01', n);
    text[0] = 'a';
    text[n - 1] = 'z';
    text[n] = '\0';
    struct bt_test_result res;
    baton(c, &res, text, 0, "send", "--steer", "--json", "--idle-timeout", "1", l.conv, "-", END);
    if (res.exit_code != 0)
        fail_msg("steer exited %d: %s", res.exit_code, res.err.data);
    cJSON *j = cJSON_Parse(res.out.data);
    /* send waits 5 s for the owner's answer; an owner under memcheck
     * needs longer to carry 18 MiB, and the steer is then still pending:
     * its outcome is held below, by what turn 2 was sent */
    if (strcmp(str(j, "state"), "pending") != 0) {
        assert_string_equal(str(j, "state"), "queued");
        assert_has(str(j, "reason"), "no active turn to steer");
    }
    cJSON_Delete(j);
    bt_test_result_release(&res);
    assert_int_equal(wait_exit(pid), 0);
    int all, queued;
    wait_run(c, 2, 0, &l); /* the worker sent the queue as turn 2 */
    count_text(c, l.conv, text, &all, &queued);
    assert_int_equal(all, 1);
    assert_int_equal(queued, 0);
    free(text);
}

/* No turn runs: queued at once, numbered, the reason said. */
static void test_steer_without_turn(void **state)
{
    struct ctx *c = *state;
    replay(c, "text");
    struct bt_test_result res;
    baton(c, &res, NULL, 0, "run", "--json", "hello", END);
    assert_int_equal(res.exit_code, 0);
    bt_test_result_release(&res);
    struct last l;
    assert_true(read_last(c, &l));
    cJSON *j = steer(c, l.conv, STEER_TEXT);
    assert_string_equal(str(j, "state"), "queued");
    assert_int_equal((int)num(j, "queue_no"), 1);
    assert_string_equal(str(j, "reason"), "no turn was running");
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(j, "control")));
    cJSON_Delete(j);
    /* send --steer is the same command; the human words say where it went */
    baton(c, &res, NULL, 0, "send", "--steer", l.conv, "second", END);
    assert_int_equal(res.exit_code, 0);
    assert_has(res.err.data, "not steered (no turn was running): queued as #2");
    bt_test_result_release(&res);
    int all, queued;
    count_text(c, l.conv, STEER_TEXT, &all, &queued);
    assert_int_equal(all, 1);
    assert_int_equal(queued, 1);
    /* bad text: a usage error, nothing stored */
    baton(c, &res, NULL, 0, "steer", l.conv, "  ", END);
    assert_int_equal(res.exit_code, 2);
    bt_test_result_release(&res);
    count_text(c, l.conv, "  ", &all, &queued);
    assert_int_equal(all, 0);
}

/* gemini (ACP) cannot steer: a steer while its turn runs is queued at once
 * and the turn goes on untouched. */
static void test_steer_acp_queued(void **state)
{
    struct ctx *c = *state;
    setenv_kv(c, "BATON_GEMINI_BIN=" FAKE_ACP);
    pid_t pid = baton_bg(c, "out", "run", "-c", "gemini", "--json", "[cancel] wait", END);
    struct last l;
    wait_run(c, 1, 1, &l);
    cJSON *j = steer(c, l.conv, STEER_TEXT);
    assert_string_equal(str(j, "state"), "queued");
    assert_string_equal(str(j, "reason"), "gemini cannot steer a running turn");
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(j, "control")));
    cJSON_Delete(j);
    struct bt_test_result res;
    baton(c, &res, NULL, 0, "cancel", l.conv, END);
    assert_int_equal(res.exit_code, 0);
    bt_test_result_release(&res);
    assert_int_equal(wait_exit(pid), 130);
    int all, queued;
    count_text(c, l.conv, STEER_TEXT, &all, &queued);
    assert_int_equal(all, 1);
    assert_int_equal(queued, 1);
}

/* The turn's owner dies (SIGKILL) before it delivered anything: the steer
 * is never lost. Whether it finds the run still running (stored, then
 * finished by recovery's rule) or recovered first (queued at once), the
 * text ends up queued exactly once. */
static void test_steer_dead_owner(void **state)
{
    struct ctx *c = *state;
    steer_replay(c, NULL);
    pid_t pid = baton_bg(c, "out", "run", "--json", "first [[slow:25]]", END);
    struct last l;
    wait_run(c, 1, 1, &l);
    assert_int_equal(kill(pid, SIGKILL), 0);
    assert_int_equal(wait_exit(pid), 128 + SIGKILL);
    cJSON *j = steer(c, l.conv, STEER_TEXT);
    const char *st = str(j, "state");
    assert_true(strcmp(st, "queued") == 0 || strcmp(st, "pending") == 0);
    cJSON_Delete(j);
    struct bt_test_result res;
    baton(c, &res, NULL, 0, "ls", END); /* recovery, whoever runs it */
    assert_int_equal(res.exit_code, 0);
    bt_test_result_release(&res);
    wait_run(c, 1, 0, &l);
    int all, queued;
    count_text(c, l.conv, STEER_TEXT, &all, &queued);
    assert_int_equal(all, 1);
    assert_int_equal(queued, 1);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_steer_delivered),  T(test_steer_refused_queued_once), T(test_steer_without_turn),
        T(test_steer_acp_queued), T(test_steer_dead_owner),          T(test_steer_large_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
