/* SPDX-License-Identifier: MIT */
/*
 * live pi tests: the real pi CLI (pinned, from npm) driven by the real
 * baton binary against the local stand-in model endpoint (tests/standin,
 * Chat Completions). The same tests run on each pi line: `live-pi [VAR]`
 * takes pi's path from the variable VAR, BATON_TEST_PI_BIN (pi 0.73.1) by
 * default; ctest's live-pi-1 passes BATON_TEST_PI1_BIN (pi 1.6.0 under
 * Node 22, tests/scripts/install-pi.sh --v1). Without that pi the whole
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

#define PI_ENV BT_SOURCE_DIR "/tests/live/pi-env.sh"

#define MODEL "baton-standin/baton-test"

static const char *bin_var = "BATON_TEST_PI_BIN"; /* where pi's path comes from */
static const char *prefix = "live-pi";            /* the scratch directory's name */

static int setup(void **state)
{
    (void)state;
    bt_live_setup(prefix, PI_ENV, "pi-agent", "BATON_PI_BIN", getenv(bin_var));
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
    const char *args[] = {"run", "-c", "pi", "-m", MODEL, "--json", "Say hello banana", NULL};
    bt_live_baton(bt_live.work, args, &res, 0);
    assert_int_equal(res.exit_code, 0);
    cJSON **lines;
    size_t n = bt_live_stream(res.out.data, &lines);
    assert_string_equal(bt_live_status(lines, n), "completed");
    size_t deltas = 0, usage = 0;
    for (size_t i = 0; i < n; i++) {
        const char *t = bt_live_type(lines[i]);
        deltas +=
            strcmp(t, "item.delta") == 0 && strcmp(bt_live_item_kind(lines[i]), "message") == 0;
        if (strcmp(t, "usage") == 0) {
            usage++;
            assert_true(cJSON_IsNumber(cJSON_GetObjectItem(lines[i], "input_tokens")));
            assert_true(cJSON_IsNumber(cJSON_GetObjectItem(lines[i], "output_tokens")));
            assert_true(cJSON_IsNumber(cJSON_GetObjectItem(lines[i], "context_window")));
        }
    }
    assert_true(deltas > 0);
    assert_true(usage > 0);
    assert_string_equal(bt_test_jstr(lines[n - 1], "final_text"),
                        "Hello! You said: Say hello banana");
    bt_test_lines_free(lines, n);
    bt_test_result_release(&res);
}

static void test_send_from_another_directory(void **state)
{
    (void)state;
    struct bt_test_result res;
    const char *run[] = {"run", "-c", "pi", "-m", MODEL, "--json", "Remember kumquat", NULL};
    bt_live_baton(bt_live.work, run, &res, 0);
    assert_int_equal(res.exit_code, 0);
    cJSON **lines;
    size_t n = bt_live_stream(res.out.data, &lines);
    char *conv = bt_xstrdup(bt_test_jstr(lines[0], "conversation"));
    bt_test_lines_free(lines, n);
    bt_test_result_release(&res);

    n = bt_live_send(conv, "again", 0, &lines);
    assert_string_equal(bt_live_status(lines, n), "completed");
    bt_test_lines_free(lines, n);
    char *req = bt_live_last_request();
    assert_non_null(strstr(req, "Remember kumquat"));
    assert_non_null(strstr(req, "again"));
    free(req);
    free(conv);
}

/* Handoff to pi's own terminal UI in tmux: `pi --session FILE`. */
static void test_handoff_tmux(void **state)
{
    (void)state;
    const char *opts[] = {"-c", "pi", "-m", MODEL, NULL};
    const char *ready[] = {"baton-test", NULL}; /* the model, at the right of the footer */
    bt_live_handoff_scenario(opts, ready);
}

static void test_bash_tool(void **state)
{
    (void)state;
    struct bt_test_result res;
    const char *args[] = {"run", "-c", "pi", "-m", MODEL, "--json", "[[shell:echo baton-ok]]",
                          NULL};
    bt_live_baton(bt_live.work, args, &res, 0);
    assert_int_equal(res.exit_code, 0);
    cJSON **lines;
    size_t n = bt_live_stream(res.out.data, &lines);
    assert_string_equal(bt_live_status(lines, n), "completed");
    const cJSON *item = bt_live_command_item(lines, n);
    assert_non_null(item);
    assert_string_equal(bt_test_jstr(item, "status"), "completed");
    assert_non_null(strstr(bt_test_jstr(item, "text"), "baton-ok"));
    bt_test_lines_free(lines, n);
    bt_test_result_release(&res);
}

/* A turn in its own worktree writes a file; two at once; keep one. */
static void test_worktree(void **state)
{
    (void)state;
    static const char *const run[] = {"-c", "pi", "-m", MODEL, NULL};
    static const char *const fan[] = {"-c", "pi,pi", "-m", MODEL, NULL};
    bt_live_worktree_scenario(run, fan);
}

static void test_abort_is_quick(void **state)
{
    (void)state;
    const char *args[] = {"-c", "pi", "-m", MODEL, NULL};
    bt_live_interrupt_scenario(args); /* pi gets `abort` */
}

static void test_http_500_without_retries(void **state)
{
    (void)state;
    struct bt_test_result res;
    const char *args[] = {"run",    "-c",         "pi",          "-m", MODEL,
                          "--json", "--no-retry", "[[http500]]", NULL};
    bt_live_baton(bt_live.work, args, &res, 0);
    assert_int_equal(res.exit_code, 1);
    cJSON **lines;
    size_t n = bt_live_stream(res.out.data, &lines);
    assert_string_equal(bt_live_status(lines, n), "failed");
    const cJSON *err = lines[n - 2];
    assert_string_equal(bt_live_type(err), "error");
    const char *msg = bt_test_jstr(err, "message");
    assert_non_null(strstr(msg, "pi could not complete the turn")); /* baton's sentence */
    assert_non_null(strstr(msg, "500"));                            /* pi's reason */
    bt_test_lines_free(lines, n);
    bt_test_result_release(&res);
}

static void test_http_500_with_retries(void **state)
{
    (void)state;
    struct bt_test_result res;
    const char *args[] = {"run", "-c", "pi", "-m", MODEL, "--json", "[[http500]]", NULL};
    bt_live_baton(bt_live.work, args, &res, 0);
    assert_int_equal(res.exit_code, 1);
    cJSON **lines;
    size_t n = bt_live_stream(res.out.data, &lines);
    assert_string_equal(bt_live_status(lines, n), "failed");
    int retries = 0;
    for (size_t i = 0; i < n; i++)
        retries += strcmp(bt_live_type(lines[i]), "warning") == 0 &&
                   strcmp(bt_test_jstr(lines[i], "kind"), "retry") == 0;
    assert_true(retries >= 1); /* each attempt is a warning, not an end */
    bt_test_lines_free(lines, n);
    bt_test_result_release(&res);
}

/* pi at a port where nothing listens retries ("Connection error.", then 2,
 * 4, 8 s apart, about 14 s in all); the retries are not progress, so a 5 s
 * idle timeout (pi takes 1 to 3 s to start on a busy machine) ends the turn first, as
 * a network error with pi's reason. */
static void test_unreachable_endpoint(void **state)
{
    (void)state;
    const char *opts[] = {"-c", "pi", "-m", MODEL, NULL};
    bt_live_unreachable_scenario(PI_ENV, opts, "5", "Connection error");
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "BATON_TEST_PI1_BIN") == 0) {
        bin_var = argv[1];
        prefix = "live-pi1";
    }
    const char *bin = getenv(bin_var);
    if (!bin || !*bin || access(bin, X_OK) != 0) {
        printf("skipped: %s does not name a pi executable "
               "(tests/scripts/test.sh installs the pinned one)\n",
               bin_var);
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text_turn),
        cmocka_unit_test(test_send_from_another_directory),
        cmocka_unit_test(test_handoff_tmux),
        cmocka_unit_test(test_bash_tool),
        cmocka_unit_test(test_worktree),
        cmocka_unit_test(test_abort_is_quick),
        cmocka_unit_test(test_unreachable_endpoint),
        /* pi 0.73.1 saves set_auto_retry in its settings.json: the run with
         * --no-retry goes last */
        cmocka_unit_test(test_http_500_with_retries),
        cmocka_unit_test(test_http_500_without_retries),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
