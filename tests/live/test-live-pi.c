/* SPDX-License-Identifier: MIT */
/*
 * live pi tests: the real pi CLI (pinned, from npm; path in
 * BATON_TEST_PI_BIN) driven by the real baton binary against the local
 * stand-in model endpoint (tests/standin, Chat Completions). Without a pi
 * binary the whole program exits 77, which ctest reports as Skipped (never
 * Passed).
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
#define PI_ENV BT_SOURCE_DIR "/tests/live/pi-env.sh"

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

/* Run pi-env.sh and keep its KEY=VALUE lines. */
static int pi_env(const char *port, int *k)
{
    char *home = bt_xasprintf("%s/pi-agent", g.dir);
    const char *argv[] = {"/bin/bash", PI_ENV, home, port, NULL};
    struct bt_test_run r = {.argv = argv, .timeout_s = 60};
    struct bt_test_result res;
    int rc = bt_test_exec(&r, &res);
    free(home);
    if (rc || res.exit_code) {
        fprintf(stderr, "pi-env.sh failed: %s\n", res.err.data);
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
    g.dir = bt_test_mkdtemp(BT_BINARY_DIR, "live-pi");
    assert_non_null(g.dir);
    char *portfile = bt_xasprintf("%s/port", g.dir);
    g.log = bt_xasprintf("%s/standin.log", g.dir);
    char *out = bt_xasprintf("%s/standin.out", g.dir);
    const char *argv[] = {STANDIN, "--port-file", portfile, "--log", g.log, NULL};
    g.standin = bt_test_spawn_bg(argv, NULL, out);
    char *port = read_port(portfile);
    assert_non_null(port);
    int k = 0;
    assert_int_equal(pi_env(port, &k), 0);
    g.env[k++] = bt_xasprintf("BATON_HOME=%s/baton-home", g.dir);
    g.env[k++] = bt_xasprintf("BATON_PI_BIN=%s", getenv("BATON_TEST_PI_BIN"));
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
    if (res->exit_code != 0 && res->exit_code != 130) /* say why, for a failing case */
        print_message("baton exited %d: %s\n", res->exit_code, res->err.data);
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

#define MODEL "baton-standin/baton-test"

static int64_t now_ms(void)
{
    return bt_mono_ms();
}

static void test_text_turn(void **state)
{
    (void)state;
    struct bt_test_result res;
    const char *args[] = {"run", "-c", "pi", "-m", MODEL, "--json", "Say hello banana", NULL};
    baton(g.work, args, &res, 0);
    assert_int_equal(res.exit_code, 0);
    cJSON **lines;
    size_t n = check_stream(res.out.data, &lines);
    assert_string_equal(final_status(lines, n), "completed");
    size_t deltas = 0, usage = 0;
    for (size_t i = 0; i < n; i++) {
        const char *t = type_of(lines[i]);
        deltas += strcmp(t, "item.delta") == 0 && strcmp(item_kind(lines[i]), "message") == 0;
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

static void test_send_from_another_directory(void **state)
{
    (void)state;
    struct bt_test_result res;
    const char *run[] = {"run", "-c", "pi", "-m", MODEL, "--json", "Remember kumquat", NULL};
    baton(g.work, run, &res, 0);
    assert_int_equal(res.exit_code, 0);
    cJSON **lines;
    size_t n = check_stream(res.out.data, &lines);
    char *conv = bt_xstrdup(bt_test_jstr(lines[0], "conversation"));
    bt_test_lines_free(lines, n);
    bt_test_result_release(&res);

    const char *send[] = {"send", "--json", conv, "again", NULL};
    baton(g.other, send, &res, 0); /* another process, another directory */
    assert_int_equal(res.exit_code, 0);
    n = check_stream(res.out.data, &lines);
    assert_string_equal(final_status(lines, n), "completed");
    bt_test_lines_free(lines, n);
    bt_test_result_release(&res);
    char *req = last_request();
    assert_non_null(strstr(req, "Remember kumquat"));
    assert_non_null(strstr(req, "again"));
    free(req);
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

static void test_bash_tool(void **state)
{
    (void)state;
    struct bt_test_result res;
    const char *args[] = {"run", "-c", "pi", "-m", MODEL, "--json", "[[shell:echo baton-ok]]",
                          NULL};
    baton(g.work, args, &res, 0);
    assert_int_equal(res.exit_code, 0);
    cJSON **lines;
    size_t n = check_stream(res.out.data, &lines);
    assert_string_equal(final_status(lines, n), "completed");
    const cJSON *item = command_item(lines, n);
    assert_non_null(item);
    assert_string_equal(bt_test_jstr(item, "status"), "completed");
    assert_non_null(strstr(bt_test_jstr(item, "text"), "baton-ok"));
    bt_test_lines_free(lines, n);
    bt_test_result_release(&res);
}

/* pi processes of this test (their --session path is under g.dir). */
static int pi_processes_left(void)
{
    struct bt_test_result res;
    const char *argv[] = {"/bin/sh", "-c", "ps -eo args | grep '[-]-mode rpc' | grep -c live-pi-",
                          NULL};
    struct bt_test_run r = {.argv = argv, .timeout_s = 10};
    assert_int_equal(bt_test_exec(&r, &res), 0);
    int n = (int)strtol(res.out.data, NULL, 10);
    bt_test_result_release(&res);
    return n;
}

/* Wait until the file holds a text delta (pi takes 1-2 s to start). */
static int wait_for_delta(const char *path)
{
    for (int i = 0; i < 600; i++) {
        char *out = bt_test_slurp(path, NULL);
        int seen = out && strstr(out, "\"type\":\"item.delta\"") != NULL;
        free(out);
        if (seen)
            return 1;
        usleep(20000);
    }
    return 0;
}

static void test_abort_is_quick(void **state)
{
    (void)state;
    char *out = bt_xasprintf("%s/abort.out", g.dir);
    const char *argv[] = {BATON, "run", "-c", "pi", "-m", MODEL, "--json", "[[slow]]", NULL};
    char *const *env = g.env;
    char *cwd = getcwd(NULL, 0);
    assert_int_equal(chdir(g.work), 0);
    pid_t pid = bt_test_spawn_bg(argv, (const char *const *)env, out);
    assert_int_equal(chdir(cwd), 0);
    free(cwd);
    assert_true(wait_for_delta(out));
    int64_t t0 = now_ms();
    kill(pid, SIGINT);
    int st;
    waitpid(pid, &st, 0);
    int64_t took = now_ms() - t0;
    printf("abort: baton exited %lld ms after the interrupt\n", (long long)took);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 130);
    assert_true(took < 2000); /* cancelled within 2 s */
    char *text = bt_test_slurp(out, NULL);
    cJSON **lines;
    size_t n = check_stream(text, &lines);
    assert_string_equal(final_status(lines, n), "cancelled");
    assert_true(strlen(bt_test_jstr(lines[n - 1], "final_text")) > 0); /* partial text kept */
    assert_int_equal(pi_processes_left(), 0);
    bt_test_lines_free(lines, n);
    free(text);
    free(out);
}

static void test_http_500_without_retries(void **state)
{
    (void)state;
    struct bt_test_result res;
    const char *args[] = {"run",    "-c",         "pi",          "-m", MODEL,
                          "--json", "--no-retry", "[[http500]]", NULL};
    baton(g.work, args, &res, 0);
    assert_int_equal(res.exit_code, 1);
    cJSON **lines;
    size_t n = check_stream(res.out.data, &lines);
    assert_string_equal(final_status(lines, n), "failed");
    const cJSON *err = lines[n - 2];
    assert_string_equal(type_of(err), "error");
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
    baton(g.work, args, &res, 0);
    assert_int_equal(res.exit_code, 1);
    cJSON **lines;
    size_t n = check_stream(res.out.data, &lines);
    assert_string_equal(final_status(lines, n), "failed");
    int retries = 0;
    for (size_t i = 0; i < n; i++)
        retries += strcmp(type_of(lines[i]), "warning") == 0 &&
                   strcmp(bt_test_jstr(lines[i], "kind"), "retry") == 0;
    assert_true(retries >= 1); /* each attempt is a warning, not an end */
    bt_test_lines_free(lines, n);
    bt_test_result_release(&res);
}

int main(void)
{
    const char *bin = getenv("BATON_TEST_PI_BIN");
    if (!bin || !*bin || access(bin, X_OK) != 0) {
        printf("skipped: BATON_TEST_PI_BIN does not name a pi executable "
               "(tests/scripts/test.sh installs the pinned one)\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text_turn),
        cmocka_unit_test(test_send_from_another_directory),
        cmocka_unit_test(test_bash_tool),
        cmocka_unit_test(test_abort_is_quick),
        /* pi 0.73.1 saves set_auto_retry in its settings.json: the run with
         * --no-retry goes last */
        cmocka_unit_test(test_http_500_with_retries),
        cmocka_unit_test(test_http_500_without_retries),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
