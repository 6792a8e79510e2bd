/* SPDX-License-Identifier: MIT */
/*
 * unit-models: coders' model lists (runner.h models_* ops, coder.h
 * bt_coder_models). The runners' readers on the recorded answers of the
 * real CLIs (fixtures/<coder>/<version>/model-list*.stdout, what they
 * wrote to the requests in model-list.stdin) and on answers a coder must
 * not be trusted with; then bt_coder_models as a process: the fake coder
 * replaying a recording, one that dies, one that never answers, one that
 * is not installed.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "coder.h"
#include "error.h"
#include "support.h"

#define FIXTURES BT_SOURCE_DIR "/fixtures"
#define FAKE_CODER BT_BINARY_DIR "/tests/fake-coder/fake-coder"

static const struct bt_coder *coder(const char *name)
{
    const struct bt_coder *c = bt_coder_find(name);
    assert_non_null(c);
    return c;
}

/* Feed text (lines) to c's models_line as bt_coder_models does; the
 * return of the line that ended it (0: none did), what it asked next in
 * *more. */
static int feed(const struct bt_coder *c, const char *text, struct bt_runner_models *m,
                struct bt_buf *more, char **why)
{
    *m = (struct bt_runner_models){0};
    *why = NULL;
    int rc = 0;
    for (const char *p = text; *p && rc == 0;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        rc = c->runner->models_line(p, n, m, more, why);
        p += n + (nl ? 1 : 0);
    }
    return rc;
}

static int feed_file(const struct bt_coder *c, const char *path, struct bt_runner_models *m)
{
    char *text = bt_test_slurp(path, NULL), *why = NULL;
    assert_non_null(text);
    struct bt_buf more = BT_BUF_INIT;
    int rc = feed(c, text, m, &more, &why);
    assert_null(why);
    assert_int_equal(more.len, 0); /* one page */
    bt_buf_release(&more);
    free(text);
    return rc;
}

static void assert_model(const struct bt_runner_models *m, size_t i, const char *value,
                         const char *name)
{
    assert_true(i < m->n);
    assert_string_equal(m->v[i].value, value);
    assert_string_equal(m->v[i].name, name);
}

/* What the runner writes is what the recordings answered. */
static void assert_start(const struct bt_coder *c, const char *stdin_path)
{
    char *want = bt_test_slurp(stdin_path, NULL);
    assert_non_null(want);
    char *v = strstr(want, "\"version\":\"0.1.0\"");
    struct bt_buf got = BT_BUF_INIT;
    c->runner->models_start(&got);
    if (v) { /* the recording's baton version is not this one's */
        char *fixed = bt_xasprintf("%.*s\"version\":\"%s\"%s", (int)(v - want), want, BATON_VERSION,
                                   v + strlen("\"version\":\"0.1.0\""));
        free(want);
        want = fixed;
    }
    assert_string_equal(got.data, want);
    bt_buf_release(&got);
    free(want);
}

static void test_codex_recorded(void **state)
{
    (void)state;
    const struct bt_coder *c = coder("codex");
    struct bt_runner_models m;
    assert_start(c, FIXTURES "/codex/0.171.0/model-list.stdin");
    /* the stand-in's one-model catalog (tests/live/codex-env.sh) */
    assert_int_equal(feed_file(c, FIXTURES "/codex/0.171.0/model-list.stdout", &m), 1);
    assert_int_equal(m.n, 1);
    assert_model(&m, 0, "baton-test", "baton-test");
    assert_string_equal(m.current, "baton-test");
    bt_runner_models_release(&m);
    /* codex's own catalog: eleven models, the first its default */
    assert_int_equal(feed_file(c, FIXTURES "/codex/0.171.0/model-list-builtin.stdout", &m), 1);
    assert_int_equal(m.n, 11);
    assert_model(&m, 0, "gpt-6.2-sol", "GPT-6.2-Sol");
    assert_model(&m, 2, "gpt-6.1-terra", "GPT-6.1 Terra");
    assert_model(&m, 10, "gpt-5.5", "GPT-5.5");
    assert_string_equal(m.current, "gpt-6.2-sol");
    bt_runner_models_release(&m);
    struct bt_strv argv;
    bt_strv_init(&argv);
    c->runner->models_argv(&argv);
    assert_int_equal(argv.n, 1);
    assert_string_equal(argv.v[0], "app-server");
    bt_strv_release(&argv);
}

static void test_pi_recorded(void **state)
{
    (void)state;
    const struct bt_coder *c = coder("pi");
    struct bt_runner_models m;
    assert_start(c, FIXTURES "/pi/0.73.1/model-list.stdin");
    assert_start(c, FIXTURES "/pi/1.6.0/model-list.stdin");
    /* 0.73.1 answered the two in order, 1.6.0 get_state first */
    const char *one[] = {FIXTURES "/pi/0.73.1/model-list.stdout",
                         FIXTURES "/pi/1.6.0/model-list.stdout"};
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(feed_file(c, one[i], &m), 1);
        assert_int_equal(m.n, 1);
        assert_model(&m, 0, "baton-standin/baton-test", "baton-standin: baton-test");
        assert_string_equal(m.current, "baton-standin/baton-test");
        bt_runner_models_release(&m);
    }
    /* with an Anthropic key in the environment: its models first */
    assert_int_equal(feed_file(c, FIXTURES "/pi/1.6.0/model-list-anthropic.stdout", &m), 1);
    assert_int_equal(m.n, 19);
    assert_model(&m, 3, "anthropic/claude-haiku-4-5", "anthropic: Claude Haiku 4.5 (latest)");
    assert_model(&m, 18, "baton-standin/baton-test", "baton-standin: baton-test");
    assert_string_equal(m.current, "baton-standin/baton-test");
    bt_runner_models_release(&m);
    struct bt_strv argv;
    bt_strv_init(&argv);
    c->runner->models_argv(&argv);
    assert_int_equal(argv.n, 3);
    assert_string_equal(argv.v[2], "--no-session"); /* a listing leaves no session file */
    bt_strv_release(&argv);
}

/* What a coder lists is input: values -m could not take, names that are
 * not one line of text, repeats and hidden models are left out. */
static void test_codex_bad_answers(void **state)
{
    (void)state;
    const struct bt_coder *c = coder("codex");
    struct bt_runner_models m;
    struct bt_buf more = BT_BUF_INIT;
    char *why;
    const char *odd =
        "not json\n"
        "{\"id\":5,\"method\":\"item/tool/call\",\"params\":{}}\n" /* a request, not the answer */
        "{\"id\":9,\"result\":{}}\n"                               /* no listing's id */
        "{\"id\":5,\"result\":{\"data\":["
        "{\"model\":\"ok-1\",\"displayName\":\"OK 1\"},"
        "{\"model\":\"-rm\",\"displayName\":\"an option\"},"
        "{\"model\":\"\",\"displayName\":\"empty\"},"
        "{\"model\":\"two\\nlines\"},"
        "{\"model\":\"ok-2\",\"displayName\":\"bell\\u0007\"},"
        "{\"model\":\"ok-1\",\"displayName\":\"again\"},"
        "{\"model\":\"secret\",\"hidden\":true,\"isDefault\":true},"
        "{\"model\":7},{\"displayName\":\"no model\"},\"text\",null,"
        "{\"model\":\"ok-3\"}],\"nextCursor\":null}}\n";
    assert_int_equal(feed(c, odd, &m, &more, &why), 1);
    assert_null(why);
    assert_int_equal(m.n, 2);
    assert_model(&m, 0, "ok-1", "OK 1");
    assert_model(&m, 1, "ok-3", "ok-3"); /* no displayName: its value */
    assert_null(m.current);              /* the default was hidden */
    bt_runner_models_release(&m);

    /* a name cut inside a character (a lone surrogate escape) is still
     * read; a NUL would cut a value short: the answer is refused */
    assert_int_equal(feed(c,
                          "{\"id\":5,\"result\":{\"data\":[{\"model\":\"m\",\"displayName\":"
                          "\"M \\ud83d\"}]}}\n",
                          &m, &more, &why),
                     1);
    assert_model(&m, 0, "m", "M \xef\xbf\xbd");
    bt_runner_models_release(&m);
    assert_int_equal(
        feed(c, "{\"id\":5,\"result\":{\"data\":[{\"model\":\"gpt-x\\u0000-internal\"}]}}\n", &m,
             &more, &why),
        BT_EPROTO);
    assert_non_null(strstr(why, "NUL"));
    free(why);
    bt_runner_models_release(&m);

    /* an error answer, to initialize or to model/list */
    assert_int_equal(
        feed(c, "{\"id\":1,\"error\":{\"code\":-32600,\"message\":\"no\"}}\n", &m, &more, &why),
        BT_EPROTO);
    assert_string_equal(why, "codex answered no");
    free(why);
    bt_runner_models_release(&m);
    assert_int_equal(feed(c, "{\"id\":5,\"error\":{}}\n", &m, &more, &why), BT_EPROTO);
    assert_string_equal(why, "codex answered with an error");
    free(why);
    bt_runner_models_release(&m);
    assert_int_equal(feed(c, "{\"id\":5,\"result\":{\"data\":{}}}\n", &m, &more, &why), BT_EPROTO);
    assert_non_null(strstr(why, "no data array"));
    free(why);
    bt_runner_models_release(&m);
    bt_buf_release(&more);
}

/* A next page is asked for with its cursor; a cursor that never ends is
 * followed ten pages, no more. */
static void test_codex_pages(void **state)
{
    (void)state;
    const struct bt_coder *c = coder("codex");
    struct bt_runner_models m = {0};
    struct bt_buf more = BT_BUF_INIT;
    char *why = NULL;
    int rc = 0, pages = 0;
    while (rc == 0 && pages < 50) {
        char *line = bt_xasprintf("{\"id\":5,\"result\":{\"data\":[{\"model\":\"m%d\"}],"
                                  "\"nextCursor\":\"c%d\"}}",
                                  pages, pages);
        bt_buf_reset(&more);
        rc = c->runner->models_line(line, strlen(line), &m, &more, &why);
        free(line);
        pages++;
        if (rc == 0) {
            char *want = bt_xasprintf("{\"id\":5,\"method\":\"model/list\",\"params\":{\"limit\":"
                                      "100,\"cursor\":\"c%d\"}}\n",
                                      pages - 1);
            assert_string_equal(more.data, want);
            free(want);
        }
    }
    assert_int_equal(rc, 1);
    assert_int_equal(pages, 10);
    assert_int_equal(m.n, 10);
    assert_model(&m, 9, "m9", "m9");
    bt_runner_models_release(&m);
    bt_buf_release(&more);
}

static void test_pi_bad_answers(void **state)
{
    (void)state;
    const struct bt_coder *c = coder("pi");
    struct bt_runner_models m;
    struct bt_buf more = BT_BUF_INIT;
    char *why;
    const char *odd =
        "{\"type\":\"extension_ui_request\",\"id\":\"models\"}\n" /* not a response */
        "{\"id\":\"other\",\"type\":\"response\",\"success\":true}\n"
        "{\"id\":\"models\",\"type\":\"response\",\"success\":true,\"data\":{\"models\":["
        "{\"provider\":\"p\",\"id\":\"a\",\"name\":\"A\"},"
        "{\"provider\":\"p/q\",\"id\":\"b\"},"             /* the slash is -m's */
        "{\"provider\":\"p\",\"id\":\"c d\"},"             /* pi's argv would split it */
        "{\"provider\":\"-p\",\"id\":\"e\"},"              /* an option */
        "{\"id\":\"f\"},"                                  /* no provider */
        "{\"provider\":\"p\",\"id\":\"h\",\"name\":\"\"}," /* an empty one too */
        "{\"provider\":\"p\",\"id\":\"g\"}]}}\n";          /* no name: its value */
    assert_int_equal(feed(c, odd, &m, &more, &why), 0);    /* get_state still to come */
    assert_int_equal(m.n, 3);
    assert_model(&m, 0, "p/a", "p: A");
    assert_model(&m, 1, "p/h", "p/h");
    assert_model(&m, 2, "p/g", "p/g");
    const char *state_line =
        "{\"id\":\"state\",\"type\":\"response\",\"success\":true,\"data\":{\"model\":null}}";
    assert_int_equal(c->runner->models_line(state_line, strlen(state_line), &m, &more, &why), 1);
    assert_null(m.current); /* pi runs no model given none */
    bt_runner_models_release(&m);
    assert_int_equal(feed(c,
                          "{\"id\":\"models\",\"type\":\"response\",\"success\":false,"
                          "\"error\":\"no way\"}\n",
                          &m, &more, &why),
                     BT_EPROTO);
    assert_string_equal(why, "pi answered no way");
    free(why);
    bt_runner_models_release(&m);
    assert_int_equal(more.len, 0);
    bt_buf_release(&more);
}

/* The registry: a coder lists its models with all three ops or none. */
static void test_ops_together(void **state)
{
    (void)state;
    for (size_t i = 0; bt_coders[i]; i++) {
        const struct bt_runner_ops *r = bt_coders[i]->runner;
        int n = !!r->models_argv + !!r->models_start + !!r->models_line;
        assert_true(n == 0 || n == 3);
    }
}

/* --- bt_coder_models: the process ------------------------------------- */

static void set_env(const char *name, const char *value)
{
    if (value)
        setenv(name, value, 1);
    else
        unsetenv(name);
}

static void fake_env(const char *replay)
{
    set_env("BATON_CODEX_BIN", FAKE_CODER);
    set_env("FAKE_CODER_REPLAY", replay);
    set_env("FAKE_CODER_CRASH_AFTER", NULL);
    set_env("FAKE_CODER_HANG_AFTER", NULL);
    set_env("FAKE_CODER_STDERR", NULL);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The recorded answer through the fake coder: the process is left once
 * it has answered (it would wait for more on an open stdin). */
static void test_process_listed(void **state)
{
    (void)state;
    fake_env(FIXTURES "/codex/0.171.0/model-list-builtin.stdout");
    setenv("FAKE_CODER_NEVER_EXIT", "1", 1); /* only a stop ends it */
    struct bt_runner_models m;
    char *why;
    double t0 = now();
    assert_int_equal(bt_coder_models(coder("codex"), NULL, NULL, &m, &why), 0);
    assert_true(now() - t0 < 10); /* stopped once it answered, not at the 20 s bound */
    unsetenv("FAKE_CODER_NEVER_EXIT");
    assert_null(why);
    assert_int_equal(m.n, 11);
    assert_string_equal(m.current, "gpt-6.2-sol");
    bt_runner_models_release(&m);
}

/* A coder that dies before it answers: its words in *why. */
static void test_process_dies(void **state)
{
    (void)state;
    fake_env(FIXTURES "/codex/0.171.0/model-list.stdout");
    setenv("FAKE_CODER_CRASH_AFTER", "1", 1);
    setenv("FAKE_CODER_STDERR", "Error: no config\n", 1);
    struct bt_runner_models m;
    char *why;
    assert_int_equal(bt_coder_models(coder("codex"), NULL, NULL, &m, &why), BT_EPROTO);
    assert_non_null(strstr(why, "codex ended before it answered"));
    assert_non_null(strstr(why, "Error: no config"));
    assert_int_equal(m.n, 0);
    free(why);
    fake_env(NULL);
}

/* One that never answers is stopped when asked to, at once. */
static void test_process_stopped(void **state)
{
    (void)state;
    fake_env(FIXTURES "/codex/0.171.0/model-list.stdout");
    setenv("FAKE_CODER_HANG_AFTER", "0", 1);
    atomic_int stop = 1;
    struct bt_runner_models m;
    char *why;
    double t0 = now();
    assert_int_equal(bt_coder_models(coder("codex"), NULL, &stop, &m, &why), -ECANCELED);
    assert_true(now() - t0 < 5); /* not the listing's 20 s bound */
    assert_string_equal(why, "codex was stopped");
    free(why);
    fake_env(NULL);
}

/* What a coder says goes into one line of baton's: its first line, at
 * most 200 bytes, control characters shown as '?'. */
static void test_process_words_kept_short(void **state)
{
    (void)state;
    char dir[] = BT_BINARY_DIR "/unit-models-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char *script = bt_xasprintf("%s/codex", dir);
    FILE *f = fopen(script, "w");
    assert_non_null(f);
    fputs("#!/bin/sh\nread -r l\nprintf '{\"id\":1,\"result\":{}}\\n'\nread -r l\nread -r l\n"
          "printf '{\"id\":5,\"error\":{\"message\":\"boom\\\\u0001%0300d\\\\nsecond\"}}\\n' 0\n"
          "sleep 5\n",
          f);
    fclose(f);
    chmod(script, 0755);
    fake_env(NULL);
    setenv("BATON_CODEX_BIN", script, 1);
    struct bt_runner_models m;
    char *why;
    assert_int_equal(bt_coder_models(coder("codex"), NULL, NULL, &m, &why), BT_EPROTO);
    assert_true(strncmp(why, "codex could not list its models: codex answered boom?000", 56) == 0);
    assert_true(strlen(why) < 300);
    assert_non_null(strstr(why, "..."));
    assert_null(strstr(why, "second"));
    for (const char *p = why; *p; p++)
        assert_true((unsigned char)*p >= 0x20);
    free(why);
    /* a directory that cannot be entered: it says it could not start */
    assert_int_equal(bt_coder_models(coder("codex"), "/nonexistent/dir", NULL, &m, &why), -ENOENT);
    assert_non_null(strstr(why, "codex could not be started"));
    free(why);
    unlink(script);
    rmdir(dir);
    free(script);
    unsetenv("BATON_CODEX_BIN");
}

static void test_process_not_installed(void **state)
{
    (void)state;
    fake_env(NULL);
    setenv("BATON_CODEX_BIN", "/nonexistent/codex", 1);
    struct bt_runner_models m;
    char *why;
    assert_int_equal(bt_coder_models(coder("codex"), NULL, NULL, &m, &why), BT_ENOTINSTALLED);
    assert_non_null(strstr(why, "BATON_CODEX_BIN"));
    free(why);
    /* a coder without the ops says so */
    assert_int_equal(bt_coder_models(coder("claude"), NULL, NULL, &m, &why), -ENOTSUP);
    assert_string_equal(why, "claude cannot list its models");
    free(why);
    unsetenv("BATON_CODEX_BIN");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_codex_recorded),
        cmocka_unit_test(test_pi_recorded),
        cmocka_unit_test(test_codex_bad_answers),
        cmocka_unit_test(test_codex_pages),
        cmocka_unit_test(test_pi_bad_answers),
        cmocka_unit_test(test_ops_together),
        cmocka_unit_test(test_process_listed),
        cmocka_unit_test(test_process_dies),
        cmocka_unit_test(test_process_stopped),
        cmocka_unit_test(test_process_not_installed),
        cmocka_unit_test(test_process_words_kept_short),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
