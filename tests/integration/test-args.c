/* SPDX-License-Identifier: MIT */
/*
 * integration tests: the command line a script can trust. Arguments that
 * look like options, usage errors that name what is wrong and exit 2, help
 * only when asked for alone, prompts from a pipe, the list commands'
 * outputs, and a stdout closed under a running turn.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"
#include "support.h"

/* Run baton, expecting a usage error that names want on stderr. */
static void expect_usage(struct ctx *c, const char *want, const char *first, ...)
{
    const char *argv[16] = {first};
    size_t n = 1;
    va_list ap;
    va_start(ap, first);
    for (const char *a = va_arg(ap, const char *); a && n < 15; a = va_arg(ap, const char *))
        argv[n++] = a;
    va_end(ap);
    struct bt_test_result res;
    baton(c, &res, NULL, 0, argv[0], n > 1 ? argv[1] : END, n > 2 ? argv[2] : END,
          n > 3 ? argv[3] : END, n > 4 ? argv[4] : END, END);
    if (res.exit_code != 2 || !strstr(res.err.data, want) || !strstr(res.err.data, "usage: baton"))
        print_error("baton %s %s: exit %d, stderr:\n%s\n(wanted '%s')\n", first,
                    n > 1 ? argv[1] : "", res.exit_code, res.err.data, want);
    assert_int_equal(res.exit_code, 2);
    assert_non_null(strstr(res.err.data, want));
    assert_non_null(strstr(res.err.data, "usage: baton"));
    assert_int_equal(res.out.len, 0);
    bt_test_result_release(&res);
}

/* The number of conversations in the store. */
static int conversations(struct ctx *c)
{
    struct bt_test_result res;
    baton(c, &res, NULL, 0, "ls", "--json", END);
    assert_int_equal(res.exit_code, 0);
    cJSON **lines;
    int n = (int)bt_test_json_lines(res.out.data, &lines);
    bt_test_lines_free(lines, (size_t)n);
    bt_test_result_release(&res);
    return n;
}

static char *run_one(struct ctx *c, const char *prompt)
{
    struct bt_test_result res;
    baton(c, &res, NULL, 0, "run", "--json", "--", prompt, END);
    assert_int_equal(res.exit_code, 0);
    char *conv = conversation_of(res.out.data);
    bt_test_result_release(&res);
    return conv;
}

static void test_prompts_like_options(void **state)
{
    struct ctx *c = *state;
    replay(c, "text");
    expect_usage(c, "unknown option '-hello'", "run", "-hello", END);
    expect_usage(c, "unknown option '-help me fix'", "run", "-help me fix", END);
    expect_usage(c, "unknown option '-dash prompt'", "run", "-dash prompt", END);
    expect_usage(c, "unknown option '--js' (did you mean --json?)", "run", "--js", "x", END);
    /* a typo: one edit away, two for longer names (a swap is one) */
    expect_usage(c, "unknown option '--jsn' (did you mean --json?)", "run", "--jsn", "x", END);
    expect_usage(c, "unknown option '--josn' (did you mean --json?)", "run", "--josn", "x", END);
    expect_usage(c, "unknown option '--modle' (did you mean --model?)", "run", "--modle", "x", END);
    expect_usage(c, "unknown option '--detatch' (did you mean --detach?)", "run", "--detatch", "x",
                 END);
    expect_usage(c, "unknown option '--apprvoal=auto' (did you mean --approval?)", "run",
                 "--apprvoal=auto", "x", END);
    /* nothing near: the hint for a prompt that starts with '-' */
    expect_usage(c, "unknown option '--zzz' (text that starts with '-' goes after --", "run",
                 "--zzz", "x", END);
    expect_usage(c, "--model needs a value (MODEL), not the option '--json'", "run", "--model",
                 "--json", "x", END);
    expect_usage(c, "-c needs a value (CODER)", "run", "x", "-c", END);
    expect_usage(c, "--json takes no value", "run", "--json=yes", "x", END);
    assert_int_equal(conversations(c), 0); /* nothing ran, nothing stored */
    char *conv = run_one(c, "-dash prompt");
    expect_usage(c, "unknown option '-dash prompt'", "send", conv, "-dash prompt", END);
    expect_usage(c, "unknown option '-dz'", "show", "-dz", conv, END);
    expect_usage(c, "unexpected argument 'extra'", "ls", "extra", END);
    expect_usage(c, "missing PROMPT", "send", "C", "--json", END);
    expect_usage(c, "missing CONV", "show", END);
    expect_usage(c, "unexpected argument 'two'", "rm", "one", "two", END);
    expect_usage(c, "--last takes a positive number, not 'x'", "show", "--last", "x", conv, END);

    /* after --, what looks like an option is the prompt, stored as typed */
    struct bt_test_result res;
    baton(c, &res, NULL, 0, "show", "--json", conv, END);
    assert_non_null(strstr(res.out.data, "\"text\":\"-dash prompt\""));
    bt_test_result_release(&res);
    free(run_one(c, "--help"));
    assert_int_equal(conversations(c), 2);
    free(conv);
}

static void test_help_alone(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res, ref;
    baton(c, &ref, NULL, 0, "run", "--help", END);
    assert_int_equal(ref.exit_code, 0);
    assert_non_null(strstr(ref.out.data, "usage: baton run"));
    assert_non_null(strstr(ref.out.data, "--idle-timeout S"));
    baton(c, &res, NULL, 0, "help", "run", END);
    assert_int_equal(res.exit_code, 0);
    assert_string_equal(res.out.data, ref.out.data); /* one text, two ways */
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "run", "-c", "codex", "-h", END);
    assert_string_equal(res.out.data, ref.out.data);
    bt_test_result_release(&res);
    bt_test_result_release(&ref);
    expect_usage(c, "-h/--help goes alone: 'fix it' on the same line may be meant as an argument",
                 "run", "--help", "fix it", END);
    expect_usage(c, "-h/--help goes alone", "send", "C", "-h", END);
    expect_usage(c, "unknown option '--bogus'", "ls", "--bogus", "--help", END);

    baton(c, &res, NULL, 0, "help", "nosuch", END);
    assert_int_equal(res.exit_code, 2);
    assert_non_null(strstr(res.err.data, "no command 'nosuch'"));
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "-V", END);
    assert_int_equal(res.exit_code, 0);
    assert_non_null(strstr(res.out.data, "baton "));
    baton(c, &ref, NULL, 0, "--version", END);
    assert_string_equal(res.out.data, ref.out.data);
    bt_test_result_release(&res);
    bt_test_result_release(&ref);
    baton(c, &res, NULL, 0, "--help", END);
    assert_int_equal(res.exit_code, 0);
    assert_non_null(strstr(res.out.data, "-V | --version"));
    assert_non_null(strstr(res.out.data, "baton help [COMMAND]"));
    bt_test_result_release(&res);
}

/* Every command's help fits a terminal of 80 columns and names -h. */
static void test_help_of_every_command(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result list, res;
    baton(c, &list, NULL, 0, "--help", END);
    const char *p = strstr(list.out.data, "commands:\n");
    assert_non_null(p);
    int seen = 0;
    for (p = strchr(p, '\n') + 1; strncmp(p, "  ", 2) == 0; p = strchr(p, '\n') + 1) {
        char name[32];
        assert_int_equal(sscanf(p, " %31s", name), 1);
        baton(c, &res, NULL, 0, "help", name, END);
        assert_int_equal(res.exit_code, 0);
        assert_non_null(strstr(res.out.data, "-h, --help"));
        for (const char *l = res.out.data; *l; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != 0))
            if (strcspn(l, "\n") > 79)
                fail_msg("baton help %s: a line of %zu columns: %.*s", name, strcspn(l, "\n"),
                         (int)strcspn(l, "\n"), l);
        bt_test_result_release(&res);
        seen++;
    }
    assert_true(seen >= 12);
    bt_test_result_release(&list);
}

/* The top level: -V alone, unknown commands get the short usage, and
 * every exit code `baton --help` lists is in baton(1) too. */
static void test_top_level(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res, man;
    baton(c, &res, NULL, 0, "-V", "extra", END);
    assert_int_equal(res.exit_code, 2);
    assert_non_null(strstr(res.err.data, "-V goes alone, not with 'extra'"));
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "nosuch", END);
    assert_int_equal(res.exit_code, 2);
    assert_non_null(strstr(res.err.data, "unknown command 'nosuch'"));
    assert_non_null(strstr(res.err.data, "usage: baton COMMAND"));
    assert_null(strstr(res.err.data, "commands:")); /* the reason, not the whole help */
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "--bogus", END);
    assert_int_equal(res.exit_code, 2);
    assert_non_null(strstr(res.err.data, "unknown option '--bogus'"));
    bt_test_result_release(&res);

    baton(c, &res, NULL, 0, "--help", END);
    baton(c, &man, NULL, 0, "__man", END);
    assert_int_equal(man.exit_code, 0);
    /* its first line names where the text is edited, files that exist */
    assert_non_null(strstr(man.out.data, "edit each command's in src/cli/cmd-*.c, the rest in "
                                         "src/cli/cmd-doc.c and src/cli/main.c\n.TH"));
    const char *p = strstr(res.out.data, "exit codes:");
    const char *end = strstr(res.out.data, "environment:");
    assert_non_null(p);
    assert_non_null(end);
    int codes = 0;
    for (p += strlen("exit codes:"); p < end; p++) {
        if (p[-1] != ' ' || *p < '0' || *p > '9')
            continue;
        char *after;
        long code = strtol(p, &after, 10);
        char want[32];
        snprintf(want, sizeof(want), "\\fB%ld\\fR", code);
        if (!strstr(man.out.data, want))
            fail_msg("exit code %ld of --help is not in baton(1)", code);
        codes++;
        p = after;
    }
    assert_int_equal(codes, 7);
    bt_test_result_release(&res);
    bt_test_result_release(&man);
}

static void test_prompt_from_a_pipe(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    replay(c, "text");
    baton(c, &res, "Say hello banana\n", 0, "run", "--json", END);
    assert_int_equal(res.exit_code, 0);
    char *conv = conversation_of(res.out.data);
    bt_test_result_release(&res);
    baton(c, &res, "piped follow-up\n", 0, "send", "--json", conv, END);
    assert_int_equal(res.exit_code, 0);
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "show", "--json", conv, END);
    assert_non_null(strstr(res.out.data, "\"text\":\"Say hello banana\""));
    assert_non_null(strstr(res.out.data, "\"text\":\"piped follow-up\""));
    bt_test_result_release(&res);

    /* an empty pipe, blanks or /dev/null is no prompt: one message and
     * the usage line, whether PROMPT is - or missing */
    static const char *const empty[] = {"", " \n\n"};
    char *first = NULL;
    for (size_t i = 0; i < 2; i++) {
        for (int dash = 0; dash < 2; dash++) {
            baton(c, &res, empty[i], 0, "run", dash ? "-" : END, END);
            assert_int_equal(res.exit_code, 2);
            assert_int_equal(res.out.len, 0);
            assert_non_null(strstr(res.err.data, "baton run: missing PROMPT: stdin holds no text\n"
                                                 "usage: baton run "));
            if (!first)
                first = bt_xstrdup(res.err.data);
            assert_string_equal(res.err.data, first);
            bt_test_result_release(&res);
        }
    }
    free(first);
    assert_int_equal(conversations(c), 1);

    /* a terminal on stdin is never read without -: say what is missing at
     * once (without the fix this waits for typing until the timeout) */
    const char *argv[] = {"script", "-qec", BATON " run", "/dev/null", NULL};
    run_in(c, argv, &res);
    assert_non_null(strstr(res.out.data, "missing PROMPT")); /* the pty carries stderr */
    bt_test_result_release(&res);
    free(conv);
}

static void test_list_outputs(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    replay(c, "text");
    baton(c, &res, NULL, 0, "ls", "--json-array", END);
    assert_int_equal(res.exit_code, 0);
    assert_string_equal(res.out.data, "[]\n");
    bt_test_result_release(&res);
    free(run_one(c, "first"));
    free(run_one(c, "second"));
    baton(c, &res, NULL, 0, "ls", "--json-array", END);
    cJSON *arr = cJSON_Parse(res.out.data);
    assert_true(cJSON_IsArray(arr));
    assert_int_equal(cJSON_GetArraySize(arr), 2);
    assert_string_equal(bt_test_jstr(cJSON_GetArrayItem(arr, 0), "title"), "second");
    cJSON_Delete(arr);
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "ls", "--limit", "1", "--json", END);
    cJSON **lines;
    assert_int_equal(bt_test_json_lines(res.out.data, &lines), 1);
    assert_string_equal(bt_test_jstr(lines[0], "title"), "second");
    assert_non_null(strchr(bt_test_jstr(lines[0], "updated"), 'Z')); /* JSON: UTC */
    bt_test_lines_free(lines, 1);
    bt_test_result_release(&res);
    /* 0 and a negative number: one sentence, what --limit takes */
    expect_usage(c, "--limit takes a number from 1 to 1000000, not '0'", "ls", "--limit", "0", END);
    expect_usage(c, "--limit takes a number from 1 to 1000000, not '-1'", "ls", "--limit", "-1",
                 END);
    expect_usage(c, "--limit takes a number from 1 to 1000000, not '-1'", "ls", "--limit=-1", END);
    expect_usage(c, "--limit needs a value (N), not '--json'", "ls", "--limit", "--json", END);
    expect_usage(c, "--json and --json-array go alone", "ls", "--json", "--json-array", END);
    expect_usage(c, "--json and --json-array go alone", "coders", "--json-array", "--json", END);

    /* people get local time with its zone */
    setenv_kv(c, "TZ=UTC");
    baton(c, &res, NULL, 0, "ls", END);
    assert_non_null(strstr(res.out.data, " UTC  second"));
    bt_test_result_release(&res);
    setenv_kv(c, "TZ=Asia/Tokyo");
    baton(c, &res, NULL, 0, "ls", "--limit", "1", END);
    assert_non_null(strstr(res.out.data, " JST  second"));
    assert_null(strstr(res.out.data, "first"));
    bt_test_result_release(&res);

    baton(c, &res, NULL, 0, "search", "--json-array", "second", END);
    arr = cJSON_Parse(res.out.data);
    assert_int_equal(cJSON_GetArraySize(arr), 1);
    cJSON_Delete(arr);
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "coders", "--json-array", END);
    arr = cJSON_Parse(res.out.data);
    assert_true(cJSON_GetArraySize(arr) >= 2);
    cJSON_Delete(arr);
    bt_test_result_release(&res);
}

/* baton | head: the reader is gone, so the turn stops (a coder that hangs
 * after its first lines keeps it running forever otherwise) and baton
 * exits 141 as a tool killed by SIGPIPE would. */
static void closed_stdout(struct ctx *c, const char *json_flag, const char *hang_after,
                          const char *reader)
{
    char *script = bt_xasprintf("\"$0\" run %s 'Say hello banana' | %s >/dev/null; "
                                "echo \"exit=${PIPESTATUS[0]}\" >&2",
                                json_flag, reader);
    const char *argv[] = {"bash", "-c", script, BATON, NULL};
    char *kv = bt_xasprintf("FAKE_CODER_HANG_AFTER=%s", hang_after);
    setenv_kv(c, kv);
    free(kv);
    struct bt_test_result res;
    run_in(c, argv, &res);
    if (!strstr(res.err.data, "exit=141"))
        print_error("stderr: %s\n", res.err.data);
    assert_non_null(strstr(res.err.data, "exit=141"));
    assert_non_null(strstr(res.err.data, "stdout was closed, so the turn was stopped"));
    bt_test_result_release(&res);
    free(script);
}

static void test_closed_stdout(void **state)
{
    struct ctx *c = *state;
    replay(c, "text");
    closed_stdout(c, "--json", "8", "head -c 20");
    closed_stdout(c, "", "13", "head -c 3"); /* after some answer text */
    closed_stdout(c, "--json", "1", "true"); /* gone before anything came */
    closed_stdout(c, "", "1", "true");
    struct bt_test_result res;
    baton(c, &res, NULL, 0, "ls", "--json", END);
    cJSON **lines;
    assert_int_equal(bt_test_json_lines(res.out.data, &lines), 4);
    for (int i = 0; i < 4; i++)
        assert_string_equal(bt_test_jstr(lines[i], "last_run_state"), "cancelled");
    bt_test_lines_free(lines, 4);
    bt_test_result_release(&res);
}

static void test_declined_approval_one_line(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    replay(c, "shell-declined");
    baton(c, &res, NULL, 0, "run", "[[shell:echo baton-ok]]", END);
    assert_int_equal(res.exit_code, 0);
    int n = 0;
    for (const char *p = res.out.data; (p = strstr(p, "declined")) != NULL; p++)
        n++;
    if (n != 1)
        print_error("stdout:\n%s\n", res.out.data);
    assert_int_equal(n, 1);
    assert_non_null(strstr(res.out.data, "declined by policy: "));
    bt_test_result_release(&res);
}

/* A completed turn is never sent again: exit 2, even where the coder is
 * not installed (the state refuses before the coder is looked up). */
static void test_retry_state_first(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    replay(c, "text");
    char *conv = run_one(c, "hello");
    setenv_kv(c, "BATON_CODEX_BIN=/nonexistent/codex");
    baton(c, &res, NULL, 0, "retry", conv, END);
    assert_int_equal(res.exit_code, 2);
    assert_non_null(strstr(res.err.data, "never sent again"));
    bt_test_result_release(&res);
    free(conv);
}

/* Every command's output must arrive: a full disk is exit 1 with the
 * reason, a reader gone is 141, never 0 with the output lost. */
static void test_stdout_of_every_command(void **state)
{
    struct ctx *c = *state;
    replay(c, "text");
    char *conv = run_one(c, "hello");
    const char *lines[] = {"ls",           "ls --json",       "show CONV", "show --json CONV",
                           "search hello", "coders",          "--help",    "help run",
                           "-V",           "completion bash", "__man"};
    for (size_t i = 0; i < BT_ARRAY_SIZE(lines); i++) {
        char *line = bt_xstrdup(lines[i]);
        char *conv_at = strstr(line, "CONV");
        char *cmd =
            conv_at ? bt_xasprintf("%.*s%s", (int)(conv_at - line), line, conv) : bt_xstrdup(line);
        char *script = bt_xasprintf("\"$0\" %s >/dev/full; echo \"full=$?\" >&2; "
                                    "\"$0\" %s | head -c 1 >/dev/null; "
                                    "echo \"pipe=${PIPESTATUS[0]}\" >&2",
                                    cmd, cmd);
        const char *argv[] = {"bash", "-c", script, BATON, NULL};
        struct bt_test_result res;
        run_in(c, argv, &res);
        if (!strstr(res.err.data, "full=1") || !strstr(res.err.data, "cannot write to stdout"))
            fail_msg("baton %s >/dev/full: %s", cmd, res.err.data);
        /* head -c 1 may read all a short output before it exits */
        if (!strstr(res.err.data, "pipe=141") && !strstr(res.err.data, "pipe=0"))
            fail_msg("baton %s | head -c 1: %s", cmd, res.err.data);
        bt_test_result_release(&res);
        free(script);
        free(cmd);
        free(line);
    }
    free(conv);
}

/* attach | head: the follower stops (141), the turn goes on to its end. */
static void test_attach_closed_stdout(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    replay(c, "text");
    setenv_kv(c, "FAKE_CODER_DELAY_MS=150"); /* about 3 s of turn */
    baton(c, &res, NULL, 0, "run", "--detach", "--json", "slow one", END);
    assert_int_equal(res.exit_code, 0);
    cJSON *started = cJSON_Parse(res.out.data);
    char *conv = bt_xstrdup(bt_test_jstr(started, "conversation"));
    cJSON_Delete(started);
    bt_test_result_release(&res);
    char *script = bt_xasprintf("\"$0\" attach --json %s | head -c 10 >/dev/null; "
                                "echo \"exit=${PIPESTATUS[0]}\" >&2",
                                conv);
    const char *argv[] = {"bash", "-c", script, BATON, NULL};
    run_in(c, argv, &res);
    assert_non_null(strstr(res.err.data, "exit=141"));
    assert_non_null(strstr(res.err.data, "the turn goes on"));
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "attach", conv, END); /* it went on, to its end */
    assert_int_equal(res.exit_code, 0);
    bt_test_result_release(&res);
    free(script);
    free(conv);
}

static void test_values_checked(void **state)
{
    struct ctx *c = *state;
    replay(c, "text");
    expect_usage(c, "-m needs a model name", "run", "-m", "", "x", END);
    expect_usage(c, "--model: a model name is up to 256 bytes of UTF-8 text", "run",
                 "--model=bad\xffname", "x", END);
    expect_usage(c, "a model name has no control characters", "run", "-m", "a\nb", "x", END);
    /* claude's runner refused it only when the turn started, as a bad session id */
    expect_usage(c, "a model name does not start with '-'", "run", "-c", "claude",
                 "--model=--dangerously-skip-permissions", "x", END);
    const char *seconds[] = {"0x10", "+5", " 5", "1e3", ".", "-0", "5s"};
    for (size_t i = 0; i < BT_ARRAY_SIZE(seconds); i++) {
        char *opt = bt_xasprintf("--timeout=%s", seconds[i]);
        expect_usage(c, "--timeout takes seconds", "run", opt, "x", END);
        free(opt);
    }
    expect_usage(c, "--from takes an event number", "attach", "--from", "+5", "C", END);
    expect_usage(c, "--from takes an event number", "attach", "--from=99999999999999999999", "C",
                 END);
    /* an unknown coder: a usage error like the others, naming them all */
    expect_usage(c, "unknown coder 'nosuch' (one of: codex, pi, claude, gemini, opencode, copilot)",
                 "run", "-c", "nosuch", "x", END);
    expect_usage(c, "unknown coder 'nope' (one of: codex, pi,", "run", "--coder=codex,nope", "x",
                 END);
    expect_usage(c, "--coder takes coders separated by commas, not 'codex,,pi'", "run",
                 "--coder=codex,,pi", "x", END);
    expect_usage(c, "unknown coder 'nosuch' (one of: codex, pi,", "acp", "-c", "nosuch", END);
    expect_usage(c, "missing bash|zsh", "completion", END);
    expect_usage(c, "--debug is for the text output", "show", "--json", "--debug", "C", END);
    expect_usage(c, "cannot use '/nonexistent' as the working directory: No such file", "run", "-C",
                 "/nonexistent", "x", END);
    setenv_kv(c, "BATON_HOME=relative/home");
    struct bt_test_result rel;
    baton(c, &rel, NULL, 0, "ls", END);
    assert_int_equal(rel.exit_code, 2);
    assert_non_null(
        strstr(rel.err.data, "BATON_HOME must be an absolute path, not 'relative/home'"));
    bt_test_result_release(&rel);
    char *home = path_in(c, "home");
    char *kv = bt_xasprintf("BATON_HOME=%s", home);
    setenv_kv(c, kv);
    free(kv);
    free(home);
    expect_usage(c, "--tmux and --print exclude each other", "handoff", "--tmux", "--print", "C",
                 END);
    assert_int_equal(conversations(c), 0);
    struct bt_test_result res;
    baton(c, &res, NULL, 0, "run", "--timeout", "2.5", "--json", "x", END); /* a fraction is fine */
    assert_int_equal(res.exit_code, 0);
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "help", "--help", END);
    assert_int_equal(res.exit_code, 0);
    assert_non_null(strstr(res.out.data, "usage: baton help"));
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "__worker", "--help", END);
    assert_int_equal(res.exit_code, 0);
    bt_test_result_release(&res);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_prompts_like_options),
        T(test_help_alone),
        T(test_help_of_every_command),
        T(test_prompt_from_a_pipe),
        T(test_list_outputs),
        T(test_closed_stdout),
        T(test_declined_approval_one_line),
        T(test_top_level),
        T(test_retry_state_first),
        T(test_stdout_of_every_command),
        T(test_attach_closed_stdout),
        T(test_values_checked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
