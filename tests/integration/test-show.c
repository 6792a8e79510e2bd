/* SPDX-License-Identifier: MIT */
/*
 * integration tests of what `baton show` tells, through the baton binary
 * and tests/fake-coder: the text of a turn while it streams, the coder's
 * real exit status or signal and the end of its stderr (--debug), and the
 * per-conversation queue numbers that `send`, `show` and `rm-queued`
 * share, a coder's escaped NUL (\u0000) kept past in the store's
 * text as `show` and `show --json` read it, the questions a coder asked
 * that nobody could answer, and the transcript in turn order whatever
 * order cancels, retries and queued messages happened in.
 *
 * A turn that must stay running replays fixtures/codex/0.171.0/text.jsonl
 * with FAKE_CODER_HANG_AFTER=13: the fake writes the answer's first three
 * deltas ("Hello! Y", "ou said:", " Say hel"), then nothing; the tests wait
 * for the store to hold what they look for, never for a time.
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

#define HANG_AFTER_3_DELTAS "FAKE_CODER_HANG_AFTER=13"
#define FIRST_3_DELTAS "Hello! You said: Say hel"

static struct bt_store *open_store(struct ctx *c)
{
    char *home = path_in(c, "home");
    struct bt_store *s = NULL;
    assert_int_equal(bt_store_open(home, &s, NULL), 0);
    free(home);
    return s;
}

static int count_deltas(void *data, const struct bt_store_event *ev)
{
    *(int *)data += strcmp(ev->type, "item.delta") == 0;
    return 0;
}

/* Wait (30 s natively, longer under valgrind) until conv's newest run is
 * running with its process group recorded and has stored n deltas. */
static void wait_deltas(struct ctx *c, const char *conv, int n)
{
    struct bt_store *s = open_store(c);
    for (int64_t t0 = 0; bt_test_poll(&t0);) {
        struct bt_store_run r;
        int deltas = 0;
        if (bt_store_run_last(s, conv, &r) == 0) {
            assert_int_equal(bt_store_event_each(s, r.id, 1, count_deltas, &deltas), 0);
            int ready = r.state == BT_STORE_RUN_RUNNING && r.pgid > 0 && deltas >= n;
            bt_store_run_release(&r);
            if (ready) {
                bt_store_close(s);
                return;
            }
        }
    }
    fail_msg("conversation %s has no running turn with %d deltas", conv, n);
}

/* A new conversation with one completed turn; its id (caller frees). */
static char *first_turn(struct ctx *c, const char *prompt)
{
    struct bt_test_result res;
    replay(c, "text");
    baton(c, &res, NULL, 0, "run", "--json", prompt, END);
    assert_int_equal(res.exit_code, 0);
    char *conv = conversation_of(res.out.data);
    bt_test_result_release(&res);
    return conv;
}

/* The output of `baton show ARGS... CONV` (exit 0); caller frees. */
static char *show(struct ctx *c, const char *opt, const char *conv)
{
    struct bt_test_result res;
    if (opt)
        baton(c, &res, NULL, 0, "show", opt, conv, END);
    else
        baton(c, &res, NULL, 0, "show", conv, END);
    assert_int_equal(res.exit_code, 0);
    char *out = bt_xstrdup(res.out.data);
    bt_test_result_release(&res);
    return out;
}

/* `show --json CONV`: its messages (the document, which the caller
 * deletes, in *doc). */
static const cJSON *messages(struct ctx *c, const char *conv, cJSON **doc)
{
    char *out = show(c, "--json", conv);
    *doc = cJSON_Parse(out);
    free(out);
    assert_non_null(*doc);
    return cJSON_GetObjectItem(*doc, "messages");
}

/* The line of out that starts with "  [run ", after the n-th one (0 first);
 * caller frees. */
static char *run_line(const char *out, int n)
{
    const char *p = out;
    for (int i = 0; p && i <= n; i++)
        if ((p = strstr(p, "  [run ")) != NULL && i < n)
            p++;
    assert_non_null(p);
    return p ? bt_xstrndup(p, strcspn(p, "\n")) : NULL;
}

/* Occurrences of what in text. */
static int count(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = strstr(text, what); p; p = strstr(p + 1, what))
        n++;
    return n;
}

/* ---- the text of a running turn ------------------------------------- */

/* While a turn streams, show gives the text stored so far, marked as
 * streaming, in text and JSON; --debug shows no exit for the running run
 * and its stderr so far. Cancelled, the coder's SIGTERM shows as such. */
static void test_show_while_streaming(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    char *conv = first_turn(c, "first");
    setenv_kv(c, HANG_AFTER_3_DELTAS);
    setenv_kv(c, "FAKE_CODER_STDERR=warming up");
    pid_t a = baton_bg(c, "a.out", "send", "--json", conv, "second", END);
    wait_deltas(c, conv, 3);

    char *out = show(c, NULL, conv);
    assert_non_null(strstr(out, "codex (streaming: the text so far):\n" FIRST_3_DELTAS "\n"));
    free(out);
    cJSON *doc;
    const cJSON *m = messages(c, conv, &doc);
    assert_int_equal(cJSON_GetArraySize(m), 4);
    const cJSON *last = cJSON_GetArrayItem(m, 3);
    assert_string_equal(bt_test_jstr(last, "state"), "streaming");
    assert_string_equal(bt_test_jstr(last, "text"), FIRST_3_DELTAS);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(last, "queue_no")));
    cJSON_Delete(doc);

    out = show(c, "--debug", conv);
    char *line = run_line(out, 1);
    assert_non_null(strstr(line, ": running, codex"));
    assert_null(strstr(line, "exit"));
    assert_null(strstr(line, "signal"));
    assert_non_null(strstr(out, "  [stderr so far]\nwarming up\n"));
    free(line);
    free(out);

    baton(c, &res, NULL, 0, "cancel", conv, END);
    assert_int_equal(res.exit_code, 0);
    bt_test_result_release(&res);
    assert_int_equal(wait_exit(a), 130);
    out = show(c, "--debug", conv);
    line = run_line(out, 1);
    /* the fake ignores the interrupt; the stop escalation's SIGTERM ends it */
    assert_non_null(
        strstr(line, ": cancelled, codex 0.171.0, signal TERM, baton sent its group SIGTERM]"));
    assert_non_null(strstr(out, "codex (cancelled):\n" FIRST_3_DELTAS "\n"));
    assert_non_null(strstr(out, "  [stderr]\nwarming up\n"));
    free(line);
    free(out);
    /* the completed first run: its real exit 0, and no stderr at all */
    out = show(c, "--debug", conv);
    line = run_line(out, 0);
    assert_non_null(strstr(line, ": completed, codex 0.171.0, exit 0]"));
    free(line);
    assert_int_equal(count(out, "[stderr"), 1); /* the cancelled run's */
    free(out);
    free(conv);
}

/* ---- show --debug of failed runs ------------------------------------ */

/* A failed turn shows the coder's real exit code or signal, never a
 * made-up 0, and the end of its stderr: its last 20 lines. */
static void test_show_debug_failed(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    struct bt_buf err = BT_BUF_INIT;
    bt_buf_adds(&err, "FAKE_CODER_STDERR=");
    for (int i = 1; i <= 30; i++)
        bt_buf_addf(&err, "trace line %02d\n", i);
    /* a protocol failure (401) after which the coder exits 7 */
    replay(c, "http401");
    setenv_kv(c, "FAKE_CODER_EXIT=7");
    setenv_kv(c, err.data);
    baton(c, &res, NULL, 0, "run", "--json", "Say hello banana", END);
    assert_int_equal(res.exit_code, 4); /* baton's own exit for auth_required */
    char *conv = conversation_of(res.out.data);
    bt_test_result_release(&res);
    char *out = show(c, "--debug", conv);
    char *line = run_line(out, 0);
    assert_non_null(
        strstr(line, ": failed, codex 0.171.0, exit 7, auth_required]")); /* unsignalled */
    free(line);
    assert_non_null(strstr(out, "  [stderr: its last "));
    assert_non_null(strstr(out, "zstdcat "));
    assert_non_null(strstr(out, "\ntrace line 11\n"));
    assert_non_null(strstr(out, "\ntrace line 30\n"));
    assert_null(strstr(out, "trace line 10"));
    free(out);
    /* a crash: exit 1 */
    replay(c, "text");
    setenv_kv(c, "FAKE_CODER_EXIT=0");
    setenv_kv(c, "FAKE_CODER_CRASH_AFTER=3");
    setenv_kv(c, "FAKE_CODER_STDERR=thread main panicked");
    baton(c, &res, NULL, 0, "send", conv, "again", END);
    assert_int_equal(res.exit_code, 1);
    bt_test_result_release(&res);
    out = show(c, "--debug", conv);
    line = run_line(out, 1);
    /* (baton may have signalled the group at the early EOF: said apart) */
    assert_non_null(strstr(line, ": failed, codex 0.171.0, exit 1, "));
    assert_non_null(strstr(line, ", coder_crashed]"));
    assert_non_null(strstr(out, "  [stderr]\nthread main panicked\n"));
    free(line);
    free(out);
    /* killed by a signal of its own: abort() */
    setenv_kv(c, "FAKE_CODER_CRASH_SIGNAL=1");
    baton(c, &res, NULL, 0, "send", conv, "once more", END);
    assert_int_equal(res.exit_code, 1);
    bt_test_result_release(&res);
    out = show(c, "--debug", conv);
    line = run_line(out, 2);
    assert_non_null(strstr(line, ": failed, codex 0.171.0, signal ABRT, "));
    assert_non_null(strstr(line, ", coder_crashed]"));
    free(line);
    free(out);
    bt_buf_release(&err);
    free(conv);
}

/* A run whose baton was killed stored no stderr tail and no exit: --debug
 * says the exit is unknown and reads the stderr from the run's file. */
static void test_show_debug_interrupted(void **state)
{
    struct ctx *c = *state;
    char *conv = first_turn(c, "first");
    setenv_kv(c, HANG_AFTER_3_DELTAS);
    setenv_kv(c, "FAKE_CODER_STDERR=written before the end");
    pid_t a = baton_bg(c, "a.out", "send", "--json", conv, "second", END);
    wait_deltas(c, conv, 3);
    assert_int_equal(kill(a, SIGKILL), 0);
    assert_int_equal(wait_exit(a), 128 + SIGKILL);
    char *out = show(c, "--debug", conv); /* recovers the run first */
    char *line = run_line(out, 1);
    assert_non_null(strstr(line, ": interrupted, codex 0.171.0, exit unknown]"));
    assert_non_null(strstr(out, "codex (interrupted):\n" FIRST_3_DELTAS "\n"));
    assert_non_null(strstr(out, "  [stderr]\nwritten before the end\n"));
    free(line);
    free(out);
    free(conv);
}

/* ---- queue numbers -------------------------------------------------- */

/* `baton send CONV text` while CONV runs: its queue number, from the
 * queued line, which names the rm-queued command that takes it back. */
static long long queue(struct ctx *c, const char *conv, const char *text)
{
    struct bt_test_result res;
    baton(c, &res, NULL, 0, "send", conv, text, END);
    assert_int_equal(res.exit_code, 0);
    char *end;
    const char *line = strstr(res.err.data, "queued as #");
    assert_non_null(line);
    long long no = strtoll(line + strlen("queued as #"), &end, 10);
    assert_true(strncmp(end, " in ", 4) == 0 && strncmp(end + 4, conv, strlen(conv)) == 0);
    /* the command it names: `baton rm-queued <a prefix of conv> <no>` */
    const char *cmd = strstr(res.err.data, "`baton rm-queued ");
    assert_non_null(cmd);
    cmd += strlen("`baton rm-queued ");
    size_t prefix = strcspn(cmd, " ");
    assert_true(prefix >= 8 && strncmp(cmd, conv, prefix) == 0);
    assert_int_equal(strtoll(cmd + prefix + 1, &end, 10), no);
    assert_int_equal(*end, '`');
    bt_test_result_release(&res);
    return no;
}

/* The queued messages of conv as "text#no text#no ", with their ids. */
static char *queued(struct ctx *c, const char *conv, long long ids[8])
{
    cJSON *doc;
    const cJSON *m = messages(c, conv, &doc), *it;
    struct bt_buf b = BT_BUF_INIT;
    int n = 0;
    cJSON_ArrayForEach(it, m)
    {
        if (strcmp(bt_test_jstr(it, "state"), "queued") != 0)
            continue;
        const cJSON *no = cJSON_GetObjectItem(it, "queue_no");
        assert_true(cJSON_IsNumber(no));
        bt_buf_addf(&b, "%s#%d ", bt_test_jstr(it, "text"), no->valueint);
        assert_true(n < 8);
        if (ids)
            ids[n] = (long long)cJSON_GetObjectItem(it, "id")->valuedouble;
        n++;
    }
    cJSON_Delete(doc);
    bt_buf_addc(&b, '\0');
    return bt_buf_detach(&b, NULL);
}

static int rm_queued(struct ctx *c, const char *conv, long long no, const char *err_has)
{
    struct bt_test_result res;
    char arg[32];
    snprintf(arg, sizeof arg, "%lld", no);
    baton(c, &res, NULL, 0, "rm-queued", conv, arg, END);
    if (err_has && !strstr(res.err.data, err_has))
        fail_msg("rm-queued %s %s: no '%s' in: %s", conv, arg, err_has, res.err.data);
    int rc = res.exit_code;
    bt_test_result_release(&res);
    return rc;
}

/* Two conversations, each with queued messages: numbers count per
 * conversation from 1 and are never given twice; rm-queued CONV N takes
 * back CONV's #N and nothing else; a global message id is refused, naming
 * the number it has. */
static void test_queue_numbers(void **state)
{
    struct ctx *c = *state;
    char *a = first_turn(c, "conversation a"), *b = first_turn(c, "conversation b");
    setenv_kv(c, HANG_AFTER_3_DELTAS);
    pid_t pa = baton_bg(c, "a.out", "send", "--json", a, "a runs", END);
    pid_t pb = baton_bg(c, "b.out", "send", "--json", b, "b runs", END);
    wait_deltas(c, a, 1);
    wait_deltas(c, b, 1);
    assert_int_equal(queue(c, a, "a one"), 1);
    assert_int_equal(queue(c, b, "b one"), 1);
    assert_int_equal(queue(c, a, "a two"), 2);
    assert_int_equal(queue(c, b, "b two"), 2);
    /* --json: the number on stdout too, for scripts */
    struct bt_test_result res;
    baton(c, &res, NULL, 0, "send", "--json", b, "b three", END);
    assert_int_equal(res.exit_code, 0);
    cJSON *j = cJSON_Parse(res.out.data);
    assert_non_null(j);
    assert_string_equal(bt_test_jstr(j, "conversation"), b);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(j, "queued")));
    assert_int_equal(cJSON_GetObjectItem(j, "queue_no")->valueint, 3);
    cJSON_Delete(j);
    bt_test_result_release(&res);
    long long ids[8] = {0};
    char *q = queued(c, a, ids);
    assert_string_equal(q, "a one#1 a two#2 ");
    free(q);
    assert_true(ids[0] > 3); /* a global id is no queue number here */
    q = queued(c, b, ids);
    assert_string_equal(q, "b one#1 b two#2 b three#3 ");
    free(q);
    char *out = show(c, NULL, b);
    assert_non_null(strstr(out, "you (queued as #2):\nb two\n"));
    free(out);

    /* the first queued of b, and only it */
    assert_int_equal(rm_queued(c, b, 1, "took back queued message #1"), 0);
    q = queued(c, b, NULL);
    assert_string_equal(q, "b two#2 b three#3 ");
    free(q);
    q = queued(c, a, NULL);
    assert_string_equal(q, "a one#1 a two#2 ");
    free(q);
    /* b's message id of #3 is not taken for a number */
    assert_int_equal(rm_queued(c, b, ids[2], "is queued as #3"), 2);
    q = queued(c, b, NULL);
    assert_string_equal(q, "b two#2 b three#3 ");
    free(q);
    /* the top number removed is not given again */
    assert_int_equal(rm_queued(c, b, 3, NULL), 0);
    assert_int_equal(queue(c, b, "b four"), 4);
    assert_int_equal(rm_queued(c, b, 3, "no queued message #3 (queued now: #2, #4)"), 2);
    assert_int_equal(rm_queued(c, b, 1, "no queued message #1"), 2);
    q = queued(c, b, NULL);
    assert_string_equal(q, "b two#2 b four#4 ");
    free(q);

    /* once sent, a number says so; the next one goes on counting */
    baton(c, &res, NULL, 0, "cancel", a, END);
    assert_int_equal(res.exit_code, 0);
    bt_test_result_release(&res);
    assert_int_equal(wait_exit(pa), 130);
    replay(c, "text");
    setenv_kv(c, "FAKE_CODER_HANG_AFTER=-1");
    baton(c, &res, NULL, 0, "send", a, "a three", END); /* sends #1, #2 first */
    assert_int_equal(res.exit_code, 0);
    bt_test_result_release(&res);
    assert_int_equal(rm_queued(c, a, 2, "is not queued any more: it was sent in run"), 2);
    cJSON *doc;
    const cJSON *m = messages(c, a, &doc);
    assert_string_equal(bt_test_jstr(cJSON_GetArrayItem(m, 4), "text"), "a one");
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(m, 4), "queue_no")->valueint, 1);
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(m, 5), "queue_no")->valueint, 2);
    assert_string_equal(bt_test_jstr(cJSON_GetArrayItem(m, 5), "state"), "complete");
    cJSON_Delete(doc);
    baton(c, &res, NULL, 0, "cancel", b, END);
    assert_int_equal(res.exit_code, 0);
    bt_test_result_release(&res);
    assert_int_equal(wait_exit(pb), 130);
    free(a);
    free(b);
}

/* codex writes "You\u0000 said" in its deltas and its complete message:
 * what the store keeps, and so what `show` and `show --json` print, goes
 * on after the NUL (as U+FFFD). */
static void test_show_escaped_nul(void **state)
{
    struct ctx *c = *state;
    size_t len;
    char *rec = bt_read_file(FIXTURES "/text.jsonl", &len);
    assert_non_null(rec);
    struct bt_buf out = BT_BUF_INIT;
    const char *p = rec;
    for (const char *at; (at = strstr(p, "ou said:")); p = at + strlen("ou said:")) {
        bt_buf_add(&out, p, (size_t)(at - p));
        bt_buf_adds(&out, "ou\\u0000 said:");
    }
    bt_buf_adds(&out, p);
    char *path = path_in(c, "nul.jsonl");
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fwrite(out.data, 1, out.len, f), out.len);
    fclose(f);
    char *kv = bt_xasprintf("FAKE_CODER_REPLAY=%s", path);
    setenv_kv(c, kv);
    struct bt_test_result res;
    baton(c, &res, NULL, 0, "run", "--json", "Say hello banana", END);
    assert_int_equal(res.exit_code, 0);
    char *conv = conversation_of(res.out.data);
    bt_test_result_release(&res);
    char *text = show(c, NULL, conv);
    assert_non_null(strstr(text, "Hello! You\xEF\xBF\xBD said: Say hello banana"));
    free(text);
    char *json = show(c, "--json", conv);
    assert_non_null(strstr(json, "Hello! You\xEF\xBF\xBD said: Say hello banana"));
    free(json);
    free(conv);
    free(kv);
    free(path);
    bt_buf_release(&out);
    free(rec);
}

/* ---- questions the coder asked --------------------------------------- */

/* A replay of codex asking the user (item/tool/requestUserInput) in the
 * middle of interrupt.jsonl's turn, which then completes: written into
 * the test's directory, its path returned (caller frees). */
static char *question_replay(struct ctx *c)
{
    FILE *in = fopen(FIXTURES "/interrupt.jsonl", "r");
    char *path = path_in(c, "question.jsonl");
    FILE *out = fopen(path, "w");
    assert_non_null(in);
    assert_non_null(out);
    char line[8192];
    for (int n = 1; fgets(line, sizeof(line), in); n++) {
        char *st = strstr(line, "\"interrupted\"");
        if (n == 13)
            fputs("{\"id\":0,\"method\":\"item/tool/requestUserInput\",\"params\":{"
                  "\"threadId\":\"t\",\"turnId\":\"u\",\"itemId\":\"call_q\","
                  "\"isBlocking\":true,\"questions\":[{\"id\":\"db\",\"header\":\"DB\","
                  "\"question\":\"Which database?\",\"options\":[{\"label\":\"SQLite\","
                  "\"description\":\"one file\"},{\"label\":\"Postgres\","
                  "\"description\":\"a server\"}]}]}}\n",
                  out);
        if (n <= 12 || n == 16) {
            if (st) /* the turn completes rather than being interrupted */
                memcpy(st, "\"completed\"  ", 13);
            fputs(line, out);
        }
    }
    fclose(in);
    fclose(out);
    return path;
}

/* A question codex asked during a turn (under --approval auto, which
 * never answers one) is printed as the turn runs and is in the transcript
 * under the answer, with its options and that nobody could answer it
 * during the turn. */
static void test_show_question(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    char *path = question_replay(c);
    char *kv = bt_xasprintf("FAKE_CODER_REPLAY=%s", path);
    setenv_kv(c, kv);
    baton(c, &res, NULL, 0, "run", "--json", "--approval", "auto", "Ask me", END);
    assert_int_equal(res.exit_code, 0);
    assert_non_null(strstr(res.out.data, "\"decision\":\"decline\",\"by\":\"policy\""));
    char *conv = conversation_of(res.out.data);
    bt_test_result_release(&res);
    /* the human output of a turn says it as it comes */
    baton(c, &res, NULL, 0, "send", "--approval", "auto", conv, "Ask again", END);
    assert_int_equal(res.exit_code, 0);
    assert_non_null(strstr(res.out.data, "• question: DB: Which database? [SQLite (one file) / "
                                         "Postgres (a server)]\n• not answered: nobody could "
                                         "answer during the turn; answer it with your next "
                                         "message\n"));
    bt_test_result_release(&res);
    char *out = show(c, NULL, conv);
    assert_non_null(strstr(out,
                           "\ncodex:\ntick 001. tick 002. \n"
                           "asked you (nobody could answer during the turn; answer it "
                           "with your next message):\n"
                           "  DB: Which database? [SQLite (one file) / Postgres (a server)]\n"));
    free(out);
    free(conv);
    free(kv);
    free(path);
}

/* ---- the transcript in turn order ------------------------------------ */

/* Wait (as wait_deltas) until conv's newest run is turn `turn` and has
 * ended completed. */
static void wait_completed(struct ctx *c, const char *conv, int64_t turn)
{
    struct bt_store *s = open_store(c);
    for (int64_t t0 = 0; bt_test_poll(&t0);) {
        struct bt_store_run r;
        if (bt_store_run_last(s, conv, &r) == 0) {
            int done = r.turn == turn && r.state == BT_STORE_RUN_COMPLETED;
            bt_store_run_release(&r);
            if (done) {
                bt_store_close(s);
                return;
            }
        }
    }
    fail_msg("conversation %s: turn %lld did not complete", conv, (long long)turn);
}

/* conv's messages (show --json) as "role state text" each, equal to
 * want[0..n). */
static void check_messages(struct ctx *c, const char *conv, const char *const *want, int n)
{
    cJSON *doc;
    const cJSON *m = messages(c, conv, &doc);
    for (int i = 0; i < n; i++) {
        const cJSON *it = cJSON_GetArrayItem(m, i);
        assert_non_null(it);
        char *got = bt_xasprintf("%s %s %s", bt_test_jstr(it, "role"), bt_test_jstr(it, "state"),
                                 bt_test_jstr(it, "text"));
        assert_string_equal(got, want[i]);
        free(got);
    }
    assert_int_equal(cJSON_GetArraySize(m), n);
    cJSON_Delete(doc);
}

#define ANSWER "Hello! You said: Say hello banana"

/* Cancel a turn, queue a message, retry the turn: each answer stays under
 * the prompt it answers, in show and show --json (the API, the web page
 * and acp's session/load read the same list, store.h), though a retry's
 * answer is stored after the prompt queued before it: the retries under
 * the cancelled turn's prompt, the queued prompt after them, the turn
 * that takes it (the retry's owner sends it once the retry completed)
 * after that. */
static void test_turn_order_after_retry(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    char *conv = first_turn(c, "first");
    setenv_kv(c, HANG_AFTER_3_DELTAS);
    pid_t a = baton_bg(c, "a.out", "send", "--json", conv, "second", END);
    wait_deltas(c, conv, 3);
    assert_int_equal(queue(c, conv, "third"), 1);
    baton(c, &res, NULL, 0, "cancel", conv, END);
    assert_int_equal(res.exit_code, 0);
    bt_test_result_release(&res);
    assert_int_equal(wait_exit(a), 130);

    /* a retry cancelled too: the queued prompt stays, after both */
    a = baton_bg(c, "b.out", "retry", "--json", conv, END);
    wait_deltas(c, conv, 3);
    baton(c, &res, NULL, 0, "cancel", conv, END);
    assert_int_equal(res.exit_code, 0);
    bt_test_result_release(&res);
    assert_int_equal(wait_exit(a), 130);
    const char *const cancelled[] = {
        "user complete first",
        "assistant complete " ANSWER,
        "user complete second",
        "assistant cancelled " FIRST_3_DELTAS,
        "assistant cancelled " FIRST_3_DELTAS,
        "user queued third",
    };
    check_messages(c, conv, cancelled, 6);
    char *out = show(c, NULL, conv);
    const char *last_cancel = strstr(out, "codex (cancelled):\n" FIRST_3_DELTAS "\n");
    assert_non_null(last_cancel);
    last_cancel = strstr(last_cancel + 1, "codex (cancelled):\n" FIRST_3_DELTAS "\n");
    assert_non_null(last_cancel);
    assert_non_null(strstr(last_cancel, "\nyou (queued as #1):\nthird\n"));
    free(out);

    /* the retry that completes; then its owner sends the queued prompt */
    replay(c, "text");
    setenv_kv(c, "FAKE_CODER_HANG_AFTER=-1");
    baton(c, &res, NULL, 0, "retry", conv, END);
    assert_int_equal(res.exit_code, 0);
    bt_test_result_release(&res);
    wait_completed(c, conv, 3);
    const char *const done[] = {
        "user complete first",
        "assistant complete " ANSWER,
        "user complete second",
        "assistant cancelled " FIRST_3_DELTAS,
        "assistant cancelled " FIRST_3_DELTAS,
        "assistant complete " ANSWER,
        "user complete third",
        "assistant complete " ANSWER,
    };
    check_messages(c, conv, done, 8);
    out = show(c, NULL, conv);
    const char *retried =
        strstr(out, "codex (cancelled):\n" FIRST_3_DELTAS "\n\ncodex (cancelled):\n" FIRST_3_DELTAS
                    "\n\ncodex:\n" ANSWER "\n\nyou:\nthird\n\ncodex:\n" ANSWER "\n");
    if (!retried)
        fail_msg("not in turn order: %s", out);
    free(out);
    free(conv);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_show_while_streaming),   T(test_show_debug_failed), T(test_show_debug_interrupted),
        T(test_queue_numbers),          T(test_show_escaped_nul),  T(test_show_question),
        T(test_turn_order_after_retry),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
