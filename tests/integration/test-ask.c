/* SPDX-License-Identifier: MIT */
/*
 * integration tests of --approval ask (docs/events.md, "Answered by a
 * person"), through the baton binary and tests/fake-coder as codex
 * replaying fixtures/codex/0.171.0/shell-approved.jsonl: codex asks to run
 * a command (request id 0) and waits for the answer, which baton writes
 * only when a person decides, the idle watchdog fires, or the turn is
 * stopped. What baton wrote to the coder is the fake's stdin log.
 * The tests wait for the store to show the request waiting, never for a
 * time.
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

#include <cmocka.h>

#include "harness.h"
#include "store.h"

#define DECLINE_ANSWER "{\"id\":0,\"result\":{\"decision\":\"decline\"}}\n"
#define ACCEPT_ANSWER "{\"id\":0,\"result\":{\"decision\":\"accept\"}}\n"
#define CANCEL_ANSWER "{\"id\":0,\"result\":{\"decision\":\"cancel\"}}\n"

/* The replay, and FAKE_CODER_LOG_STDIN to see the answer. */
static void ask_replay(struct ctx *c)
{
    replay(c, "shell-approved");
    char *log = path_in(c, "stdin.log");
    char *kv = bt_xasprintf("FAKE_CODER_LOG_STDIN=%s", log);
    setenv_kv(c, kv);
    free(kv);
    free(log);
}

/* What baton wrote to the coder (caller frees). */
static char *coder_stdin(struct ctx *c)
{
    char *log = path_in(c, "stdin.log");
    char *text = bt_test_slurp(log, NULL);
    free(log);
    assert_non_null(text);
    return text;
}

static int count_type(void *data, const struct bt_store_event *ev)
{
    const char **want = data;
    if (strcmp(ev->type, want[0]) == 0)
        want[1] = ""; /* seen */
    return 0;
}

/* Wait until the only conversation's running run shows approval.requested
 * (the request waits for a person); its conversation id (caller frees). */
static char *wait_asking(struct ctx *c)
{
    char *home = path_in(c, "home");
    struct bt_store *s = NULL;
    char *conv = NULL;
    for (int64_t t0 = 0; !conv && bt_test_poll(&t0);) {
        if (!s && bt_store_open(home, &s, NULL) != 0)
            continue;
        struct bt_store_conversation *v = NULL;
        size_t n = 0;
        if (bt_store_conversation_list(s, 0, &v, &n) != 0 || n != 1) {
            bt_store_conversation_list_free(v, n);
            continue;
        }
        struct bt_store_run r;
        if (bt_store_run_last(s, v[0].id, &r) == 0) {
            const char *want[2] = {"approval.requested", NULL};
            assert_int_equal(bt_store_event_each(s, r.id, 1, count_type, want), 0);
            if (r.state == BT_STORE_RUN_RUNNING && want[1])
                conv = bt_xstrdup(v[0].id);
            bt_store_run_release(&r);
        }
        bt_store_conversation_list_free(v, n);
    }
    if (s)
        bt_store_close(s);
    free(home);
    assert_non_null(conv);
    return conv;
}

static char *slurp_out(struct ctx *c, const char *name)
{
    char *path = path_in(c, name);
    char *out = bt_test_slurp(path, NULL);
    free(path);
    assert_non_null(out);
    return out;
}

/* `baton run --json --approval ask` in the background (stdout to "out")
 * with the shell-approved replay (ask_replay), once its request waits; its
 * conversation id (caller frees) and pid. */
static char *start_asking(struct ctx *c, const char *idle_timeout, pid_t *pid)
{
    ask_replay(c);
    *pid = baton_bg(c, "out", "run", "--json", "--approval", "ask", "--idle-timeout", idle_timeout,
                    "hi", END);
    return wait_asking(c);
}

/* Nobody answers within the idle timeout: the policy behind ask declines,
 * by "timeout", and the turn goes on to its end. */
static void test_timeout_declines(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    ask_replay(c);
    baton(c, &res, NULL, 0, "run", "--json", "--approval", "ask", "--idle-timeout", "1", "hi", END);
    assert_int_equal(res.exit_code, 0);
    assert_non_null(strstr(res.out.data, "\"type\":\"approval.requested\",\"seq\""));
    assert_non_null(strstr(res.out.data, "\"request_id\":\"0\""));
    assert_non_null(strstr(res.out.data, "\"decision\":\"decline\",\"by\":\"timeout\""));
    assert_null(strstr(res.out.data, "\"decision\":\"accept\""));
    assert_non_null(strstr(res.out.data, "\"status\":\"completed\""));
    char *in = coder_stdin(c);
    assert_non_null(strstr(in, DECLINE_ANSWER));
    assert_null(strstr(in, ACCEPT_ANSWER));
    free(in);
    bt_test_result_release(&res);
}

/* `baton cancel` while the request waits: it is declined by "cancel"
 * (codex decision "cancel") before the interrupt, never granted. */
static void test_cancel_while_pending(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    pid_t pid;
    char *conv = start_asking(c, "30", &pid);
    baton(c, &res, NULL, 0, "cancel", conv, END);
    assert_int_equal(res.exit_code, 0);
    bt_test_result_release(&res);
    assert_int_equal(wait_exit(pid), 130);
    char *out = slurp_out(c, "out");
    assert_non_null(strstr(out, "\"decision\":\"decline\",\"by\":\"cancel\""));
    assert_null(strstr(out, "\"decision\":\"accept\""));
    assert_non_null(strstr(out, "\"status\":\"cancelled\""));
    char *in = coder_stdin(c);
    assert_non_null(strstr(in, CANCEL_ANSWER));
    assert_null(strstr(in, ACCEPT_ANSWER));
    free(in);
    free(out);
    free(conv);
}

/* A decision from another terminal through `baton approve`, once the
 * request waits: allowed, codex gets decision accept, and by "user". */
static void approve_with(struct ctx *c, const char *verdict, const char *answer,
                         const char *resolved)
{
    struct bt_test_result res;
    pid_t pid;
    char *conv = start_asking(c, "30", &pid);
    baton(c, &res, NULL, 0, "approve", conv, "--list", END);
    assert_int_equal(res.exit_code, 0);
    assert_non_null(strstr(res.out.data, "0\tcommand\t/bin/bash -lc 'echo baton-ok'\n"));
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "approve", conv, "0", verdict, END);
    assert_int_equal(res.exit_code, 0);
    bt_test_result_release(&res);
    assert_int_equal(wait_exit(pid), 0);
    char *out = slurp_out(c, "out");
    assert_non_null(strstr(out, resolved));
    char *in = coder_stdin(c);
    assert_non_null(strstr(in, answer));
    free(in);
    free(out);
    free(conv);
}

static void test_approve_allow(void **state)
{
    approve_with(*state, "--allow", ACCEPT_ANSWER, "\"decision\":\"accept\",\"by\":\"user\"");
}

static void test_approve_deny(void **state)
{
    approve_with(*state, "--deny", DECLINE_ANSWER, "\"decision\":\"decline\",\"by\":\"user\"");
}

/* `baton attach` to a turn whose request waits for a person says so, once,
 * with the command that answers it; answered so, the turn and attach end. */
static void test_attach_says_what_waits(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    pid_t run;
    char *conv = start_asking(c, "30", &run);
    pid_t attach = baton_bg_err(c, "attach.out", "attach.err", "attach", conv, END);
    char *want = bt_xasprintf("baton: command /bin/bash -lc 'echo baton-ok' waits for you: baton "
                              "approve %.12s 0 --allow (or --always, --deny)\n",
                              conv);
    char *path = path_in(c, "attach.err"), *err = NULL;
    for (int64_t t0 = 0; bt_test_poll(&t0);) {
        free(err);
        err = bt_test_slurp(path, NULL);
        if (err && strstr(err, want))
            break;
    }
    assert_true(err && strstr(err, want));
    baton(c, &res, NULL, 0, "approve", conv, "0", "--deny", END);
    assert_int_equal(res.exit_code, 0);
    bt_test_result_release(&res);
    assert_int_equal(wait_exit(attach), 0);
    assert_int_equal(wait_exit(run), 0);
    free(err);
    err = bt_test_slurp(path, NULL);
    const char *at = strstr(err, want);
    assert_non_null(at);
    assert_null(strstr(at + strlen(want), "waits for you")); /* said once */
    char *out = slurp_out(c, "attach.out");
    assert_non_null(strstr(out, "declined by user"));
    free(out);
    free(err);
    free(path);
    free(want);
    free(conv);
}

/* A second answer, once the first was given, while the turn still runs
 * (held after the line that follows the answer): refused (exit 1), and
 * nothing more reaches the coder. (After a timeout the same: the request
 * no longer waits; test_timeout_declines has that decline.) */
static void test_late_answer_refused(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    hold_turns(c, 13);
    pid_t pid;
    char *conv = start_asking(c, "30", &pid);
    baton(c, &res, NULL, 0, "approve", conv, "0", "--deny", END);
    assert_int_equal(res.exit_code, 0);
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "approve", conv, "0", "--allow", END);
    assert_int_equal(res.exit_code, 1);
    assert_non_null(strstr(res.err.data, "request 0 of"));
    assert_non_null(strstr(res.err.data, "does not wait for an answer"));
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "answer", conv, "--decline", END); /* nothing else waits */
    assert_int_equal(res.exit_code, 1);
    bt_test_result_release(&res);
    release_turns(c);
    assert_int_equal(wait_exit(pid), 0);
    char *out = slurp_out(c, "out");
    assert_non_null(strstr(out, "\"decision\":\"decline\",\"by\":\"user\""));
    assert_null(strstr(out, "\"decision\":\"accept\""));
    char *in = coder_stdin(c);
    assert_non_null(strstr(in, DECLINE_ANSWER));
    assert_null(strstr(in, ACCEPT_ANSWER));
    free(in);
    free(out);
    free(conv);
}

/* codex item/tool/requestUserInput in place of the command approval. */
#define QUESTION                                                                                   \
    "{\"id\":0,\"method\":\"item/tool/requestUserInput\",\"params\":{\"threadId\":"                \
    "\"01a22760-2b05-77b0-a417-30527fa9d43e\",\"turnId\":\"01a22760-2b46-7471-9b27-"               \
    "b0c3c20705d3\",\"itemId\":\"call_q\",\"isBlocking\":true,\"questions\":[{\"id\":\"color\","   \
    "\"header\":\"Colour\",\"question\":\"Which colour?\",\"options\":[{\"label\":\"Red\"},{"      \
    "\"label\":\"Blue\"}]},{\"id\":\"name\",\"header\":\"Name\",\"question\":\"What name?\","      \
    "\"options\":null}]}}\n"
#define ANSWERS                                                                                    \
    "{\"id\":0,\"result\":{\"answers\":{\"color\":{\"answers\":[\"Blue\"]},\"name\":{"             \
    "\"answers\":[\"Ada Lovelace\"]}}}}\n"

/* The fake coder asks ask (a line) in place of the command approval; a
 * `baton run --json --approval ask` started in the background (its pid),
 * its conversation in *conv once the question waits (caller frees). */
static pid_t ask_line(struct ctx *c, const char *ask, char **conv)
{
    FILE *in = fopen(FIXTURES "/shell-approved.jsonl", "r");
    char *path = path_in(c, "question.jsonl");
    FILE *out = fopen(path, "w");
    assert_non_null(in);
    assert_non_null(out);
    char line[16384];
    for (int n = 1; fgets(line, sizeof(line), in); n++)
        fputs(n == 12 ? ask : line, out);
    fclose(in);
    fclose(out);
    replay_logged(c, path);
    free(path);
    pid_t pid =
        baton_bg(c, "out", "run", "--json", "--approval", "ask", "--idle-timeout", "30", "hi", END);
    *conv = wait_asking(c);
    return pid;
}

static pid_t ask_question(struct ctx *c, char **conv)
{
    return ask_line(c, QUESTION, conv);
}

/* `baton answer CONV 2 'Ada Lovelace'`: option 2 of the first question,
 * words for the second; codex gets them by question id. */
static void test_answer_question(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    char *conv;
    pid_t pid = ask_question(c, &conv);
    baton(c, &res, NULL, 0, "approve", conv, "--allow", END); /* a question takes answers */
    assert_int_equal(res.exit_code, 2);
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "answer", conv, "2", "Ada Lovelace", END);
    assert_int_equal(res.exit_code, 0);
    bt_test_result_release(&res);
    assert_int_equal(wait_exit(pid), 0);
    char *text = slurp_out(c, "out");
    assert_non_null(strstr(text, "\"kind\":\"user_input\""));
    assert_non_null(strstr(text, "\"decision\":\"accept\",\"by\":\"user\",\"answers\":"
                                 "[[\"Blue\"],[\"Ada Lovelace\"]]"));
    char *sent = coder_stdin(c);
    assert_non_null(strstr(sent, ANSWERS));
    /* the transcript has the answers, not "nobody could answer" */
    baton(c, &res, NULL, 0, "show", conv, END);
    assert_int_equal(res.exit_code, 0);
    assert_non_null(strstr(res.out.data, "you answered:\n  Colour: Which colour? [Red / Blue]\n"
                                         "  -> Blue\n  Name: What name?\n  -> Ada Lovelace\n"));
    assert_null(strstr(res.out.data, "asked you"));
    bt_test_result_release(&res);
    free(sent);
    free(text);
    free(conv);
}

/* codex mcpServer/elicitation/request, a form (MCP requestedSchema), in
 * place of the command approval. */
#define FORM                                                                                       \
    "{\"id\":0,\"method\":\"mcpServer/elicitation/request\",\"params\":{\"threadId\":"             \
    "\"01a22760-2b05-77b0-a417-30527fa9d43e\",\"turnId\":\"01a22760-2b46-7471-9b27-"               \
    "b0c3c20705d3\",\"serverName\":\"shop\",\"mode\":\"form\",\"message\":\"Order what?\","        \
    "\"requestedSchema\":{\"type\":\"object\",\"properties\":{\"item\":{\"type\":\"string\","      \
    "\"title\":\"Item\"},\"count\":{\"type\":\"integer\",\"minimum\":1},\"size\":{\"type\":"       \
    "\"string\",\"oneOf\":[{\"const\":\"s\",\"title\":\"Small\"},{\"const\":\"l\",\"title\":"      \
    "\"Large\"}]},\"gift\":{\"type\":\"boolean\"}},\"required\":[\"item\",\"count\"]}}}\n"
#define FORM_ANSWER                                                                                \
    "{\"id\":0,\"result\":{\"action\":\"accept\",\"content\":{\"item\":\"tea\",\"count\":3,"       \
    "\"size\":\"l\",\"gift\":false}}}\n"

/* A form answered with `baton answer`: each field's answer typed as the
 * form says (an integer, a choice's value, a boolean). Answers that do
 * not fit are refused (exit 2) with the reason, nothing written to the
 * coder, the form still waiting; then the right ones go through, once. */
static void test_answer_form(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    char *conv;
    pid_t pid = ask_line(c, FORM, &conv);
    const char *bad[][5] = {
        {"tea", "three", "1", "no", "answer 2 (count, integer) is not an integer"},
        {"tea", "0", "1", "no", "answer 2 (count, integer) is outside the form's bounds"},
        {"tea", "2", "1", "perhaps", "answer 4 (gift, boolean) is not true or false"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        baton(c, &res, NULL, 0, "answer", conv, bad[i][0], bad[i][1], bad[i][2], bad[i][3], END);
        assert_int_equal(res.exit_code, 2);
        assert_non_null(strstr(res.err.data, bad[i][4]));
        bt_test_result_release(&res);
    }
    baton(c, &res, NULL, 0, "answer", conv, "tea", END); /* count is required */
    assert_int_equal(res.exit_code, 2);
    assert_non_null(strstr(res.err.data, "answer 2 (count) is required"));
    bt_test_result_release(&res);
    char *sent = coder_stdin(c);
    assert_null(strstr(sent, "\"id\":0,\"result\""));
    free(sent);
    baton(c, &res, NULL, 0, "approve", conv, "--list", END); /* it still waits */
    assert_int_equal(res.exit_code, 0);
    assert_non_null(strstr(res.out.data, "Order what?"));
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "answer", conv, "tea", "3", "2", "false", END);
    assert_int_equal(res.exit_code, 0);
    bt_test_result_release(&res);
    assert_int_equal(wait_exit(pid), 0);
    sent = coder_stdin(c);
    const char *first = strstr(sent, FORM_ANSWER);
    assert_non_null(first);
    assert_null(strstr(first + strlen(FORM_ANSWER), "\"id\":0,\"result\""));
    char *text = slurp_out(c, "out");
    assert_non_null(strstr(text, "\"decision\":\"accept\",\"by\":\"user\",\"answers\":"
                                 "[[\"tea\"],[\"3\"],[\"Large\"],[\"false\"]]"));
    free(text);
    free(sent);
    free(conv);
}

/* ACP elicitation/create (tests/fake-coder/fake-acp.c [elicit]: a choice
 * and a required integer) answered with `baton answer`: a misfit refused
 * with the form still waiting; then the agent gets the typed content and
 * says so in its answer. */
static void test_answer_acp_form(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    setenv_kv(c, "BATON_GEMINI_BIN=" BT_BINARY_DIR "/tests/fake-coder/fake-acp");
    char *log = path_in(c, "acp.log");
    char *kv = bt_xasprintf("FAKE_ACP_LOG=%s", log);
    setenv_kv(c, kv);
    free(kv);
    pid_t pid = baton_bg(c, "out", "run", "-c", "gemini", "--json", "--approval", "ask",
                         "--idle-timeout", "30", "[elicit]", END);
    char *conv = wait_asking(c);
    baton(c, &res, NULL, 0, "answer", conv, "2", "many", END);
    assert_int_equal(res.exit_code, 2);
    assert_non_null(strstr(res.err.data, "answer 2 (count, integer) is not an integer"));
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "answer", conv, "2", END);
    assert_int_equal(res.exit_code, 2);
    assert_non_null(strstr(res.err.data, "answer 2 (count) is required"));
    bt_test_result_release(&res);
    char *sent = bt_test_slurp(log, NULL);
    assert_null(sent && strstr(sent, "\"id\":11,") ? "answered" : NULL);
    free(sent);
    baton(c, &res, NULL, 0, "answer", conv, "2", "7", END);
    assert_int_equal(res.exit_code, 0);
    bt_test_result_release(&res);
    assert_int_equal(wait_exit(pid), 0);
    sent = bt_test_slurp(log, NULL);
    assert_non_null(sent);
    assert_non_null(strstr(sent, "\"id\":11,\"result\":{\"action\":\"accept\",\"content\":"
                                 "{\"colour\":\"blue\",\"count\":7}}"));
    char *text = slurp_out(c, "out");
    assert_non_null(strstr(text, "\"final_text\":\"elicitation: accept {\\\"colour\\\":"
                                 "\\\"blue\\\",\\\"count\\\":7}\""));
    free(text);
    free(sent);
    free(log);
    free(conv);
}

/* Answers that are no answer are refused (exit 2), nothing written to the
 * coder, and the question still waits: an option number the question has
 * not (never sent as the person's words), an empty or blank answer,
 * bytes that are not UTF-8. Then a right answer goes through, once. */
static void test_bad_answers_refused(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    char *conv;
    pid_t pid = ask_question(c, &conv);
    const char *bad[][3] = {
        {"7", "Ada", "answer 1, '7', is no option of question 1: it has 1 to 2"},
        {"0", "Ada", "answer 1, '0', is no option of question 1: it has 1 to 2"},
        {"1,3", "Ada", "is no option of question 1"},
        {"2", "", "each UTF-8 text that is not blank"},
        {"2", "  ", "each UTF-8 text that is not blank"},
        {"\xff\xfe", "Ada", "each UTF-8 text that is not blank"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        baton(c, &res, NULL, 0, "answer", conv, bad[i][0], bad[i][1], END);
        assert_int_equal(res.exit_code, 2);
        assert_non_null(strstr(res.err.data, bad[i][2]));
        bt_test_result_release(&res);
    }
    char *sent = coder_stdin(c);
    assert_null(strstr(sent, "\"id\":0,\"result\""));
    free(sent);
    baton(c, &res, NULL, 0, "answer", conv, "2", "Ada Lovelace", END);
    assert_int_equal(res.exit_code, 0);
    bt_test_result_release(&res);
    assert_int_equal(wait_exit(pid), 0);
    sent = coder_stdin(c);
    const char *first = strstr(sent, ANSWERS);
    assert_non_null(first);
    assert_null(strstr(first + strlen(ANSWERS), "\"id\":0,\"result\""));
    free(sent);
    free(conv);
}

/* The command codex asks to run holds escape sequences (a window title,
 * a screen clear): `approve --list` and the turn's human output show it
 * with '?' for each control character, never the sequences themselves. */
static void test_coder_text_cannot_drive_the_terminal(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    FILE *in = fopen(FIXTURES "/shell-approved.jsonl", "r");
    char *path = path_in(c, "escapes.jsonl");
    FILE *out = fopen(path, "w");
    assert_non_null(in);
    assert_non_null(out);
    static const char cmd[] = "echo baton-ok'";
    static const char evil[] = "echo \\u001b]0;pwned\\u0007\\u001b[2Jbaton-ok'";
    char line[16384];
    while (fgets(line, sizeof(line), in)) {
        char *at, *from = line;
        while ((at = strstr(from, cmd)) != NULL) { /* the command, not its actions */
            fwrite(from, 1, (size_t)(at - from), out);
            fputs(evil, out);
            from = at + strlen(cmd);
        }
        fputs(from, out);
    }
    fclose(in);
    fclose(out);
    char *kv = bt_xasprintf("FAKE_CODER_REPLAY=%s", path);
    setenv_kv(c, kv);
    free(kv);
    free(path);
    pid_t pid = baton_bg(c, "out", "run", "--approval", "ask", "--idle-timeout", "30", "hi", END);
    char *conv = wait_asking(c);
    baton(c, &res, NULL, 0, "approve", conv, "--list", END);
    assert_int_equal(res.exit_code, 0);
    assert_non_null(
        strstr(res.out.data, "0\tcommand\t/bin/bash -lc 'echo ?]0;pwned??[2Jbaton-ok'\n"));
    assert_null(strchr(res.out.data, '\x1b'));
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "approve", conv, "--deny", END);
    assert_int_equal(res.exit_code, 0);
    bt_test_result_release(&res);
    assert_int_equal(wait_exit(pid), 0);
    char *text = slurp_out(c, "out");
    assert_non_null(strstr(text, "?]0;pwned??[2Jbaton-ok"));
    assert_null(strchr(text, '\x1b'));
    assert_null(strchr(text, '\a'));
    free(text);
    free(conv);
}

/* The inline ask of `baton run --approval ask` on a terminal (a pty
 * made by python3): the person types y; codex gets accept, by "user". */
static const char PTY_SCRIPT[] = "import os, pty, select, sys\n"
                                 "pid, fd = pty.fork()\n"
                                 "if pid == 0:\n"
                                 "    os.execv(sys.argv[1], sys.argv[1:])\n"
                                 "buf, sent = b'', False\n"
                                 "while True:\n"
                                 "    r, _, _ = select.select([fd], [], [], 30)\n"
                                 "    if not r:\n"
                                 "        break\n"
                                 "    try:\n"
                                 "        d = os.read(fd, 4096)\n"
                                 "    except OSError:\n"
                                 "        break\n"
                                 "    if not d:\n"
                                 "        break\n"
                                 "    buf += d\n"
                                 "    if not sent and b'[n] deny? ' in buf:\n"
                                 "        os.write(fd, b'y\\n')\n"
                                 "        sent = True\n"
                                 "_, st = os.waitpid(pid, 0)\n"
                                 "sys.stdout.write(buf.decode(errors='replace'))\n"
                                 "sys.exit(os.waitstatus_to_exitcode(st))\n";

static void test_inline_ask_on_a_terminal(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    ask_replay(c);
    const char *argv[] = {"python3",        "-c", PTY_SCRIPT, BATON, "run", "--approval", "ask",
                          "--idle-timeout", "30", "hi",       NULL};
    run_in(c, argv, &res);
    assert_int_equal(res.exit_code, 0);
    assert_non_null(strstr(res.out.data, "the coder asks for approval (command): /bin/bash -lc "
                                         "'echo baton-ok'"));
    assert_non_null(strstr(res.out.data, "approved by user"));
    bt_test_result_release(&res);
    char *in = coder_stdin(c);
    assert_non_null(strstr(in, ACCEPT_ANSWER));
    free(in);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_timeout_declines),
        T(test_cancel_while_pending),
        T(test_approve_allow),
        T(test_approve_deny),
        T(test_attach_says_what_waits),
        T(test_late_answer_refused),
        T(test_answer_question),
        T(test_bad_answers_refused),
        T(test_answer_form),
        T(test_answer_acp_form),
        T(test_coder_text_cannot_drive_the_terminal),
        T(test_inline_ask_on_a_terminal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
