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

#include "support.h"

#define BATON BT_BINARY_DIR "/baton"
#define STANDIN BT_BINARY_DIR "/tests/standin/baton-standin"
#define CODEX_ENV BT_SOURCE_DIR "/tests/live/codex-env.sh"

static struct {
    char *dir; /* scratch root (inside the build tree: codex refuses /tmp) */
    char *log; /* stand-in request log */
    pid_t standin;
    char *env[24]; /* the env script's lines, BATON_HOME, the coder bin, NO_COLOR */
    char *work;    /* project dir for runs */
    char *other;   /* a different dir for `send` */
} g;

static char *read_port(const char *path)
{
    for (int i = 0; i < 200; i++) {
        size_t len;
        char *s = bt_test_slurp(path, &len);
        if (s && len) {
            s[strcspn(s, "\n")] = '\0';
            return s;
        }
        free(s);
        usleep(20000);
    }
    return NULL;
}

/* Run codex-env.sh and keep its KEY=VALUE lines. */
static int codex_env(const char *port, int *k)
{
    char *home = bt_xasprintf("%s/codex-home", g.dir);
    const char *argv[] = {"/bin/bash", CODEX_ENV, home, port, NULL};
    struct bt_test_run r = {.argv = argv, .timeout_s = 60};
    struct bt_test_result res;
    int rc = bt_test_exec(&r, &res);
    free(home);
    if (rc || res.exit_code) {
        fprintf(stderr, "codex-env.sh failed: %s\n", res.err.data);
        bt_test_result_release(&res);
        return -1;
    }
    /* three more entries follow these lines */
    for (char *line = strtok(res.out.data, "\n"); line; line = strtok(NULL, "\n")) {
        assert_true(*k + 3 < (int)BT_ARRAY_SIZE(g.env));
        g.env[(*k)++] = bt_xstrdup(line);
    }
    bt_test_result_release(&res);
    return 0;
}

static int setup(void **state)
{
    (void)state;
    g.dir = bt_test_mkdtemp(BT_BINARY_DIR, "live-codex");
    assert_non_null(g.dir);
    char *portfile = bt_xasprintf("%s/port", g.dir);
    g.log = bt_xasprintf("%s/standin.log", g.dir);
    char *out = bt_xasprintf("%s/standin.out", g.dir);
    const char *argv[] = {STANDIN, "--port-file", portfile, "--log", g.log, NULL};
    g.standin = bt_test_spawn_bg(argv, NULL, out);
    char *port = read_port(portfile);
    assert_non_null(port);
    int k = 0;
    assert_int_equal(codex_env(port, &k), 0);
    g.env[k++] = bt_xasprintf("BATON_HOME=%s/baton-home", g.dir);
    g.env[k++] = bt_xasprintf("BATON_CODEX_BIN=%s", getenv("BATON_TEST_CODEX_BIN"));
    g.env[k++] = bt_xstrdup("NO_COLOR=1");
    g.work = bt_xasprintf("%s/work", g.dir);
    g.other = bt_xasprintf("%s/other", g.dir);
    mkdir(g.work, 0700);
    mkdir(g.other, 0700);
    free(port);
    free(portfile);
    free(out);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    kill(g.standin, SIGTERM);
    waitpid(g.standin, NULL, 0);
    bt_test_rmdir(g.dir);
    free(g.dir);
    free(g.log);
    free(g.work);
    free(g.other);
    for (size_t i = 0; i < BT_ARRAY_SIZE(g.env); i++)
        free(g.env[i]);
    return 0;
}

static void baton(const char *cwd, const char *const *args, struct bt_test_result *res,
                  int sigint_ms)
{
    const char *argv[16] = {BATON};
    size_t n = 1;
    for (; args[n - 1] && n < 15; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    struct bt_test_run r = {.argv = argv,
                            .env = (const char *const *)g.env,
                            .cwd = cwd,
                            .timeout_s = 120,
                            .send_sigint_after_ms = sigint_ms};
    assert_int_equal(bt_test_exec(&r, res), 0);
    assert_false(res->timed_out);
}

static const char *type_of(const cJSON *ev)
{
    return bt_test_jstr(ev, "type");
}

/* The stream invariants every run must hold: only JSON lines, seq rising
 * by 1 from 1, turn.started first, one turn.completed, last. */
static size_t check_stream(const char *out, cJSON ***lines)
{
    size_t n = bt_test_json_lines(out, lines);
    assert_true(n >= 2);
    int completed = 0;
    for (size_t i = 0; i < n; i++) {
        assert_non_null((*lines)[i]);
        const cJSON *seq = cJSON_GetObjectItem((*lines)[i], "seq");
        assert_int_equal((int64_t)seq->valuedouble, (int64_t)i + 1);
        completed += strcmp(type_of((*lines)[i]), "turn.completed") == 0;
    }
    assert_string_equal(type_of((*lines)[0]), "turn.started");
    assert_string_equal(type_of((*lines)[n - 1]), "turn.completed");
    assert_int_equal(completed, 1);
    return n;
}

static const char *final_status(cJSON **lines, size_t n)
{
    return bt_test_jstr(lines[n - 1], "status");
}

static const char *item_kind(const cJSON *ev)
{
    return bt_test_jstr(cJSON_GetObjectItem(ev, "item"), "kind");
}

static void test_text_turn(void **state)
{
    (void)state;
    struct bt_test_result res;
    const char *args[] = {"run", "-c", "codex", "--json", "Say hello banana", NULL};
    baton(g.work, args, &res, 0);
    assert_int_equal(res.exit_code, 0);
    cJSON **lines;
    size_t n = check_stream(res.out.data, &lines);
    assert_string_equal(final_status(lines, n), "completed");
    size_t deltas = 0, completed_at = 0, usage_at = 0;
    for (size_t i = 0; i < n; i++) {
        const char *t = type_of(lines[i]);
        if (strcmp(t, "item.delta") == 0 && strcmp(item_kind(lines[i]), "message") == 0) {
            assert_int_equal(completed_at, 0);
            deltas++;
        } else if (strcmp(t, "item.completed") == 0 &&
                   strcmp(item_kind(lines[i]), "message") == 0) {
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

/* The last request the stand-in received. */
static char *last_request(void)
{
    size_t len;
    char *log = bt_test_slurp(g.log, &len);
    assert_non_null(log);
    while (len && log[len - 1] == '\n')
        log[--len] = '\0';
    char *last = strrchr(log, '\n');
    char *copy = bt_xstrdup(last ? last + 1 : log);
    free(log);
    return copy;
}

static void test_send_resumes_thread(void **state)
{
    (void)state;
    struct bt_test_result res;
    const char *run[] = {"run", "--json", "Remember the word kumquat", NULL};
    baton(g.work, run, &res, 0);
    assert_int_equal(res.exit_code, 0);
    cJSON **lines;
    size_t n = check_stream(res.out.data, &lines);
    char *conv = bt_xstrdup(bt_test_jstr(lines[0], "conversation"));
    bt_test_lines_free(lines, n);
    bt_test_result_release(&res);

    const char *send[] = {"send", "--json", conv, "And again?", NULL};
    baton(g.other, send, &res, 0); /* another process, another directory */
    assert_int_equal(res.exit_code, 0);
    n = check_stream(res.out.data, &lines);
    assert_string_equal(final_status(lines, n), "completed");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(lines[0], "resumed")));
    bt_test_lines_free(lines, n);
    bt_test_result_release(&res);
    char *req = last_request();
    assert_non_null(strstr(req, "Remember the word kumquat"));
    assert_non_null(strstr(req, "And again?"));
    free(req);

    const char *show[] = {"show", "--json", conv, NULL};
    baton(g.other, show, &res, 0);
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

/* The completed command item of a stream, or NULL. */
static const cJSON *command_item(cJSON **lines, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(type_of(lines[i]), "item.completed") == 0 &&
            strcmp(item_kind(lines[i]), "command") == 0)
            return cJSON_GetObjectItem(lines[i], "item");
    return NULL;
}

static void test_shell_auto(void **state)
{
    (void)state;
    struct bt_test_result res;
    const char *args[] = {"run", "--json", "--approval", "auto", "[[shell:echo baton-ok]]", NULL};
    baton(g.work, args, &res, 0);
    assert_int_equal(res.exit_code, 0);
    cJSON **lines;
    size_t n = check_stream(res.out.data, &lines);
    assert_string_equal(final_status(lines, n), "completed");
    const cJSON *item = command_item(lines, n);
    assert_non_null(item);
    assert_string_equal(bt_test_jstr(item, "status"), "completed");
    assert_non_null(strstr(bt_test_jstr(item, "text"), "baton-ok"));
    assert_int_equal(cJSON_GetObjectItem(item, "exit_code")->valueint, 0);
    bt_test_lines_free(lines, n);
    bt_test_result_release(&res);
}

static void test_shell_declined_by_default(void **state)
{
    (void)state;
    struct bt_test_result res;
    const char *args[] = {"run", "--json", "[[shell:echo baton-ok]]", NULL};
    baton(g.work, args, &res, 0);
    assert_int_equal(res.exit_code, 0);
    cJSON **lines;
    size_t n = check_stream(res.out.data, &lines);
    assert_string_equal(final_status(lines, n), "completed");
    int requested = 0, declined = 0;
    for (size_t i = 0; i < n; i++) {
        requested += strcmp(type_of(lines[i]), "approval.requested") == 0;
        if (strcmp(type_of(lines[i]), "approval.resolved") == 0) {
            assert_string_equal(bt_test_jstr(lines[i], "decision"), "decline");
            declined++;
        }
    }
    assert_int_equal(requested, 1);
    assert_int_equal(declined, 1);
    const cJSON *item = command_item(lines, n);
    assert_non_null(item);
    assert_string_equal(bt_test_jstr(item, "status"), "declined");
    bt_test_lines_free(lines, n);
    bt_test_result_release(&res);
}

static void test_interrupt_keeps_partial_text(void **state)
{
    (void)state;
    struct bt_test_result res;
    const char *args[] = {"run", "--json", "[[slow]]", NULL};
    baton(g.work, args, &res, 2500);
    assert_int_equal(res.exit_code, 130);
    cJSON **lines;
    size_t n = check_stream(res.out.data, &lines);
    assert_string_equal(final_status(lines, n), "cancelled");
    assert_true(strlen(bt_test_jstr(lines[n - 1], "final_text")) > 0);
    bt_test_lines_free(lines, n);
    bt_test_result_release(&res);
}

static void test_http_500_fails(void **state)
{
    (void)state;
    struct bt_test_result res;
    const char *args[] = {"run", "--json", "[[http500]]", NULL};
    baton(g.work, args, &res, 0);
    assert_int_equal(res.exit_code, 1);
    cJSON **lines;
    size_t n = check_stream(res.out.data, &lines);
    assert_string_equal(final_status(lines, n), "failed");
    assert_string_equal(type_of(lines[n - 2]), "error");
    assert_non_null(bt_test_jstr(lines[n - 2], "message"));
    bt_test_lines_free(lines, n);
    bt_test_result_release(&res);
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
        cmocka_unit_test(test_shell_auto),
        cmocka_unit_test(test_shell_declined_by_default),
        cmocka_unit_test(test_interrupt_keeps_partial_text),
        cmocka_unit_test(test_http_500_fails),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
