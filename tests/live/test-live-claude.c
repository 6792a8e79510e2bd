/* SPDX-License-Identifier: MIT */
/*
 * live claude tests: the real Claude Code CLI (pinned, from npm; path in
 * BATON_TEST_CLAUDE_BIN) driven by the real baton binary against the local
 * stand-in model endpoint (tests/standin, Anthropic Messages). Without a
 * claude binary the whole program exits 77, which ctest reports as Skipped
 * (never Passed).
 */
#include <dirent.h>
#include <limits.h>
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

#define CLAUDE_ENV BT_SOURCE_DIR "/tests/live/claude-env.sh"
#define CONFIG "claude-config" /* the config dir under bt_live.dir */

#define BATON BT_BINARY_DIR "/baton"

static int setup(void **state)
{
    (void)state;
    bt_live_setup("live-claude", CLAUDE_ENV, CONFIG, "BATON_CLAUDE_BIN",
                  getenv("BATON_TEST_CLAUDE_BIN"));
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    bt_live_teardown();
    return 0;
}

/* baton run --json in the work directory with args after "run -c claude
 * --json"; the stream in *lines. */
static size_t run_json(const char *const *extra, int want_exit, cJSON ***lines)
{
    const char *args[16] = {"run", "-c", "claude", "--json"};
    size_t n = 4;
    for (; *extra && n < 15; extra++)
        args[n++] = *extra;
    args[n] = NULL;
    return bt_live_json(bt_live.work, args, want_exit, lines);
}

static void test_text_turn(void **state)
{
    (void)state;
    cJSON **lines;
    const char *args[] = {"Say hello banana", NULL};
    size_t n = run_json(args, 0, &lines);
    assert_string_equal(bt_live_status(lines, n), "completed");
    assert_true(bt_live_message_deltas(lines, n) > 1);
    const cJSON *u = bt_live_first(lines, n, "usage");
    assert_non_null(u);
    assert_true(cJSON_GetObjectItem(u, "input_tokens")->valuedouble > 0);
    assert_true(cJSON_GetObjectItem(u, "output_tokens")->valuedouble > 0);
    assert_true(cJSON_GetObjectItem(u, "context_window")->valuedouble > 0);
    assert_true(cJSON_IsNumber(cJSON_GetObjectItem(u, "cost_usd")));
    const cJSON *s = bt_live_first(lines, n, "session.started");
    assert_non_null(s);
    assert_non_null(bt_test_jstr(s, "native_session_id"));
    assert_string_equal(bt_test_jstr(lines[n - 1], "final_text"),
                        "Hello! You said: Say hello banana");
    bt_test_lines_free(lines, n);
}

static void test_send_from_another_directory(void **state)
{
    (void)state;
    cJSON **lines;
    const char *args[] = {"Remember kumquat", NULL};
    size_t n = run_json(args, 0, &lines);
    char *conv = bt_xstrdup(bt_test_jstr(lines[0], "conversation"));
    bt_test_lines_free(lines, n);

    n = bt_live_send(conv, "again", 0, &lines);
    assert_string_equal(bt_live_status(lines, n), "completed");
    const cJSON *s = bt_live_first(lines, n, "session.started");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(s, "resumed")));
    bt_test_lines_free(lines, n);
    char *req = bt_live_last_request();
    assert_non_null(strstr(req, "Remember kumquat")); /* the first turn, in the history */
    assert_non_null(strstr(req, "again"));
    free(req);
    free(conv);
}

/* claude asks before a command that writes (can_use_tool): deny by
 * default, the command does not run and the turn goes on. */
static void test_bash_denied(void **state)
{
    (void)state;
    cJSON **lines;
    const char *args[] = {"[[shell:touch denied-file && echo baton-ok]]", NULL};
    size_t n = run_json(args, 0, &lines);
    assert_string_equal(bt_live_status(lines, n), "completed");
    const cJSON *res = bt_live_first(lines, n, "approval.resolved");
    assert_non_null(res);
    assert_string_equal(bt_test_jstr(res, "decision"), "decline");
    const cJSON *item = bt_live_command_item(lines, n);
    assert_non_null(item);
    assert_string_equal(bt_test_jstr(item, "status"), "declined");
    assert_false(bt_live_exists(bt_live.work, "denied-file"));
    bt_test_lines_free(lines, n);
}

static void test_bash_auto(void **state)
{
    (void)state;
    cJSON **lines;
    const char *args[] = {"--approval", "auto", "[[shell:touch allowed-file && echo baton-ok]]",
                          NULL};
    size_t n = run_json(args, 0, &lines);
    assert_string_equal(bt_live_status(lines, n), "completed");
    const cJSON *res = bt_live_first(lines, n, "approval.resolved");
    assert_non_null(res);
    assert_string_equal(bt_test_jstr(res, "decision"), "accept");
    const cJSON *item = bt_live_command_item(lines, n);
    assert_non_null(item);
    assert_string_equal(bt_test_jstr(item, "status"), "completed");
    assert_non_null(strstr(bt_test_jstr(item, "text"), "baton-ok"));
    assert_true(bt_live_exists(bt_live.work, "allowed-file"));
    bt_test_lines_free(lines, n);
}

/* claude asks the user (its AskUserQuestion tool, through can_use_tool)
 * under --approval auto: a user_input request with the question and its
 * options, never allowed; claude hands the model baton's reason, and the
 * turn completes. */
static void test_question_not_answered(void **state)
{
    (void)state;
    cJSON **lines;
    const char *args[] = {"--approval", "auto", "[[ask:Which colour?]]", NULL};
    size_t n = run_json(args, 0, &lines);
    assert_string_equal(bt_live_status(lines, n), "completed");
    const cJSON *rq = bt_live_first(lines, n, "approval.requested");
    assert_non_null(rq);
    assert_string_equal(bt_test_jstr(rq, "kind"), "user_input");
    assert_string_equal(bt_test_jstr(rq, "summary"), "Which colour?");
    const cJSON *q = cJSON_GetArrayItem(cJSON_GetObjectItem(rq, "questions"), 0);
    assert_non_null(q);
    assert_string_equal(bt_test_jstr(q, "text"), "Which colour?");
    assert_string_equal(bt_test_jstr(q, "header"), "Choice");
    const cJSON *opts = cJSON_GetObjectItem(q, "options");
    assert_int_equal(cJSON_GetArraySize(opts), 2);
    assert_string_equal(bt_test_jstr(cJSON_GetArrayItem(opts, 0), "label"), "Yes");
    assert_string_equal(bt_test_jstr(cJSON_GetArrayItem(opts, 1), "description"), "stop here");
    const cJSON *res = bt_live_first(lines, n, "approval.resolved");
    assert_non_null(res);
    assert_string_equal(bt_test_jstr(res, "decision"), "decline");
    assert_string_equal(bt_test_jstr(res, "by"), "policy");
    /* the stand-in answers with the first line of what the tool gave back */
    const cJSON *end = lines[n - 1];
    assert_non_null(strstr(bt_test_jstr(end, "final_text"), "Nobody can answer this question"));
    bt_test_lines_free(lines, n);
}

/* `baton run -c claude --json --approval ask PROMPT` in the background,
 * stdout to out; once its approval.requested is out, the conversation's
 * id (caller frees) and the pid in *pid. */
static char *run_asking(const char *prompt, const char *out, pid_t *pid)
{
    const char *argv[] = {BATON, "run",        "-c",         "claude", "--json",
                          "-C",  bt_live.work, "--approval", "ask",    "--idle-timeout",
                          "120", prompt,       NULL};
    *pid = bt_test_spawn_bg(argv, (const char *const *)bt_live.env, out);
    assert_true(*pid > 0);
    char *conv = NULL;
    for (int64_t t0 = 0; !conv && bt_test_poll(&t0);) {
        char *text = bt_test_slurp(out, NULL);
        if (text && strstr(text, "\"type\":\"approval.requested\"")) {
            cJSON *first = cJSON_ParseWithLength(text, strcspn(text, "\n"));
            conv = bt_xstrdup(bt_test_jstr(first, "conversation"));
            cJSON_Delete(first);
        }
        free(text);
    }
    assert_non_null(conv);
    return conv;
}

/* A person's decision from another process (`baton approve` or `baton
 * answer` with args), then the run's end: exit 0, completed, and its
 * approval.resolved says decision by "user". The stream in *lines. */
static size_t decided(const char *const *args, pid_t pid, const char *out, const char *decision,
                      cJSON ***lines, char **text)
{
    struct bt_test_result res;
    bt_live_baton(bt_live.work, args, &res, 0);
    assert_int_equal(res.exit_code, 0);
    bt_test_result_release(&res);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    *text = bt_test_slurp(out, NULL);
    size_t n = bt_live_stream(*text, lines);
    assert_string_equal(bt_live_status(*lines, n), "completed");
    const cJSON *r = bt_live_first(*lines, n, "approval.resolved");
    assert_non_null(r);
    assert_string_equal(bt_test_jstr(r, "decision"), decision);
    assert_string_equal(bt_test_jstr(r, "by"), "user");
    return n;
}

/* --approval ask: claude's command request waits for a person; allowed
 * with `baton approve --allow` the command runs, denied it does not. */
static void test_bash_asked(void **state)
{
    (void)state;
    static const struct {
        const char *prompt, *verdict, *decision, *file;
        int made;
    } cases[] = {
        {"[[shell:touch asked-yes && echo baton-ok]]", "--allow", "accept", "asked-yes", 1},
        {"[[shell:touch asked-no && echo baton-ok]]", "--deny", "decline", "asked-no", 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *out = bt_xasprintf("%s/asked-%zu.out", bt_live.dir, i);
        pid_t pid;
        char *conv = run_asking(cases[i].prompt, out, &pid);
        const char *args[] = {"approve", conv, cases[i].verdict, NULL};
        cJSON **lines;
        char *text;
        size_t n = decided(args, pid, out, cases[i].decision, &lines, &text);
        assert_int_equal(bt_live_exists(bt_live.work, cases[i].file), cases[i].made);
        bt_test_lines_free(lines, n);
        free(text);
        free(conv);
        free(out);
    }
}

/* The question of test_question_not_answered under --approval ask,
 * answered with `baton answer` from another process while the turn waits:
 * claude gets the words through AskUserQuestion's answers, and the
 * stand-in sees them in the model's next request (the tool's result). */
static void test_question_answered(void **state)
{
    (void)state;
    char *out = bt_xasprintf("%s/ask.out", bt_live.dir);
    pid_t pid;
    char *conv = run_asking("[[ask:Which colour?]]", out, &pid);
    const char *args[] = {"answer", conv, "Magenta zebra", NULL};
    cJSON **lines;
    char *text;
    size_t n = decided(args, pid, out, "accept", &lines, &text);
    const char *const seen[] = {"Magenta zebra", NULL};
    assert_true(bt_live_request_with(seen, 30));
    bt_test_lines_free(lines, n);
    free(text);
    free(conv);
    free(out);
}

/* The transcript path baton stores before claude starts is where claude
 * writes it, also for a directory with non-ASCII characters (claude counts
 * UTF-16 code units) and one whose name claude cuts and hashes (over 200). */
/* A turn in its own worktree writes a file; two at once; keep one. */
static void test_worktree(void **state)
{
    (void)state;
    static const char *const run[] = {"-c", "claude", NULL};
    static const char *const fan[] = {"-c", "claude,claude", NULL};
    bt_live_worktree_scenario(run, fan);
}

static void test_transcript_path_of_odd_directories(void **state)
{
    (void)state;
    char *dirs[2];
    dirs[0] = bt_xasprintf("%s/caf\xc3\xa9 \xf0\x9f\x98\x80", bt_live.work);
    dirs[1] = bt_xasprintf("%s/long", bt_live.work);
    assert_int_equal(mkdir(dirs[0], 0700), 0);
    assert_int_equal(mkdir(dirs[1], 0700), 0);
    for (int i = 0; i < 5; i++) {
        char *d = bt_xasprintf("%s/%s", dirs[1], "dddddddddddddddddddddddddddddddddddddddd");
        assert_int_equal(mkdir(d, 0700), 0);
        free(dirs[1]);
        dirs[1] = d;
    }
    for (size_t i = 0; i < 2; i++) {
        const char *args[] = {"run", "-c", "claude", "--json", "Say hi", NULL};
        struct bt_test_result res;
        bt_live_baton(dirs[i], args, &res, 0);
        assert_int_equal(res.exit_code, 0);
        cJSON **lines;
        size_t n = bt_live_stream(res.out.data, &lines);
        const char *path =
            bt_test_jstr(bt_live_first(lines, n, "session.started"), "native_session_path");
        assert_non_null(path);
        struct stat st;
        if (stat(path, &st) != 0)
            fail_msg("claude wrote no transcript at %s", path);
        bt_test_lines_free(lines, n);
        bt_test_result_release(&res);
        free(dirs[i]);
    }
}

static void test_interrupt_is_quick(void **state)
{
    (void)state;
    const char *opts[] = {"-c", "claude", NULL};
    bt_live_interrupt_scenario(opts);
}

/* The pid of a process (not this one) whose command line starts with
 * needle, or with parent holds it, or 0. */
static pid_t process_with(const char *needle, pid_t parent)
{
    DIR *d = opendir("/proc");
    pid_t found = 0;
    for (struct dirent *e; d && !found && (e = readdir(d));) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 1 || pid == getpid())
            continue;
        char *path = bt_xasprintf("/proc/%ld/cmdline", pid);
        size_t n = 0;
        char *cmd = bt_test_slurp(path, &n);
        free(path);
        for (size_t i = 0; cmd && i + 1 < n; i++)
            if (!cmd[i])
                cmd[i] = ' ';
        int match = cmd && (parent ? strstr(cmd, needle) != NULL
                                   : strncmp(cmd, needle, strlen(needle)) == 0);
        free(cmd);
        if (match && parent) {
            char *st = bt_xasprintf("/proc/%ld/stat", pid);
            char *text = bt_test_slurp(st, NULL);
            const char *paren = text ? strrchr(text, ')') : NULL;
            /* ") <state> <ppid> ..." */
            char *end2 = NULL;
            long ppid =
                paren && paren[1] && paren[2] && paren[3] ? strtol(paren + 4, &end2, 10) : 0;
            match = end2 && end2 != paren + 4 && ppid == parent;
            free(text);
            free(st);
        }
        if (match)
            found = (pid_t)pid;
    }
    if (d)
        closedir(d);
    return found;
}

/* claude killed mid-turn while its Bash tool runs (claude starts the tool
 * in a session of its own, outside claude's group): coder_crashed, and
 * the tool's process does not outlive the turn. */
static void test_killed_mid_tool(void **state)
{
    (void)state;
    char *out = bt_xasprintf("%s/killed.out", bt_live.dir);
    char *marker = bt_xasprintf("%s/killed-marker", bt_live.dir);
    FILE *f = fopen(marker, "w");
    assert_non_null(f);
    fclose(f);
    char *prompt = bt_xasprintf("[[shell:tail -f %s]]", marker);
    const char *argv[] = {BATON,        "run",  "-c",   "claude", "--json",
                          "--approval", "auto", prompt, NULL};
    char *cwd = getcwd(NULL, 0);
    assert_int_equal(chdir(bt_live.work), 0);
    pid_t pid = bt_test_spawn_bg(argv, (const char *const *)bt_live.env, out);
    assert_int_equal(chdir(cwd), 0);
    free(cwd);
    char *tail = bt_xasprintf("tail -f %s", marker);
    pid_t tool = 0, claude = 0;
    for (int i = 0; i < 1500 && !tool; i++) {
        tool = process_with(tail, 0);
        if (!tool)
            usleep(20000);
    }
    assert_true(tool > 0);
    claude = process_with("--include-partial-messages", pid);
    assert_true(claude > 0);
    kill(claude, SIGKILL);
    int st;
    waitpid(pid, &st, 0);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 1);
    char *text = bt_test_slurp(out, NULL);
    cJSON **lines;
    size_t n = bt_live_stream(text, &lines);
    assert_string_equal(bt_live_status(lines, n), "failed");
    assert_string_equal(bt_test_jstr(lines[n - 1], "error_kind"), "coder_crashed");
    if (process_with(tail, 0))
        fail_msg("claude's tool process (%s) outlived the turn", tail);
    bt_test_lines_free(lines, n);
    free(text);
    free(tail);
    free(prompt);
    free(marker);
    free(out);
}

/* --no-retry reaches claude as its CLAUDE_CODE_MAX_RETRIES setting: the
 * 500 fails at once (claude's default is 10 retries over minutes). */
static void test_http_500_without_retries(void **state)
{
    (void)state;
    cJSON **lines;
    const char *args[] = {"--no-retry", "[[http500]]", NULL};
    size_t n = run_json(args, 1, &lines);
    assert_string_equal(bt_live_status(lines, n), "failed");
    const cJSON *err = lines[n - 2];
    assert_string_equal(bt_live_type(err), "error");
    const char *msg = bt_test_jstr(err, "message");
    assert_non_null(strstr(msg, "claude could not complete the turn")); /* baton's sentence */
    assert_non_null(strstr(msg, "500"));                                /* claude's reason */
    bt_test_lines_free(lines, n);
}

/* A conversation whose transcript claude no longer has: resume_failed. */
static void test_unknown_session(void **state)
{
    (void)state;
    cJSON **lines;
    const char *args[] = {"Say hi", NULL};
    size_t n = run_json(args, 0, &lines);
    char *conv = bt_xstrdup(bt_test_jstr(lines[0], "conversation"));
    const char *path =
        bt_test_jstr(bt_live_first(lines, n, "session.started"), "native_session_path");
    assert_non_null(path);
    assert_int_equal(unlink(path), 0);
    bt_test_lines_free(lines, n);

    n = bt_live_send(conv, "hello again", 1, &lines);
    assert_string_equal(bt_live_status(lines, n), "failed");
    const cJSON *err = lines[n - 2];
    assert_string_equal(bt_test_jstr(err, "kind"), "resume_failed");
    assert_non_null(strstr(bt_test_jstr(err, "message"), "No conversation found"));
    bt_test_lines_free(lines, n);
    free(conv);
}

/* claude's terminal UI asks once per directory whether it is trusted
 * (kept in <config>/.claude.json, projects.<dir>.hasTrustDialogAccepted);
 * the answer is given beforehand, as a user would have. */
static void trust_work_dir(void)
{
    char *path = bt_xasprintf("%s/%s/.claude.json", bt_live.dir, CONFIG);
    char *text = bt_test_slurp(path, NULL);
    cJSON *root = text ? cJSON_Parse(text) : cJSON_CreateObject();
    assert_non_null(root);
    char real[PATH_MAX];
    assert_non_null(realpath(bt_live.work, real));
    cJSON *projects = cJSON_GetObjectItem(root, "projects");
    if (!projects)
        projects = cJSON_AddObjectToObject(root, "projects");
    cJSON *p = cJSON_AddObjectToObject(projects, real);
    cJSON_AddTrueToObject(p, "hasTrustDialogAccepted");
    char *out = cJSON_Print(root);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(out, f);
    assert_int_equal(fclose(f), 0);
    cJSON_free(out);
    cJSON_Delete(root);
    free(text);
    free(path);
}

/* Handoff to claude's own terminal UI in tmux: `claude --resume <id>`. */
static void test_handoff_tmux(void **state)
{
    (void)state;
    trust_work_dir();
    const char *opts[] = {"-c", "claude", NULL};
    const char *ready[] = {"shift+tab to cycle", NULL}; /* the footer, once it takes input */
    bt_live_handoff_scenario(opts, ready);
}

int main(void)
{
    const char *bin = getenv("BATON_TEST_CLAUDE_BIN");
    if (!bin || !*bin || access(bin, X_OK) != 0) {
        printf("skipped: BATON_TEST_CLAUDE_BIN does not name a claude executable "
               "(tests/scripts/test.sh installs the pinned one)\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text_turn),
        cmocka_unit_test(test_send_from_another_directory),
        cmocka_unit_test(test_bash_denied),
        cmocka_unit_test(test_bash_auto),
        cmocka_unit_test(test_question_not_answered),
        cmocka_unit_test(test_bash_asked),
        cmocka_unit_test(test_question_answered),
        cmocka_unit_test(test_worktree),
        cmocka_unit_test(test_transcript_path_of_odd_directories),
        cmocka_unit_test(test_interrupt_is_quick),
        cmocka_unit_test(test_killed_mid_tool),
        cmocka_unit_test(test_http_500_without_retries),
        cmocka_unit_test(test_unknown_session),
        cmocka_unit_test(test_handoff_tmux),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
