/* SPDX-License-Identifier: MIT */
/*
 * integration tests: the real baton binary driving tests/fake-coder, which
 * replays recorded codex app-server output (fixtures/codex/) and misbehaves
 * on demand: crash, stall, ignore SIGTERM, leave a grandchild, never exit.
 * Each test gets its own BATON_HOME.
 */
#include <dirent.h>
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
#include <sqlite3.h>

#include "harness.h"
#include "runfile.h"
#include "support.h"

static const char *type_of(const cJSON *ev)
{
    return bt_test_jstr(ev, "type");
}

/* Stream invariants; returns the number of events. */
static size_t stream(const char *out, cJSON ***lines)
{
    size_t n = bt_test_json_lines(out, lines);
    assert_true(n >= 2);
    int completed = 0;
    for (size_t i = 0; i < n; i++) {
        assert_non_null((*lines)[i]);
        assert_int_equal(cJSON_GetObjectItem((*lines)[i], "seq")->valueint, (int)i + 1);
        completed += strcmp(type_of((*lines)[i]), "turn.completed") == 0;
    }
    assert_string_equal(type_of((*lines)[0]), "turn.started");
    assert_string_equal(type_of((*lines)[n - 1]), "turn.completed");
    assert_int_equal(completed, 1);
    return n;
}

static int count_type(cJSON **lines, size_t n, const char *type, const char *kind)
{
    int k = 0;
    for (size_t i = 0; i < n; i++)
        if (strcmp(type_of(lines[i]), type) == 0 &&
            (!kind ||
             (bt_test_jstr(lines[i], "kind") && strcmp(bt_test_jstr(lines[i], "kind"), kind) == 0)))
            k++;
    return k;
}

static const cJSON *last_event(cJSON **lines, size_t n)
{
    return lines[n - 1];
}

/* A pid from a pidfile, waiting for the file to appear. */
static int read_pid(const char *path)
{
    for (int64_t t0 = 0; bt_test_poll(&t0);) {
        char *s = bt_test_slurp(path, NULL);
        if (s && *s) {
            int pid = (int)strtol(s, NULL, 10);
            free(s);
            return pid;
        }
        free(s);
    }
    return 0;
}

static int alive(int pid)
{
    return pid > 0 && kill(pid, 0) == 0;
}

/* ---- the normal path ------------------------------------------------ */

static void test_text_turn(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    replay(c, "text");
    baton(c, &res, NULL, 0, "run", "--json", "Say hello banana", END);
    assert_int_equal(res.exit_code, 0);
    cJSON **lines;
    size_t n = stream(res.out.data, &lines);
    const cJSON *end = last_event(lines, n);
    assert_string_equal(bt_test_jstr(end, "status"), "completed");
    assert_string_equal(bt_test_jstr(end, "final_text"), "Hello! You said: Say hello banana");
    assert_int_equal(count_type(lines, n, "session.started", NULL), 1);
    assert_true(count_type(lines, n, "item.delta", NULL) >= 1);
    assert_int_equal(count_type(lines, n, "usage", NULL), 1);
    bt_test_lines_free(lines, n);
    bt_test_result_release(&res);
}

/* A detached worker killed while it waits for a turn slot: its run is
 * interrupted, the next waiter gets the slot, and the commands that find
 * it say nothing of a raw output it never had (its coder never
 * started). */
static void test_killed_while_waiting(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    replay(c, "text");
    setenv_kv(c, "BATON_MAX_TURNS=1");
    hold_turns(c, 2);
    char *script = bt_xasprintf(
        "set -e; b='%s'; \"$b\" run --detach first >/dev/null; \"$b\" run --detach second "
        ">/dev/null; \"$b\" run --detach third >/dev/null\n"
        "for i in $(seq 200); do n=$(ls home/turns/wait | wc -l); [ \"$n\" = 2 ] && break; "
        "sleep 0.1; done\n"
        "kill -9 $(ls home/turns/wait | sort | head -1 | cut -d- -f2); sleep 0.5\n"
        "\"$b\" ls 2>ls.err | awk '{print $3, $NF}'; cat ls.err\n",
        BATON);
    const char *argv[] = {"bash", "-c", script, NULL};
    run_in(c, argv, &res);
    assert_int_equal(res.exit_code, 0);
    assert_string_equal(res.out.data, "waiting third\ninterrupted second\nrunning first\n");
    bt_test_result_release(&res);
    release_turns(c);
    free(script);
    script =
        bt_xasprintf("b='%s'; for i in $(seq 300); do \"$b\" ls | grep -q 'running\\|waiting' "
                     "|| break; sleep 0.1; done; \"$b\" ls 2>&1 | awk '{print $3, $NF}' | sort",
                     BATON);
    argv[2] = script;
    run_in(c, argv, &res);
    assert_int_equal(res.exit_code, 0);
    assert_string_equal(res.out.data, "completed first\ncompleted third\ninterrupted second\n");
    bt_test_result_release(&res);
    free(script);
}

/* A BATON_MAX_TURNS that is no number is said where the user looks, not
 * only in worker.log: serve refuses it (as --max-turns), a detaching run
 * warns and goes on with the default. */
static void test_bad_max_turns_said(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    replay(c, "text");
    setenv_kv(c, "BATON_MAX_TURNS=4x");
    baton(c, &res, NULL, 0, "serve", "--listen", "127.0.0.1:0", END);
    assert_int_equal(res.exit_code, 2);
    assert_string_equal(res.err.data,
                        "baton serve: BATON_MAX_TURNS is a number from 1 to 4096, not '4x'\n");
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "run", "--detach", "hello", END);
    assert_int_equal(res.exit_code, 0);
    assert_non_null(strstr(res.err.data, "baton: BATON_MAX_TURNS is a number from 1 to 4096, "
                                         "not '4x'; "));
    bt_test_result_release(&res);
}

static void test_send_resumes_and_show(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    char *args = path_in(c, "argv");
    char *kv = bt_xasprintf("FAKE_CODER_LOG_STDIN=%s", args);
    replay(c, "text");
    setenv_kv(c, kv);
    baton(c, &res, NULL, 0, "run", "--json", "Say hello banana", END);
    assert_int_equal(res.exit_code, 0);
    char *conv = conversation_of(res.out.data);
    bt_test_result_release(&res);
    free(c->env[c->nenv - 2]);
    c->env[c->nenv - 2] = bt_xasprintf("FAKE_CODER_REPLAY=%s/resume.jsonl", FIXTURES);
    char prefix[9];
    snprintf(prefix, sizeof(prefix), "%s", conv);
    baton(c, &res, NULL, 0, "send", "--json", prefix, "And again?", END);
    assert_int_equal(res.exit_code, 0);
    bt_test_result_release(&res);
    /* the second process resumed the thread named by the first */
    char *log = bt_test_slurp(args, NULL);
    assert_non_null(strstr(log, "\"method\":\"thread/resume\""));
    assert_non_null(strstr(log, "\"excludeTurns\":true"));
    free(log);
    baton(c, &res, NULL, 0, "show", "--json", conv, END);
    assert_int_equal(res.exit_code, 0);
    cJSON *doc = cJSON_Parse(res.out.data);
    cJSON *msgs = cJSON_GetObjectItem(doc, "messages");
    assert_int_equal(cJSON_GetArraySize(msgs), 4);
    assert_string_equal(bt_test_jstr(cJSON_GetArrayItem(msgs, 2), "text"), "And again?");
    cJSON_Delete(doc);
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "ls", END);
    assert_int_equal(res.exit_code, 0);
    assert_non_null(strstr(res.out.data, "Say hello banana"));
    bt_test_result_release(&res);
    free(conv);
    free(kv);
    free(args);
}

static void test_prompt_from_stdin(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    replay(c, "text");
    baton(c, &res, "Say hello banana\n", 0, "run", "--json", "-", END);
    assert_int_equal(res.exit_code, 0);
    char *conv = conversation_of(res.out.data);
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "show", "--json", conv, END);
    assert_non_null(strstr(res.out.data, "\"text\":\"Say hello banana\""));
    bt_test_result_release(&res);
    free(conv);
}

static void test_human_output(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    replay(c, "shell-auto");
    baton(c, &res, NULL, 0, "run", "--approval", "never", "[[shell:echo baton-ok]]", END);
    assert_int_equal(res.exit_code, 0);
    assert_null(strchr(res.out.data, '\x1b')); /* no colour off a terminal */
    assert_non_null(strstr(res.out.data, "ran "));
    assert_non_null(strstr(res.err.data, "conversation "));
    bt_test_result_release(&res);
}

/* ---- misbehaving coders --------------------------------------------- */

static void test_crash_curated_error(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    replay(c, "text");
    setenv_kv(c, "FAKE_CODER_CRASH_AFTER=3");
    setenv_kv(c, "FAKE_CODER_STDERR=panic at src/secret.rs:42 token=sk-123");
    baton(c, &res, NULL, 0, "run", "--json", "Say hello banana", END);
    assert_int_equal(res.exit_code, 1);
    cJSON **lines;
    size_t n = stream(res.out.data, &lines);
    const cJSON *end = last_event(lines, n);
    assert_string_equal(bt_test_jstr(end, "status"), "failed");
    assert_string_equal(bt_test_jstr(end, "error_kind"), "coder_crashed");
    assert_null(strstr(res.out.data, "sk-123")); /* stderr never in the error text */
    char *conv = conversation_of(res.out.data);
    bt_test_lines_free(lines, n);
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "show", "--debug", conv, END);
    assert_non_null(strstr(res.out.data, "sk-123")); /* but kept for diagnosis */
    bt_test_result_release(&res);
    free(conv);
}

static void test_never_exits_after_final_event(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    char *pidfile = path_in(c, "grandchild.pid");
    char *kv = bt_xasprintf("FAKE_CODER_PIDFILE=%s", pidfile);
    replay(c, "text");
    setenv_kv(c, "FAKE_CODER_NEVER_EXIT=1");
    setenv_kv(c, "FAKE_CODER_IGNORE_TERM=1");
    setenv_kv(c, "FAKE_CODER_GRANDCHILD=1");
    setenv_kv(c, kv);
    baton(c, &res, NULL, 0, "run", "--json", "Say hello banana", END);
    assert_int_equal(res.exit_code, 0);
    cJSON **lines;
    size_t n = stream(res.out.data, &lines);
    assert_string_equal(bt_test_jstr(last_event(lines, n), "status"), "completed");
    const cJSON *exit = cJSON_GetObjectItem(last_event(lines, n), "exit");
    assert_int_equal(cJSON_GetObjectItem(exit, "signal")->valueint, SIGKILL);
    int gc = read_pid(pidfile);
    assert_true(gc > 0);
    assert_false(alive(gc));
    bt_test_lines_free(lines, n);
    bt_test_result_release(&res);
    free(kv);
    free(pidfile);
}

static void test_stall_is_stopped(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    char *pidfile = path_in(c, "grandchild.pid");
    char *kv = bt_xasprintf("FAKE_CODER_PIDFILE=%s", pidfile);
    replay(c, "text");
    setenv_kv(c, "FAKE_CODER_HANG_AFTER=12");
    setenv_kv(c, "FAKE_CODER_GRANDCHILD=1");
    setenv_kv(c, kv);
    baton(c, &res, NULL, 0, "run", "--json", "--idle-timeout", "0.5", "Say hello banana", END);
    assert_int_equal(res.exit_code, 1);
    cJSON **lines;
    size_t n = stream(res.out.data, &lines);
    const cJSON *end = last_event(lines, n);
    assert_string_equal(bt_test_jstr(end, "status"), "failed");
    assert_string_equal(bt_test_jstr(end, "error_kind"), "stalled");
    assert_true(strlen(bt_test_jstr(end, "final_text")) > 0); /* partial text kept */
    assert_false(alive(read_pid(pidfile)));
    bt_test_lines_free(lines, n);
    bt_test_result_release(&res);
    free(kv);
    free(pidfile);
}

static void test_timeout(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    replay(c, "text");
    setenv_kv(c, "FAKE_CODER_DELAY_MS=200");
    baton(c, &res, NULL, 0, "run", "--json", "--timeout", "0.5", "Say hello banana", END);
    assert_int_equal(res.exit_code, 1);
    cJSON **lines;
    size_t n = stream(res.out.data, &lines);
    assert_string_equal(bt_test_jstr(last_event(lines, n), "error_kind"), "timeout");
    bt_test_lines_free(lines, n);
    bt_test_result_release(&res);
}

static void test_sigint_cancels(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    replay(c, "interrupt");
    setenv_kv(c, "FAKE_CODER_DELAY_MS=100");
    baton(c, &res, NULL, 700, "run", "--json", "[[slow]]", END);
    assert_int_equal(res.exit_code, 130);
    cJSON **lines;
    size_t n = stream(res.out.data, &lines);
    assert_string_equal(bt_test_jstr(last_event(lines, n), "status"), "cancelled");
    bt_test_lines_free(lines, n);
    bt_test_result_release(&res);
}

/* SIGTERM or SIGHUP to baton stops the turn like Ctrl-C: the coder's group
 * is stopped and the stream still ends with turn.completed. */
static void test_sigterm_and_sighup_cancel(void **state)
{
    struct ctx *c = *state;
    static const int sigs[] = {SIGTERM, SIGHUP};
    replay(c, "text");
    setenv_kv(c, "FAKE_CODER_HANG_AFTER=12");
    for (size_t i = 0; i < BT_ARRAY_SIZE(sigs); i++) {
        const char *argv[] = {BATON, "run", "--json", "hang", NULL};
        c->env[c->nenv] = NULL;
        struct bt_test_run r = {.argv = argv,
                                .env = (const char *const *)c->env,
                                .cwd = c->dir,
                                .timeout_s = 60,
                                .send_sigint_after_ms = 600,
                                .signal = sigs[i]};
        struct bt_test_result res;
        assert_int_equal(bt_test_exec(&r, &res), 0);
        assert_int_equal(res.exit_code, 130);
        cJSON **lines;
        size_t n = stream(res.out.data, &lines);
        assert_string_equal(bt_test_jstr(last_event(lines, n), "status"), "cancelled");
        bt_test_lines_free(lines, n);
        bt_test_result_release(&res);
    }
}

/* A send refused because a turn is running leaves nothing behind: the
 * prompt is stored with its run or not at all. */
static void test_noise_crlf_split_writes(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    replay(c, "text");
    setenv_kv(c, "FAKE_CODER_NOISE=1");
    setenv_kv(c, "FAKE_CODER_CRLF=1");
    setenv_kv(c, "FAKE_CODER_SPLIT_WRITES=1");
    baton(c, &res, NULL, 0, "run", "--json", "Say hello banana", END);
    assert_int_equal(res.exit_code, 0);
    cJSON **lines;
    size_t n = stream(res.out.data, &lines);
    assert_string_equal(bt_test_jstr(last_event(lines, n), "final_text"),
                        "Hello! You said: Say hello banana");
    assert_int_equal(count_type(lines, n, "warning", "noise"), 2); /* banner + ANSI line */
    assert_int_equal(count_type(lines, n, "warning", "invalid_json"), 0);
    assert_null(strstr(res.out.data, "\\r"));
    bt_test_lines_free(lines, n);
    bt_test_result_release(&res);
}

static void test_only_std_fds_in_coder(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    char *fds = path_in(c, "fds");
    char *kv = bt_xasprintf("FAKE_CODER_FDS=%s", fds);
    replay(c, "text");
    setenv_kv(c, kv);
    baton(c, &res, NULL, 0, "run", "--json", "Say hello banana", END);
    assert_int_equal(res.exit_code, 0);
    char *list = bt_test_slurp(fds, NULL);
    assert_non_null(list);
    int count = 0;
    for (char *line = strtok(list, "\n"); line; line = strtok(NULL, "\n")) {
        int fd = (int)strtol(line, NULL, 10);
        if (fd > 2)
            print_error("leaked fd into the coder: %s\n", line);
        assert_true(fd <= 2);
        count++;
    }
    assert_int_equal(count, 3);
    free(list);
    bt_test_result_release(&res);
    free(kv);
    free(fds);
}

static void test_raw_output_kept(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    replay(c, "text");
    baton(c, &res, NULL, 0, "run", "--json", "Say hello banana", END);
    cJSON **lines;
    size_t n = stream(res.out.data, &lines);
    char *raw = bt_xasprintf("%s/home/runs/%s.out.zst", c->dir, bt_test_jstr(lines[0], "run"));
    size_t want_len;
    struct bt_buf got = BT_BUF_INIT;
    int truncated = 1;
    assert_int_equal(bt_runfile_read(raw, &got, &truncated), 0);
    assert_int_equal(truncated, 0);
    char *want = bt_test_slurp(FIXTURES "/text.jsonl", &want_len);
    assert_int_equal(got.len, want_len);
    assert_memory_equal(got.data, want, want_len);
    struct stat st;
    assert_int_equal(stat(raw, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    bt_buf_release(&got);
    free(want);
    free(raw);
    bt_test_lines_free(lines, n);
    bt_test_result_release(&res);
}

/* ---- errors before anything runs ------------------------------------ */

static void test_not_installed(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    free(c->env[1]);
    c->env[1] = bt_xstrdup("BATON_CODEX_BIN=/nonexistent/codex");
    baton(c, &res, NULL, 0, "run", "--json", "hello", END);
    assert_int_equal(res.exit_code, 3);
    assert_int_equal(res.out.len, 0);
    /* the bad value that is set is named, not only the variable */
    assert_non_null(
        strstr(res.err.data, "BATON_CODEX_BIN=/nonexistent/codex is not an executable"));
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "coders", END);
    assert_non_null(
        strstr(res.out.data, "BATON_CODEX_BIN=/nonexistent/codex is not an executable"));
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "ls", "--json", END);
    assert_int_equal(res.out.len, 0); /* nothing was created */
    bt_test_result_release(&res);

    /* a coder that is not installed names those that are: here codex and
     * pi (the fake, by their variables), nothing on PATH */
    char *empty = path_in(c, "empty-path"), *kv = bt_xasprintf("PATH=%s", empty);
    assert_int_equal(mkdir(empty, 0700), 0);
    free(c->env[1]);
    c->env[1] = bt_xstrdup("BATON_CODEX_BIN=" FAKE);
    setenv_kv(c, "BATON_PI_BIN=" FAKE);
    setenv_kv(c, kv);
    static const char *const others[] = {"CLAUDE", "GEMINI", "OPENCODE", "COPILOT"};
    for (size_t i = 0; i < BT_ARRAY_SIZE(others); i++) {
        char *unset = bt_xasprintf("BATON_%s_BIN=", others[i]); /* empty: not set */
        setenv_kv(c, unset);
        free(unset);
    }
    baton(c, &res, NULL, 0, "run", "-c", "claude", "hello", END);
    assert_int_equal(res.exit_code, 3);
    assert_string_equal(res.err.data, "baton: claude is not installed: put 'claude' on PATH or "
                                      "set BATON_CLAUDE_BIN; installed: codex, pi\n");
    bt_test_result_release(&res);
    setenv_kv(c, "BATON_PI_BIN=/nonexistent/pi");
    baton(c, &res, NULL, 0, "run", "-c", "opencode", "--json", "hello", END);
    assert_int_equal(res.exit_code, 3);
    assert_int_equal(res.out.len, 0);
    assert_non_null(strstr(res.err.data, "; installed: codex\n"));
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "ls", "--json", END);
    assert_int_equal(res.out.len, 0); /* nothing was created */
    bt_test_result_release(&res);
    free(kv);
    free(empty);
}

/* The version directories of fixtures/<coder>/ (names starting with a
 * digit), read here rather than taken from baton; their number. */
static size_t fixture_versions(const char *coder, char **out, size_t cap)
{
    char *dir = bt_xasprintf("%s/fixtures/%s", BT_SOURCE_DIR, coder);
    DIR *d = opendir(dir);
    size_t n = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        char *p = bt_xasprintf("%s/%s", dir, e->d_name);
        struct stat st;
        if (e->d_name[0] >= '0' && e->d_name[0] <= '9' && stat(p, &st) == 0 &&
            S_ISDIR(st.st_mode)) {
            assert_true(n < cap);
            out[n++] = bt_xstrdup(e->d_name);
        }
        free(p);
    }
    if (d)
        closedir(d);
    free(dir);
    return n;
}

/* `baton coders --json` of the fake coder as codex, whose --version prints
 * say; the codex line, to free with cJSON_Delete. Every line's
 * tested_versions are its coder's fixture directories; a coder not
 * installed has tested null; steers says which coders steer. */
static cJSON *coders_codex(struct ctx *c, const char *say)
{
    char *kv = bt_xasprintf("FAKE_CODER_VERSION=%s", say);
    setenv_kv(c, kv);
    free(kv);
    struct bt_test_result res;
    baton(c, &res, NULL, 0, "coders", "--json", END);
    assert_int_equal(res.exit_code, 0);
    cJSON **lines;
    size_t n = bt_test_json_lines(res.out.data, &lines);
    assert_true(n >= 2);
    cJSON *codex = NULL;
    for (size_t i = 0; i < n; i++) {
        const char *coder = bt_test_jstr(lines[i], "coder");
        char *want[16] = {0};
        size_t nwant = fixture_versions(coder, want, 16);
        const cJSON *got = cJSON_GetObjectItem(lines[i], "tested_versions");
        assert_true(cJSON_IsArray(got));
        assert_int_equal(cJSON_GetArraySize(got), (int)nwant);
        for (size_t k = 0; k < nwant; k++) {
            int found = 0;
            const cJSON *v;
            cJSON_ArrayForEach(v, got) found |= strcmp(v->valuestring, want[k]) == 0;
            assert_true(found);
            free(want[k]);
        }
        if (!cJSON_IsTrue(cJSON_GetObjectItem(lines[i], "installed")))
            assert_true(cJSON_IsNull(cJSON_GetObjectItem(lines[i], "tested")));
        /* which coders steer a running turn: codex, pi, claude; ACP not */
        int steers =
            strcmp(coder, "codex") == 0 || strcmp(coder, "pi") == 0 || strcmp(coder, "claude") == 0;
        assert_true(cJSON_IsBool(cJSON_GetObjectItem(lines[i], "steers")));
        assert_int_equal(cJSON_IsTrue(cJSON_GetObjectItem(lines[i], "steers")), steers);
        if (strcmp(coder, "codex") == 0)
            codex = cJSON_Duplicate(lines[i], 1);
    }
    bt_test_lines_free(lines, n);
    bt_test_result_release(&res);
    assert_non_null(codex);
    return codex;
}

/* Whether the coder's version is one baton was tested with: a fixture
 * version, another version, no version understood. */
static void test_coders_tested_versions(void **state)
{
    struct ctx *c = *state;
    char *fixed[16] = {0};
    size_t n = fixture_versions("codex", fixed, 16);
    assert_true(n >= 1);
    char *say = bt_xasprintf("codex-cli %s", fixed[n - 1]);
    cJSON *codex = coders_codex(c, say);
    assert_string_equal(bt_test_jstr(codex, "version"), fixed[n - 1]);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(codex, "tested")));
    cJSON_Delete(codex);
    struct bt_test_result res;
    baton(c, &res, NULL, 0, "coders", END);
    assert_null(strstr(res.out.data, "untested"));
    bt_test_result_release(&res);

    codex = coders_codex(c, "codex-cli 0.0.1-untested");
    assert_string_equal(bt_test_jstr(codex, "version"), "0.0.1-untested");
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(codex, "tested")));
    cJSON_Delete(codex);
    baton(c, &res, NULL, 0, "coders", END);
    const char *note = strstr(res.out.data, "untested version; baton was tested with ");
    assert_non_null(note);
    for (size_t i = 0; i < n; i++)
        assert_non_null(strstr(note, fixed[i]));
    bt_test_result_release(&res);

    codex = coders_codex(c, "no version here");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(codex, "version")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(codex, "tested")));
    cJSON_Delete(codex);
    free(say);
    for (size_t i = 0; i < n; i++)
        free(fixed[i]);
}

static void test_usage_errors(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    const char *const cases[][4] = {
        {"run", NULL},
        {"run", "--approval", "maybe", "x"},
        {"run", "--timeout", "soon", "x"},
        {"run", "   ", NULL},
        {"run", "-c", "nosuchcoder", "x"},
        {"send", "zzzz", "x", NULL},
        {"show", "zzzz", NULL},
        {"frobnicate", NULL},
        {"run", "-C", "/nonexistent/dir", "x"},
        {"run", "-C", "/etc/passwd", "x"},
        {"run", "bad \xff utf-8", NULL},
        {"run", "--timeout", "nan", "x"},
        {"run", "--idle-timeout", "-1", "x"},
    };
    for (size_t i = 0; i < BT_ARRAY_SIZE(cases); i++) {
        baton(c, &res, NULL, 0, cases[i][0], cases[i][1], cases[i][2], cases[i][3], END);
        if (res.exit_code != 2)
            print_error("case %zu (%s %s): exit %d\n", i, cases[i][0],
                        cases[i][1] ? cases[i][1] : "", res.exit_code);
        assert_int_equal(res.exit_code, 2);
        assert_int_equal(res.out.len, 0);
        assert_true(res.err.len > 0);
        bt_test_result_release(&res);
    }
}

/* A stored native session the coder's command line cannot take (pi's is a
 * file path; a relative one could make pi ask on stdin) fails the turn as
 * resume_failed, naming the session; nothing starts. */
static void test_unusable_session_is_resume_failed(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    setenv_kv(c, "FAKE_CODER_REPLAY=" BT_SOURCE_DIR "/fixtures/pi/0.73.1/text.jsonl");
    setenv_kv(c, "BATON_PI_BIN=" FAKE);
    setenv_kv(c, "FAKE_CODER_VERSION=0.73.1");
    baton(c, &res, NULL, 0, "run", "-c", "pi", "--json", "Say hello banana", END);
    assert_int_equal(res.exit_code, 0);
    char *conv = conversation_of(res.out.data);
    bt_test_result_release(&res);
    char *db = bt_xasprintf("%s/home/baton.db", c->dir);
    sqlite3 *h;
    assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
    assert_int_equal(sqlite3_exec(h, "UPDATE conversations SET native_session_path = 'x.jsonl'",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(h);
    free(db);
    baton(c, &res, NULL, 0, "send", "--json", conv, "And again?", END);
    assert_int_equal(res.exit_code, 1);
    cJSON **lines;
    size_t n = stream(res.out.data, &lines);
    const cJSON *end = last_event(lines, n);
    assert_string_equal(bt_test_jstr(end, "status"), "failed");
    assert_string_equal(bt_test_jstr(end, "error_kind"), "resume_failed");
    assert_non_null(strstr(bt_test_jstr(end, "error"), "native session is not one pi can take"));
    bt_test_lines_free(lines, n);
    bt_test_result_release(&res);
    free(conv);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_text_turn),
        T(test_killed_while_waiting),
        T(test_bad_max_turns_said),
        T(test_send_resumes_and_show),
        T(test_prompt_from_stdin),
        T(test_human_output),
        T(test_crash_curated_error),
        T(test_never_exits_after_final_event),
        T(test_stall_is_stopped),
        T(test_timeout),
        T(test_sigint_cancels),
        T(test_sigterm_and_sighup_cancel),
        T(test_noise_crlf_split_writes),
        T(test_only_std_fds_in_coder),
        T(test_raw_output_kept),
        T(test_not_installed),
        T(test_coders_tested_versions),
        T(test_unusable_session_is_resume_failed),
        T(test_usage_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
