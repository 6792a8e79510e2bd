/* SPDX-License-Identifier: MIT */
/*
 * live-acp: the scenarios every ACP coder's live test runs (live-acp.h),
 * against the real CLI and the stand-in, through the real baton binary.
 */
#define _XOPEN_SOURCE 700
#include "live-acp.h"

#include <ftw.h>
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

#include "live.h"

/* baton run -c CODER --json OPTS... EXTRA... in cwd; asserts the exit
 * status; the stream in *lines. */
static size_t run_json(const struct bt_live_acp *a, const char *cwd, const char *const *extra,
                       int want_exit, cJSON ***lines)
{
    const char *args[24] = {"run", "-c", a->coder, "--json"};
    size_t n = 4;
    for (const char *const *o = a->opts; o && *o && n < 16; o++)
        args[n++] = *o;
    for (; *extra && n < 23; extra++)
        args[n++] = *extra;
    args[n] = NULL;
    return bt_live_json(cwd, args, want_exit, lines);
}

static const char *final_text(cJSON **lines, size_t n)
{
    const char *t = bt_test_jstr(lines[n - 1], "final_text");
    return t ? t : "";
}

void bt_live_acp_text_turn(const struct bt_live_acp *a)
{
    cJSON **lines;
    const char *args[] = {"Say hello banana", NULL};
    size_t n = run_json(a, bt_live.work, args, 0, &lines);
    assert_string_equal(bt_live_status(lines, n), "completed");
    assert_true(bt_live_message_deltas(lines, n) > 1);
    const cJSON *s = bt_live_first(lines, n, "session.started");
    assert_non_null(s);
    assert_non_null(bt_test_jstr(s, "native_session_id"));
    assert_string_equal(final_text(lines, n), "Hello! You said: Say hello banana");
    bt_test_lines_free(lines, n);
}

/* ---- the coder's files, to see that a refused resume touched none ---- */

static struct bt_buf *tree_out;
static const char *tree_only, *tree_id;

static int tree_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)ftw;
    if ((tree_only && !strstr(path, tree_only)) || (tree_id && !strstr(path, tree_id)))
        return 0;
    uint64_t h = 1469598103934665603ull; /* FNV-1a of the contents */
    size_t len = 0;
    char *data = type == FTW_F ? bt_test_slurp(path, &len) : NULL;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)data[i]) * 1099511628211ull;
    free(data);
    bt_buf_addf(tree_out, "%s %lld %016llx\n", path, (long long)st->st_size, (unsigned long long)h);
    return 0;
}

/* Every file under dir whose path holds only and id (NULL: anything) with
 * its size and a hash of its contents. */
static char *tree(const char *dir, const char *only, const char *id)
{
    struct bt_buf out = BT_BUF_INIT;
    tree_out = &out;
    tree_only = only;
    tree_id = id;
    nftw(dir, tree_entry, 16, FTW_PHYS);
    tree_out = NULL;
    bt_buf_addc(&out, '\0');
    return bt_buf_detach(&out, NULL);
}

void bt_live_acp_send_elsewhere(const struct bt_live_acp *a)
{
    cJSON **lines;
    const char *args[] = {"Remember kumquat", NULL};
    size_t n = run_json(a, bt_live.work, args, 0, &lines);
    char *conv = bt_xstrdup(bt_test_jstr(lines[0], "conversation"));
    /* gemini names a session's file after the first 8 of its id */
    char id8[9];
    snprintf(id8, sizeof id8, "%s",
             bt_test_jstr(bt_live_first(lines, n, "session.started"), "native_session_id"));
    bt_test_lines_free(lines, n);

    char *home = bt_xasprintf("%s/%s", bt_live.dir, a->home);
    char *before = tree(home, a->session_files, id8);
    if (!a->resumes && !*before)
        fail_msg("no file of %s's session %s under %s", a->coder, id8, home);
    n = bt_live_send(conv, "again", a->resumes ? 0 : 1, &lines);
    if (a->resumes) {
        assert_string_equal(bt_live_status(lines, n), "completed");
        const cJSON *s = bt_live_first(lines, n, "session.started");
        assert_non_null(s);
        assert_true(cJSON_IsTrue(cJSON_GetObjectItem(s, "resumed")));
        /* the first turn in the history of the second's request */
        const char *want[] = {"Remember kumquat", "again", NULL};
        assert_true(bt_live_request_with(want, 5));
    } else {
        assert_string_equal(bt_live_status(lines, n), "failed");
        assert_string_equal(bt_test_jstr(lines[n - 1], "error_kind"), "resume_failed");
        char *after = tree(home, a->session_files, id8);
        if (strcmp(before, after) != 0)
            fail_msg("the refused resume changed %s's files:\n%s---\n%s", a->coder, before, after);
        free(after);
    }
    bt_test_lines_free(lines, n);
    free(before);
    free(home);
    free(conv);
}

void bt_live_acp_bash(const struct bt_live_acp *a, int allow)
{
    const char *file = allow ? "allowed-file" : "denied-file";
    char *prompt = bt_xasprintf("[[shell:touch %s && echo baton-ok]]", file);
    const char *args[] = {"--approval", allow ? "auto" : "deny", prompt, NULL};
    cJSON **lines;
    size_t n = run_json(a, bt_live.work, args, 0, &lines);
    /* a denied command ends the turn in opencode and copilot, and is told to
     * the model in gemini: completed either way (docs/acp.md) */
    assert_string_equal(bt_live_status(lines, n), "completed");
    const cJSON *res = bt_live_first(lines, n, "approval.resolved");
    assert_non_null(res);
    assert_string_equal(bt_test_jstr(res, "decision"), allow ? "accept" : "decline");
    assert_string_equal(bt_test_jstr(res, "kind"), "command");
    const cJSON *item = bt_live_command_item(lines, n);
    if (allow) {
        assert_non_null(item);
        assert_string_equal(bt_test_jstr(item, "status"), "completed");
        assert_non_null(strstr(final_text(lines, n), "baton-ok"));
    } else if (item) { /* gemini announces no tool call it was refused */
        assert_string_equal(bt_test_jstr(item, "status"), "failed");
    }
    assert_int_equal(bt_live_exists(bt_live.work, file), allow);
    bt_test_lines_free(lines, n);
    free(prompt);
}

void bt_live_acp_interrupt(const struct bt_live_acp *a)
{
    const char *opts[12] = {"-c", a->coder};
    size_t n = 2;
    for (const char *const *o = a->opts; o && *o && n < 11; o++)
        opts[n++] = *o;
    opts[n] = NULL;
    bt_live_interrupt_scenario(opts);
}

/* Run the coder's env script again with arg (NULL: none) after DIR PORT:
 * it rewrites the coder's settings, keeping its sessions. */
static void env_again(const struct bt_live_acp *a, const char *arg)
{
    char *portfile = bt_xasprintf("%s/port", bt_live.dir);
    char *port = bt_test_slurp(portfile, NULL);
    assert_non_null(port);
    port[strcspn(port, "\n")] = '\0';
    char *dir = bt_xasprintf("%s/%s", bt_live.dir, a->home);
    const char *argv[] = {"/bin/bash", a->env_script, dir, port, arg, NULL};
    struct bt_test_run r = {.argv = argv, .timeout_s = 60};
    struct bt_test_result res;
    assert_int_equal(bt_test_exec(&r, &res), 0);
    assert_int_equal(res.exit_code, 0);
    bt_test_result_release(&res);
    free(dir);
    free(port);
    free(portfile);
}

/* A model request that fails (prompt, with the env script's extra
 * argument env_arg or none): failed, exit 1, model_error, with an error
 * event holding want (may be NULL) and an answer without it. */
static void model_failure(const struct bt_live_acp *a, const char *what, const char *prompt,
                          const char *env_arg, const char *want)
{
    if (env_arg)
        env_again(a, env_arg);
    const char *args[] = {prompt, NULL};
    cJSON **lines;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    size_t n = run_json(a, bt_live.work, args, 1, &lines);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("%s: the turn took %.1f s\n", what,
           (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
    assert_string_equal(bt_live_status(lines, n), "failed");
    assert_string_equal(bt_test_jstr(lines[n - 1], "error_kind"), "model_error");
    const cJSON *err = lines[n - 2];
    assert_string_equal(bt_live_type(err), "error");
    if (want)
        assert_non_null(strstr(bt_test_jstr(err, "message"), want));
    /* neither the retry notices nor the error are the answer */
    assert_null(strstr(final_text(lines, n), want ? want : "stand-in"));
    bt_test_lines_free(lines, n);
    if (env_arg)
        env_again(a, NULL);
}

void bt_live_acp_http500(const struct bt_live_acp *a)
{
    model_failure(a, "http500", a->http500_prompt, a->http500_env_arg, "500");
}

void bt_live_acp_stream_error(const struct bt_live_acp *a)
{
    if (!a->stream_error) {
        printf("stream error: not run for %s: %s\n", a->coder, a->stream_error_skip);
        skip();
    }
    model_failure(a, "stream error", "[[failed:server_error]]", a->http500_env_arg,
                  a->stream_error);
}

void bt_live_acp_handoff_print(const struct bt_live_acp *a)
{
    cJSON **lines;
    const char *args[] = {"Say hi", NULL};
    size_t n = run_json(a, bt_live.work, args, 0, &lines);
    char *conv = bt_xstrdup(bt_test_jstr(lines[0], "conversation"));
    const cJSON *s = bt_live_first(lines, n, "session.started");
    assert_non_null(s);
    char *want = bt_xasprintf("%s%s", a->handoff_flag, bt_test_jstr(s, "native_session_id"));
    bt_test_lines_free(lines, n);
    struct bt_test_result res;
    const char *handoff[] = {"handoff", "--print", conv, NULL};
    bt_live_baton(bt_live.other, handoff, &res, 0);
    assert_int_equal(res.exit_code, 0);
    if (!strstr(res.out.data, want))
        fail_msg("handoff --print gave '%s', without %s", res.out.data, want);
    assert_non_null(strstr(res.out.data, bt_live.work)); /* run in the session's directory */
    bt_test_result_release(&res);
    free(want);
    free(conv);
}

/* ---- rm: the coder's own CLI no longer has the session -------------- */

/* The coder's own CLI with args (+ flag id when flag is not NULL) in
 * bt_live.work, with the harness's environment; its exit status, its
 * stdout and stderr in *out (caller frees). */
static int coder_cli(const struct bt_live_acp *a, const char *const *args, const char *flag,
                     const char *id, char **out)
{
    const char *argv[16] = {getenv(a->test_bin_var)};
    size_t n = 1;
    for (; args && *args && n < 14; args++)
        argv[n++] = *args;
    char *last = flag ? bt_xasprintf("%s%s", flag, id) : NULL;
    if (last)
        argv[n++] = last;
    argv[n] = NULL;
    struct bt_test_run r = {.argv = argv,
                            .env = (const char *const *)bt_live.env,
                            .cwd = bt_live.work,
                            .timeout_s = 120};
    struct bt_test_result res;
    assert_int_equal(bt_test_exec(&r, &res), 0);
    assert_false(res.timed_out);
    *out = bt_xasprintf("%s%s", res.out.data ? res.out.data : "", res.err.data ? res.err.data : "");
    int code = res.exit_code;
    bt_test_result_release(&res);
    free(last);
    return code;
}

/* 1 if the coder's own CLI has session id (list_args or find_args). */
static int coder_has(const struct bt_live_acp *a, const char *id)
{
    char *out;
    int has;
    if (a->list_args) {
        assert_int_equal(coder_cli(a, a->list_args, NULL, NULL, &out), 0);
        has = strstr(out, id) != NULL;
    } else {
        has = coder_cli(a, a->find_args, a->find_flag, id, &out) == 0;
    }
    printf("%s %s session %s: %s", a->coder, has ? "has" : "has no", id, out);
    free(out);
    return has;
}

/* A first turn in bt_live.work: its conversation (caller frees) and
 * native session id (owned). */
static char *turn(const struct bt_live_acp *a, const char *prompt, char **sid)
{
    cJSON **lines;
    const char *args[] = {prompt, NULL};
    size_t n = run_json(a, bt_live.work, args, 0, &lines);
    assert_string_equal(bt_live_status(lines, n), "completed");
    char *conv = bt_xstrdup(bt_test_jstr(lines[0], "conversation"));
    const cJSON *s = bt_live_first(lines, n, "session.started");
    assert_non_null(s);
    *sid = bt_xstrdup(bt_test_jstr(s, "native_session_id"));
    bt_test_lines_free(lines, n);
    return conv;
}

void bt_live_acp_rm(const struct bt_live_acp *a)
{
    char *gone_id, *kept_id;
    char *gone = turn(a, "Remember apple", &gone_id);
    char *kept = turn(a, "Remember pear", &kept_id);
    free(kept);
    assert_true(coder_has(a, gone_id)); /* the check can see a session */
    char *home = bt_xasprintf("%s/%s", bt_live.dir, a->home);
    char *before = tree(home, NULL, gone_id);
    printf("%s's files named by %s before rm:\n%s", a->coder, gone_id, before);

    struct bt_test_result res;
    const char *rm[] = {"rm", "-y", gone, NULL};
    bt_live_baton(bt_live.other, rm, &res, 0);
    printf("baton rm: %s", res.out.data);
    assert_int_equal(res.exit_code, 0);
    char *said = bt_xasprintf("removed %s session", a->coder);
    assert_non_null(strstr(res.out.data, said));
    assert_null(strstr(res.out.data, "kept the"));
    bt_test_result_release(&res);

    assert_false(coder_has(a, gone_id));
    assert_true(coder_has(a, kept_id));
    char *after = tree(home, NULL, gone_id);
    for (char *l = after; *l;) { /* every path left must be one the coder leaves too */
        size_t n = strcspn(l, "\n");
        char *line = bt_xstrndup(l, n);
        if (!a->rm_leaves || !strstr(line, a->rm_leaves))
            fail_msg("files of %s's removed session %s are left:\n%s", a->coder, gone_id, after);
        free(line);
        l += n + (l[n] == '\n');
    }
    if (a->session_files) { /* gemini's chat files: the first 8 of the id */
        char id8[9];
        snprintf(id8, sizeof id8, "%s", gone_id);
        char *chats = tree(home, a->session_files, id8);
        if (*chats)
            fail_msg("chat files of %s's removed session are left:\n%s", a->coder, chats);
        free(chats);
    }
    free(after);
    free(said);
    free(before);
    free(home);
    free(kept_id);
    free(gone_id);
    free(gone);
}

/* ---- one program per coder ------------------------------------------ */

static const struct bt_live_acp *acp; /* the coder of this program */

static int acp_setup(void **state)
{
    (void)state;
    char prefix[64];
    snprintf(prefix, sizeof prefix, "live-%s", acp->coder);
    bt_live_setup(prefix, acp->env_script, acp->home, acp->bin_var, getenv(acp->test_bin_var));
    return 0;
}

static int acp_teardown(void **state)
{
    (void)state;
    bt_live_teardown();
    return 0;
}

static void test_text_turn(void **state)
{
    (void)state;
    bt_live_acp_text_turn(acp);
}

static void test_send_from_another_directory(void **state)
{
    (void)state;
    bt_live_acp_send_elsewhere(acp);
}

static void test_bash_denied(void **state)
{
    (void)state;
    bt_live_acp_bash(acp, 0);
}

static void test_bash_auto(void **state)
{
    (void)state;
    bt_live_acp_bash(acp, 1);
}

static void test_interrupt_is_quick(void **state)
{
    (void)state;
    bt_live_acp_interrupt(acp);
}

static void test_handoff_print(void **state)
{
    (void)state;
    bt_live_acp_handoff_print(acp);
}

static void test_rm(void **state)
{
    (void)state;
    bt_live_acp_rm(acp);
}

static void test_http_500(void **state)
{
    (void)state;
    bt_live_acp_http500(acp);
}

static void test_stream_error(void **state)
{
    (void)state;
    bt_live_acp_stream_error(acp);
}

int bt_live_acp_main(const struct bt_live_acp *a)
{
    const char *bin = getenv(a->test_bin_var);
    if (!bin || !*bin || access(bin, X_OK) != 0) {
        printf("skipped: %s does not name a %s executable (tests/scripts/test.sh installs the "
               "pinned one)\n",
               a->test_bin_var, a->coder);
        return 77;
    }
    acp = a;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text_turn),
        cmocka_unit_test(test_send_from_another_directory),
        cmocka_unit_test(test_bash_denied),
        cmocka_unit_test(test_bash_auto),
        cmocka_unit_test(test_interrupt_is_quick),
        cmocka_unit_test(test_handoff_print),
        cmocka_unit_test(test_rm),
        cmocka_unit_test(test_http_500),
        cmocka_unit_test(test_stream_error),
    };
    return cmocka_run_group_tests(tests, acp_setup, acp_teardown);
}
