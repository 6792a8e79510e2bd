/* SPDX-License-Identifier: MIT */
/*
 * live codex tests: the real codex CLI (pinned, from npm; path in
 * BATON_TEST_CODEX_BIN) driven by the real baton binary against the local
 * stand-in model endpoint (tests/standin). Without a codex binary the whole
 * program exits 77, which ctest reports as Skipped (never Passed).
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "live.h"

#define CODEX_ENV BT_SOURCE_DIR "/tests/live/codex-env.sh"

static int setup(void **state)
{
    (void)state;
    bt_live_setup("live-codex", CODEX_ENV, "codex-home", "BATON_CODEX_BIN",
                  getenv("BATON_TEST_CODEX_BIN"));
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    bt_live_teardown();
    return 0;
}

static void test_text_turn(void **state)
{
    (void)state;
    struct bt_test_result res;
    const char *args[] = {"run", "-c", "codex", "--json", "Say hello banana", NULL};
    bt_live_baton(bt_live.work, args, &res, 0);
    assert_int_equal(res.exit_code, 0);
    cJSON **lines;
    size_t n = bt_live_stream(res.out.data, &lines);
    assert_string_equal(bt_live_status(lines, n), "completed");
    size_t deltas = 0, completed_at = 0, usage_at = 0;
    for (size_t i = 0; i < n; i++) {
        const char *t = bt_live_type(lines[i]);
        if (strcmp(t, "item.delta") == 0 && strcmp(bt_live_item_kind(lines[i]), "message") == 0) {
            assert_int_equal(completed_at, 0);
            deltas++;
        } else if (strcmp(t, "item.completed") == 0 &&
                   strcmp(bt_live_item_kind(lines[i]), "message") == 0) {
            completed_at = i;
        } else if (strcmp(t, "usage") == 0) {
            usage_at = i;
            assert_true(cJSON_IsNumber(cJSON_GetObjectItem(lines[i], "input_tokens")));
            assert_true(cJSON_IsNumber(cJSON_GetObjectItem(lines[i], "output_tokens")));
            assert_true(cJSON_IsNumber(cJSON_GetObjectItem(lines[i], "context_window")));
        }
    }
    assert_true(deltas > 0);
    assert_true(completed_at > 0);
    assert_true(usage_at > 0);
    assert_non_null(strstr(bt_test_jstr(lines[n - 1], "final_text"), "Say hello banana"));
    bt_test_lines_free(lines, n);
    bt_test_result_release(&res);
}

static void test_send_resumes_thread(void **state)
{
    (void)state;
    struct bt_test_result res;
    const char *run[] = {"run", "--json", "Remember the word kumquat", NULL};
    bt_live_baton(bt_live.work, run, &res, 0);
    assert_int_equal(res.exit_code, 0);
    cJSON **lines;
    size_t n = bt_live_stream(res.out.data, &lines);
    char *conv = bt_xstrdup(bt_test_jstr(lines[0], "conversation"));
    bt_test_lines_free(lines, n);
    bt_test_result_release(&res);

    n = bt_live_send(conv, "And again?", 0, &lines);
    assert_string_equal(bt_live_status(lines, n), "completed");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(lines[0], "resumed")));
    bt_test_lines_free(lines, n);
    char *req = bt_live_last_request();
    assert_non_null(strstr(req, "Remember the word kumquat"));
    assert_non_null(strstr(req, "And again?"));
    free(req);

    const char *show[] = {"show", "--json", conv, NULL};
    bt_live_baton(bt_live.other, show, &res, 0);
    assert_int_equal(res.exit_code, 0);
    cJSON *doc = cJSON_Parse(res.out.data);
    assert_non_null(doc);
    cJSON *msgs = cJSON_GetObjectItem(doc, "messages");
    assert_int_equal(cJSON_GetArraySize(msgs), 4);
    const char *roles[] = {"user", "assistant", "user", "assistant"};
    for (int i = 0; i < 4; i++) {
        cJSON *m = cJSON_GetArrayItem(msgs, i);
        assert_string_equal(bt_test_jstr(m, "role"), roles[i]);
        assert_string_equal(bt_test_jstr(m, "state"), "complete");
    }
    assert_string_equal(bt_test_jstr(cJSON_GetArrayItem(msgs, 0), "text"),
                        "Remember the word kumquat");
    assert_string_equal(bt_test_jstr(cJSON_GetArrayItem(msgs, 2), "text"), "And again?");
    assert_non_null(strstr(bt_test_jstr(cJSON_GetArrayItem(msgs, 3), "text"), "And again?"));
    cJSON_Delete(doc);
    bt_test_result_release(&res);
    free(conv);
}

/* `run --detach` returns with the conversation id while the turn goes on in
 * a detached worker; `baton attach` from another process and directory
 * shows the whole turn from seq 1 and exits 0. */
static void test_detach_then_attach(void **state)
{
    (void)state;
    struct bt_test_result res;
    const char *run[] = {"run", "--detach", "Say detached papaya", NULL};
    bt_live_baton(bt_live.work, run, &res, 0);
    assert_int_equal(res.exit_code, 0);
    char conv[64] = "";
    assert_int_equal(sscanf(res.out.data, "%63s", conv), 1);
    assert_non_null(strstr(res.err.data, "baton attach"));
    bt_test_result_release(&res);

    const char *attach[] = {"attach", "--json", conv, NULL};
    bt_live_baton(bt_live.other, attach, &res, 0);
    assert_int_equal(res.exit_code, 0);
    cJSON **lines;
    size_t n = bt_live_stream(res.out.data, &lines); /* seq 1..n, started first, one end */
    assert_int_equal(cJSON_GetObjectItem(lines[0], "seq")->valueint, 1);
    assert_string_equal(bt_test_jstr(lines[0], "conversation"), conv);
    assert_string_equal(bt_live_status(lines, n), "completed");
    assert_non_null(strstr(bt_test_jstr(lines[n - 1], "final_text"), "Say detached papaya"));
    bt_test_lines_free(lines, n);
    bt_test_result_release(&res);
}

/* Handoff to codex's own terminal UI in tmux: `codex resume THREAD`. */
static void test_handoff_tmux(void **state)
{
    (void)state;
    const char *ready[] = {"baton-test default", NULL}; /* the model line of the composer */
    bt_live_handoff_scenario(NULL, ready);
}

static void test_shell_auto(void **state)
{
    (void)state;
    struct bt_test_result res;
    const char *args[] = {"run", "--json", "--approval", "auto", "[[shell:echo baton-ok]]", NULL};
    bt_live_baton(bt_live.work, args, &res, 0);
    assert_int_equal(res.exit_code, 0);
    cJSON **lines;
    size_t n = bt_live_stream(res.out.data, &lines);
    assert_string_equal(bt_live_status(lines, n), "completed");
    const cJSON *item = bt_live_command_item(lines, n);
    assert_non_null(item);
    assert_string_equal(bt_test_jstr(item, "status"), "completed");
    assert_non_null(strstr(bt_test_jstr(item, "text"), "baton-ok"));
    assert_int_equal(cJSON_GetObjectItem(item, "exit_code")->valueint, 0);
    bt_test_lines_free(lines, n);
    bt_test_result_release(&res);
}

/* A turn in its own worktree writes a file; two at once; keep one. */
static void test_worktree(void **state)
{
    (void)state;
    static const char *const fan[] = {"-c", "codex,codex", NULL};
    bt_live_worktree_scenario(NULL, fan);
}

static void test_shell_declined_by_default(void **state)
{
    (void)state;
    struct bt_test_result res;
    const char *args[] = {"run", "--json", "[[shell:echo baton-ok]]", NULL};
    bt_live_baton(bt_live.work, args, &res, 0);
    assert_int_equal(res.exit_code, 0);
    cJSON **lines;
    size_t n = bt_live_stream(res.out.data, &lines);
    assert_string_equal(bt_live_status(lines, n), "completed");
    int requested = 0, declined = 0;
    for (size_t i = 0; i < n; i++) {
        requested += strcmp(bt_live_type(lines[i]), "approval.requested") == 0;
        if (strcmp(bt_live_type(lines[i]), "approval.resolved") == 0) {
            assert_string_equal(bt_test_jstr(lines[i], "decision"), "decline");
            declined++;
        }
    }
    assert_int_equal(requested, 1);
    assert_int_equal(declined, 1);
    const cJSON *item = bt_live_command_item(lines, n);
    assert_non_null(item);
    assert_string_equal(bt_test_jstr(item, "status"), "declined");
    bt_test_lines_free(lines, n);
    bt_test_result_release(&res);
}

/* SIGINT mid-stream: cancelled within 2 s with the partial text, no codex
 * process left. */
static void test_interrupt_keeps_partial_text(void **state)
{
    (void)state;
    const char *opts[] = {"-c", "codex", NULL};
    bt_live_interrupt_scenario(opts);
}

static void test_http_500_fails(void **state)
{
    (void)state;
    struct bt_test_result res;
    const char *args[] = {"run", "--json", "[[http500]]", NULL};
    bt_live_baton(bt_live.work, args, &res, 0);
    assert_int_equal(res.exit_code, 1);
    cJSON **lines;
    size_t n = bt_live_stream(res.out.data, &lines);
    assert_string_equal(bt_live_status(lines, n), "failed");
    assert_string_equal(bt_live_type(lines[n - 2]), "error");
    assert_non_null(bt_test_jstr(lines[n - 2], "message"));
    bt_test_lines_free(lines, n);
    bt_test_result_release(&res);
}

/* The BATON_CODEX_BIN entry of the harness's environment. */
static char **bin_entry(void)
{
    for (size_t i = 0; bt_live.env[i]; i++)
        if (strncmp(bt_live.env[i], "BATON_CODEX_BIN=", 16) == 0)
            return &bt_live.env[i];
    fail_msg("no BATON_CODEX_BIN in the live environment");
    return NULL;
}

/* The coder found is npm's launcher (`node_modules/.bin/codex` of the same
 * install): baton runs the native binary behind it, says so in `coders`,
 * and the turn completes; its version comes from codex's own answer. */
/* What the codex binary says it is (`codex --version`: "codex-cli
 * 0.171.0"): the last word, so the test holds for any codex the drift
 * check runs it on. Owned. */
static char *version_of(const char *bin)
{
    const char *argv[] = {bin, "--version", NULL};
    struct bt_test_run r = {.argv = argv, .timeout_s = 30};
    struct bt_test_result res;
    assert_int_equal(bt_test_exec(&r, &res), 0);
    assert_int_equal(res.exit_code, 0);
    char *line = res.out.data ? res.out.data : "";
    line[strcspn(line, "\r\n")] = '\0';
    const char *sp = strrchr(line, ' ');
    char *v = bt_xstrdup(sp ? sp + 1 : line);
    bt_test_result_release(&res);
    return v;
}

static void test_npm_launcher_seen_through(void **state)
{
    (void)state;
    const char *native = getenv("BATON_TEST_CODEX_BIN"); /* main checked it */
    if (!native)
        native = "";
    const char *nm = strstr(native, "/node_modules/");
    assert_non_null(nm);
    char *launcher = bt_xasprintf("%.*s/node_modules/.bin/codex", (int)(nm - native), native);
    assert_int_equal(access(launcher, X_OK), 0);
    char **entry = bin_entry();
    char *saved = *entry;
    *entry = bt_xasprintf("BATON_CODEX_BIN=%s", launcher);

    struct bt_test_result res;
    const char *coders[] = {"coders", "--json", NULL};
    bt_live_baton(bt_live.work, coders, &res, 0);
    assert_int_equal(res.exit_code, 0);
    cJSON **lines;
    size_t n = bt_test_json_lines(res.out.data, &lines);
    char *real = realpath(native, NULL);
    assert_string_equal(bt_test_jstr(lines[0], "path"), real);
    const char *via = bt_test_jstr(lines[0], "launcher");
    assert_non_null(via);
    assert_non_null(strstr(via, "/@openai/codex/bin/codex.js"));
    char *version = version_of(native);
    assert_string_equal(bt_test_jstr(lines[0], "version"), version);
    bt_test_lines_free(lines, n);
    bt_test_result_release(&res);

    const char *run[] = {"run", "--json", "Say hello through the launcher", NULL};
    bt_live_baton(bt_live.work, run, &res, 0);
    assert_int_equal(res.exit_code, 0);
    n = bt_live_stream(res.out.data, &lines);
    assert_string_equal(bt_live_status(lines, n), "completed");
    const char *v = bt_test_jstr(lines[0], "coder_version");
    /* known from an earlier test's turn of the same binary */
    assert_true(v == NULL || strcmp(v, version) == 0);
    free(version);
    bt_test_lines_free(lines, n);
    bt_test_result_release(&res);

    free(*entry);
    *entry = saved;
    free(real);
    free(launcher);
}

/* codex at a port where nothing listens retries for ever ("Reconnecting...
 * waiting for network"); the notices are not progress, so the idle timeout
 * ends the turn as a network error with codex's reason. 6 s: its first
 * notice must come before that, and under ASan on a loaded machine codex
 * took over 2 s to get there. */
static void test_unreachable_endpoint(void **state)
{
    (void)state;
    const char *opts[] = {"-c", "codex", NULL};
    bt_live_unreachable_scenario(CODEX_ENV, opts, "6", "Reconnecting... waiting for network");
}

int main(void)
{
    const char *bin = getenv("BATON_TEST_CODEX_BIN");
    if (!bin || !*bin || access(bin, X_OK) != 0) {
        printf("skipped: BATON_TEST_CODEX_BIN does not name a codex binary "
               "(tests/scripts/test.sh installs the pinned one)\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text_turn),
        cmocka_unit_test(test_send_resumes_thread),
        cmocka_unit_test(test_detach_then_attach),
        cmocka_unit_test(test_handoff_tmux),
        cmocka_unit_test(test_shell_auto),
        cmocka_unit_test(test_shell_declined_by_default),
        cmocka_unit_test(test_worktree),
        cmocka_unit_test(test_interrupt_keeps_partial_text),
        cmocka_unit_test(test_http_500_fails),
        cmocka_unit_test(test_unreachable_endpoint),
        cmocka_unit_test(test_npm_launcher_seen_through),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
