/* SPDX-License-Identifier: MIT */
/*
 * integration tests of the conversation service through the baton binary
 * and tests/fake-coder: one run per conversation across processes, queued
 * follow-ups, detached workers and attach, cancel and retry, a worker
 * killed with SIGKILL.
 *
 * The fake coder's FAKE_CODER_EXCLUSIVE file says whether two coder
 * processes of a test ever ran at once ("overlap"), and how many ran
 * ("start" lines); FAKE_CODER_LOG_STDIN keeps what each was sent.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"
#include "store.h"

/* A new conversation with one quick completed turn; its id (caller frees). */
static char *first_turn(struct ctx *c)
{
    struct bt_test_result res;
    baton(c, &res, NULL, 0, "run", "--json", "first", END);
    assert_int_equal(res.exit_code, 0);
    char *conv = conversation_of(res.out.data);
    bt_test_result_release(&res);
    return conv;
}

/* Lines of a file equal to text. */
static int count_lines(const char *path, const char *text)
{
    char *s = bt_test_slurp(path, NULL);
    int n = 0;
    for (char *line = s ? strtok(s, "\n") : NULL; line; line = strtok(NULL, "\n"))
        n += strcmp(line, text) == 0;
    free(s);
    return n;
}

/* The messages of conv as JSON (`baton show --json`); caller deletes. */
static cJSON *messages_of(struct ctx *c, const char *conv)
{
    struct bt_test_result res;
    baton(c, &res, NULL, 0, "show", "--json", conv, END);
    assert_int_equal(res.exit_code, 0);
    cJSON *doc = cJSON_Parse(res.out.data);
    bt_test_result_release(&res);
    assert_non_null(doc);
    return doc;
}

/* Wait (up to 30 s) until conv has n messages and none is queued or
 * streaming; returns the document. */
static cJSON *settled(struct ctx *c, const char *conv, int n)
{
    for (int i = 0; i < 300; i++) { /* 30 s natively, longer under valgrind */
        cJSON *doc = messages_of(c, conv);
        const cJSON *m = cJSON_GetObjectItem(doc, "messages"), *it;
        int busy = cJSON_GetArraySize(m) != n;
        if (cJSON_GetArraySize(m) > n) { /* never settles as expected */
            char *all = cJSON_Print(doc);
            fail_msg("conversation %s has more than %d messages:\n%s", conv, n, all);
        }
        cJSON_ArrayForEach(it, m)
        {
            const char *st = bt_test_jstr(it, "state");
            busy |= strcmp(st, "queued") == 0 || strcmp(st, "streaming") == 0;
        }
        if (!busy)
            return doc;
        if (i == 299) {
            char *all = cJSON_Print(doc);
            print_error("%s\n", all);
            free(all);
        }
        cJSON_Delete(doc);
        usleep(100000);
    }
    fail_msg("conversation %s did not settle with %d messages", conv, n);
    return NULL;
}

static const cJSON *message(const cJSON *doc, int i)
{
    return cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "messages"), i);
}

/* The text of the last turn/start the fake coder was sent. */
static char *last_prompt(const char *log)
{
    char *s = bt_test_slurp(log, NULL), *found = NULL;
    assert_non_null(s);
    for (char *line = strtok(s, "\n"); line; line = strtok(NULL, "\n")) {
        cJSON *j = cJSON_Parse(line);
        const char *method = j ? bt_test_jstr(j, "method") : NULL;
        if (method && strcmp(method, "turn/start") == 0) {
            cJSON *in = cJSON_GetArrayItem(
                cJSON_GetObjectItem(cJSON_GetObjectItem(j, "params"), "input"), 0);
            free(found);
            found = bt_xstrdup(bt_test_jstr(in, "text"));
        }
        cJSON_Delete(j);
    }
    free(s);
    assert_non_null(found);
    return found;
}

static struct bt_store *open_store(struct ctx *c)
{
    char *home = path_in(c, "home");
    struct bt_store *s = NULL;
    assert_int_equal(bt_store_open(home, &s, NULL), 0);
    free(home);
    return s;
}

struct events {
    struct bt_buf all; /* "seq type data\n" per event */
    int64_t n;
};

static int collect(void *data, const struct bt_store_event *ev)
{
    struct events *e = data;
    bt_buf_addf(&e->all, "%lld %s ", (long long)ev->seq, ev->type);
    bt_buf_add(&e->all, ev->data, ev->len);
    bt_buf_addc(&e->all, '\n');
    e->n = ev->seq;
    return 0;
}

/* conv's newest run, once it is running and has stored at least min
 * events. */
static void wait_events(struct bt_store *s, const char *conv, int64_t min, struct bt_store_run *r,
                        struct events *e)
{
    for (int64_t t0 = 0; bt_test_poll(&t0);) {
        bt_buf_reset(&e->all);
        e->n = 0;
        if (bt_store_run_last(s, conv, r) == 0) {
            assert_int_equal(bt_store_event_each(s, r->id, 1, collect, e), 0);
            if (e->n >= min && r->pgid > 0 && r->state == BT_STORE_RUN_RUNNING)
                return;
            bt_store_run_release(r);
        }
    }
    bt_test_give_up("the run did not store %lld events", (long long)min);
}

/* Wait until conv's newest run runs and has stored min events (timing
 * differs under valgrind: the tests wait for states, not for times). */
static void wait_running(struct ctx *c, const char *conv, int64_t min)
{
    struct bt_store *s = open_store(c);
    struct bt_store_run r;
    struct events e = {BT_BUF_INIT, 0};
    wait_events(s, conv, min, &r, &e);
    assert_int_equal(r.state, BT_STORE_RUN_RUNNING);
    bt_store_run_release(&r);
    bt_buf_release(&e.all);
    bt_store_close(s);
}

/* The id of the only conversation, once `baton ls` lists it; caller frees. */
static char *only_conversation(struct ctx *c)
{
    for (int i = 0; i < 300; i++) {
        struct bt_test_result res;
        baton(c, &res, NULL, 0, "ls", "--json", END);
        cJSON *ls = res.out.len ? cJSON_Parse(res.out.data) : NULL;
        bt_test_result_release(&res);
        if (ls) {
            char *id = bt_xstrdup(bt_test_jstr(ls, "id"));
            cJSON_Delete(ls);
            return id;
        }
        usleep(50000);
    }
    fail_msg("no conversation appeared");
    return NULL;
}

/* Two sends from two processes while a turn runs: both queue (exit 0 at
 * once), one coder process at a time, and the queued texts go out as the
 * next turn, in order, joined by a blank line. */
static void test_queue_while_running(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    char *excl = path_in(c, "exclusive"), *log = path_in(c, "stdin.log");
    char *kv1 = bt_xasprintf("FAKE_CODER_EXCLUSIVE=%s", excl);
    char *kv2 = bt_xasprintf("FAKE_CODER_LOG_STDIN=%s", log);
    replay(c, "text");
    setenv_kv(c, kv1);
    setenv_kv(c, kv2);
    char *conv = first_turn(c);
    hold_turns(c, 12); /* both sends land while turn A runs */
    /* the running turn may do anything; what is queued asks for nothing */
    pid_t a = baton_bg(c, "a.out", "send", "--json", "--approval", "never", conv, "send A", END);
    wait_running(c, conv, 3);
    baton(c, &res, NULL, 0, "send", conv, "queued B", END);
    assert_int_equal(res.exit_code, 0);
    assert_non_null(strstr(res.err.data, "queued as #1 in "));
    assert_int_equal(res.out.len, 0);
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "send", "--detach", conv, "queued C", END); /* queues too */
    assert_int_equal(res.exit_code, 0);
    assert_non_null(strstr(res.err.data, "queued as #2 in "));
    bt_test_result_release(&res);
    release_turns(c);
    assert_int_equal(wait_exit(a), 0);
    cJSON *doc = settled(c, conv, 7); /* first + answer, A + answer, B, C + answer */
    assert_string_equal(bt_test_jstr(message(doc, 4), "text"), "queued B");
    assert_string_equal(bt_test_jstr(message(doc, 5), "text"), "queued C");
    assert_string_equal(bt_test_jstr(message(doc, 6), "role"), "assistant");
    assert_string_equal(bt_test_jstr(message(doc, 6), "state"), "complete");
    /* B and C belong to the run of the last answer */
    assert_string_equal(bt_test_jstr(message(doc, 4), "run"), bt_test_jstr(message(doc, 6), "run"));
    assert_string_equal(bt_test_jstr(message(doc, 5), "run"), bt_test_jstr(message(doc, 6), "run"));
    cJSON_Delete(doc);
    assert_int_equal(count_lines(excl, "overlap"), 0);
    assert_int_equal(count_lines(excl, "start"), 3);
    char *p = last_prompt(log);
    assert_string_equal(p, "queued B\n\nqueued C");
    free(p);
    /* the queued turn ran with its senders' settings, not the owner's */
    char *all = bt_test_slurp(log, NULL);
    if (!all) /* then the checks below fail */
        all = bt_xstrdup("");
    const char *resume = strstr(all, "thread/resume"), *last = NULL;
    for (; resume; resume = strstr(resume + 1, "thread/resume"))
        last = resume;
    assert_non_null(strstr(all, "\"approvalPolicy\":\"never\"")); /* turn A */
    assert_non_null(last ? strstr(last, "\"approvalPolicy\":\"untrusted\"") : NULL);
    free(all);
    free(conv);
    free(kv1);
    free(kv2);
    free(excl);
    free(log);
}

/* A queued message taken back never goes out; a second removal, or one of
 * a message already sent, is refused. */
static void test_rm_queued(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    char *excl = path_in(c, "exclusive");
    char *kv = bt_xasprintf("FAKE_CODER_EXCLUSIVE=%s", excl);
    replay(c, "text");
    setenv_kv(c, kv);
    char *conv = first_turn(c);
    hold_turns(c, 12); /* until the removals are checked */
    pid_t a = baton_bg(c, "a.out", "send", "--json", conv, "send A", END);
    wait_running(c, conv, 3);
    baton(c, &res, NULL, 0, "send", conv, "never sent", END);
    assert_int_equal(res.exit_code, 0);
    char msg[32];
    assert_int_equal(sscanf(strstr(res.err.data, "queued as #"), "queued as #%31[0-9]", msg), 1);
    assert_string_equal(msg, "1"); /* the first queued in conv */
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "rm-queued", conv, msg, END);
    assert_int_equal(res.exit_code, 0);
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "rm-queued", conv, msg, END);
    assert_int_equal(res.exit_code, 2);
    assert_non_null(strstr(res.err.data, "no queued message #1 (nothing is queued)"));
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "rm-queued", conv, "3", END); /* the id of "send A" */
    assert_int_equal(res.exit_code, 2);
    assert_non_null(strstr(res.err.data, "no queued message #3"));
    bt_test_result_release(&res);
    const char *bad[] = {"x1", "0", "-1", "99999999999999999999", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        baton(c, &res, NULL, 0, "rm-queued", conv, bad[i], END);
        assert_int_equal(res.exit_code, 2);
        if (bad[i][0] != '-') /* "-1" is an unknown option (cmd-args.h) */
            assert_non_null(strstr(res.err.data, "queue number"));
        bt_test_result_release(&res);
    }
    release_turns(c);
    assert_int_equal(wait_exit(a), 0);
    cJSON *doc = settled(c, conv, 4);
    char *all = cJSON_PrintUnformatted(doc);
    assert_null(strstr(all, "never sent"));
    free(all);
    cJSON_Delete(doc);
    assert_int_equal(count_lines(excl, "start"), 2);
    free(conv);
    free(kv);
    free(excl);
}

/* The turn number of each run of conv, in the order of their answers;
 * returns how many (at most max). */
static size_t turns_of(struct ctx *c, const char *conv, int64_t *turns, size_t max)
{
    char *home = path_in(c, "home");
    struct bt_store *s = NULL;
    assert_int_equal(bt_store_open(home, &s, NULL), 0);
    struct bt_store_message *m;
    size_t n, k = 0;
    assert_int_equal(bt_store_message_list(s, conv, &m, &n), 0);
    for (size_t i = 0; i < n && k < max; i++) {
        struct bt_store_run r;
        if (m[i].role != BT_STORE_ROLE_ASSISTANT)
            continue;
        assert_int_equal(bt_store_run_get(s, m[i].run, &r), 0);
        turns[k++] = r.turn;
        bt_store_run_release(&r);
    }
    bt_store_message_list_free(m, n);
    bt_store_close(s);
    free(home);
    return k;
}

/* `baton cancel` from another process stops a foreground turn: it ends
 * cancelled (exit 130) with one closing turn.completed; then `retry` runs
 * the same prompt again, and refuses once the last turn completed. */
static void test_cancel_then_retry(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    char *log = path_in(c, "stdin.log");
    char *kv = bt_xasprintf("FAKE_CODER_LOG_STDIN=%s", log);
    replay(c, "text");
    setenv_kv(c, kv);
    hold_turns(c, 12); /* until cancelled */
    pid_t a = baton_bg(c, "a.out", "run", "--json", "please cancel me", END);
    char *conv = only_conversation(c);
    wait_running(c, conv, 3);
    baton(c, &res, NULL, 0, "cancel", conv, END);
    assert_int_equal(res.exit_code, 0);
    assert_non_null(strstr(res.err.data, "ended cancelled"));
    bt_test_result_release(&res);
    assert_int_equal(wait_exit(a), 130);
    char *out = path_in(c, "a.out");
    char *text = bt_test_slurp(out, NULL);
    cJSON **lines;
    size_t n = bt_test_json_lines(text, &lines);
    assert_string_equal(bt_test_jstr(lines[n - 1], "type"), "turn.completed");
    assert_string_equal(bt_test_jstr(lines[n - 1], "status"), "cancelled");
    bt_test_lines_free(lines, n);
    free(text);
    release_turns(c); /* the turns below run through */
    /* nothing runs: cancel refuses */
    baton(c, &res, NULL, 0, "cancel", conv, END);
    assert_int_equal(res.exit_code, 2);
    bt_test_result_release(&res);
    /* retry sends the same prompt again, as a new run */
    baton(c, &res, NULL, 0, "retry", "--json", conv, END);
    assert_int_equal(res.exit_code, 0);
    bt_test_result_release(&res);
    char *p = last_prompt(log);
    assert_string_equal(p, "please cancel me");
    free(p);
    cJSON *doc = messages_of(c, conv);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "messages")), 3);
    assert_string_equal(bt_test_jstr(message(doc, 1), "state"), "cancelled");
    assert_string_equal(bt_test_jstr(message(doc, 2), "state"), "complete");
    cJSON_Delete(doc);
    /* a completed turn is never sent again */
    baton(c, &res, NULL, 0, "retry", conv, END);
    assert_int_equal(res.exit_code, 2);
    assert_non_null(strstr(res.err.data, "never sent again"));
    bt_test_result_release(&res);
    doc = messages_of(c, conv);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "messages")), 3);
    cJSON_Delete(doc);
    /* the retry was another run of turn 1 (docs/store.md); the next
     * prompt is turn 2 */
    baton(c, &res, NULL, 0, "send", conv, "and then", END);
    assert_int_equal(res.exit_code, 0);
    bt_test_result_release(&res);
    int64_t turns[4] = {0};
    assert_int_equal(turns_of(c, conv, turns, 4), 3);
    assert_int_equal(turns[0], 1);
    assert_int_equal(turns[1], 1);
    assert_int_equal(turns[2], 2);
    free(out);
    free(conv);
    free(kv);
    free(log);
}

/* `run --detach` returns at once with the conversation id; two attachers
 * see the same whole turn and exit 0; attach --from starts later. */
static void test_detach_and_attach(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    replay(c, "text");
    setenv_kv(c, "FAKE_CODER_DELAY_MS=100");
    baton(c, &res, NULL, 0, "run", "--detach", "in the background", END);
    assert_int_equal(res.exit_code, 0);
    char conv[64];
    assert_int_equal(sscanf(res.out.data, "%63s", conv), 1);
    assert_int_equal(strlen(conv), BT_ID_LEN);
    bt_test_result_release(&res);
    pid_t a = baton_bg(c, "a.out", "attach", "--json", conv, END);
    pid_t b = baton_bg(c, "b.out", "attach", "--json", conv, END);
    assert_int_equal(wait_exit(a), 0);
    assert_int_equal(wait_exit(b), 0);
    char *pa = path_in(c, "a.out"), *pb = path_in(c, "b.out");
    char *ta = bt_test_slurp(pa, NULL), *tb = bt_test_slurp(pb, NULL);
    assert_string_equal(ta, tb);
    cJSON **lines;
    size_t n = bt_test_json_lines(ta, &lines);
    assert_true(n >= 5);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(cJSON_GetObjectItem(lines[i], "seq")->valueint, (int)i + 1);
    assert_string_equal(bt_test_jstr(lines[0], "type"), "turn.started");
    assert_string_equal(bt_test_jstr(lines[n - 1], "type"), "turn.completed");
    assert_string_equal(bt_test_jstr(lines[n - 1], "final_text"),
                        "Hello! You said: Say hello banana");
    bt_test_lines_free(lines, n);
    baton(c, &res, NULL, 0, "attach", "--json", "--from", "3", conv, END);
    assert_int_equal(res.exit_code, 0);
    n = bt_test_json_lines(res.out.data, &lines);
    assert_int_equal(cJSON_GetObjectItem(lines[0], "seq")->valueint, 3);
    bt_test_lines_free(lines, n);
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "attach", conv, END); /* human: the answer text */
    assert_int_equal(res.exit_code, 0);
    assert_non_null(strstr(res.out.data, "Hello! You said: Say hello banana"));
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "attach", "--from", "0", conv, END);
    assert_int_equal(res.exit_code, 2);
    bt_test_result_release(&res);
    free(ta);
    free(tb);
    free(pa);
    free(pb);
}

/* `baton run --detach prompt` with the fake coder held mid-turn; its
 * conversation id into conv, and the run once it has stored min events. */
static struct bt_store *detached_run(struct ctx *c, const char *prompt, int64_t min, char conv[64],
                                     struct bt_store_run *r, struct events *ev)
{
    struct bt_test_result res;
    replay(c, "text");
    hold_turns(c, 12); /* never released: the tests end the run */
    baton(c, &res, NULL, 0, "run", "--detach", prompt, END);
    assert_int_equal(res.exit_code, 0);
    assert_int_equal(sscanf(res.out.data, "%63s", conv), 1);
    bt_test_result_release(&res);
    struct bt_store *s = open_store(c);
    wait_events(s, conv, min, r, ev);
    return s;
}

/* kill -9 of a detached worker mid-turn: the next `baton ls` shows the run
 * interrupted, the events stored before the kill are intact and followed by
 * one turn.completed, and no process of the coder's group is left. */
static void test_worker_killed(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    char conv[64];
    struct bt_store_run r;
    struct events before = {BT_BUF_INIT, 0}, after = {BT_BUF_INIT, 0};
    setenv_kv(c, "FAKE_CODER_GRANDCHILD=1");
    struct bt_store *s = detached_run(c, "doomed", 4, conv, &r, &before);
    assert_int_equal(kill(r.owner_pid, SIGKILL), 0);
    usleep(100000);
    assert_int_equal(kill(-r.pgid, 0), 0); /* the coder outlived its worker */
    baton(c, &res, NULL, 0, "ls", END);
    assert_int_equal(res.exit_code, 0);
    assert_non_null(strstr(res.out.data, "interrupted"));
    bt_test_result_release(&res);
    assert_int_equal(kill(-r.pgid, 0), -1);
    assert_int_equal(errno, ESRCH);
    baton(c, &res, NULL, 0, "attach", conv, END); /* says why it ended */
    assert_int_equal(res.exit_code, 1);
    assert_non_null(strstr(res.err.data, "interrupted"));
    bt_test_result_release(&res);
    struct bt_store_run r2;
    assert_int_equal(bt_store_run_get(s, r.id, &r2), 0);
    assert_int_equal(r2.state, BT_STORE_RUN_INTERRUPTED);
    bt_store_run_release(&r2);
    assert_int_equal(bt_store_event_each(s, r.id, 1, collect, &after), 0);
    /* what was stored before the kill is still there, byte for byte */
    assert_true(after.all.len > before.all.len);
    assert_memory_equal(after.all.data, before.all.data, before.all.len);
    assert_true(after.n >= before.n + 1);
    char *last = bt_xasprintf("%lld turn.completed ", (long long)after.n);
    assert_non_null(strstr(after.all.data, last));
    assert_non_null(strstr(strstr(after.all.data, last), "\"status\":\"interrupted\""));
    free(last);
    bt_buf_release(&before.all);
    bt_buf_release(&after.all);
    bt_store_run_release(&r);
    bt_store_close(s);
}

/* The cancel request is stored before anything is signalled: an owner
 * that dies after the request (here: stopped, then killed) leaves a run
 * that reads as cancelled, and its group is stopped. */
static void test_cancel_survives_owner_crash(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    char conv[64];
    struct bt_store_run r;
    struct events ev = {BT_BUF_INIT, 0};
    struct bt_store *s = detached_run(c, "stopped owner", 3, conv, &r, &ev);
    assert_int_equal(kill(r.owner_pid, SIGSTOP), 0); /* it cannot see the request */
    pid_t canceller = baton_bg(c, "cancel.out", "cancel", conv, END);
    int requested = 0;
    for (int64_t t0 = 0; !requested && bt_test_poll(&t0);)
        assert_int_equal(bt_store_run_cancel_requested(s, r.id, &requested), 0);
    assert_true(requested); /* stored before anything else happens */
    assert_int_equal(kill(r.owner_pid, SIGKILL), 0);
    assert_int_equal(wait_exit(canceller), 0);
    struct bt_store_run r2;
    assert_int_equal(bt_store_run_get(s, r.id, &r2), 0);
    assert_int_equal(r2.state, BT_STORE_RUN_CANCELLED);
    bt_store_run_release(&r2);
    bt_buf_reset(&ev.all);
    assert_int_equal(bt_store_event_each(s, r.id, 1, collect, &ev), 0);
    assert_non_null(strstr(ev.all.data, "\"status\":\"cancelled\""));
    assert_int_equal(kill(-r.pgid, 0), -1);
    bt_buf_release(&ev.all);
    bt_store_run_release(&r);
    bt_store_close(s);
    baton(c, &res, NULL, 0, "attach", conv, END);
    assert_int_equal(res.exit_code, 130);
    bt_test_result_release(&res);
}

/* A detached send to a conversation whose directory is gone is refused
 * like a foreground one, and stores nothing. */
static void test_detach_refusal_stores_nothing(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    char *sub = path_in(c, "project");
    assert_int_equal(mkdir(sub, 0700), 0);
    replay(c, "text");
    baton(c, &res, NULL, 0, "run", "--json", "-C", sub, "first", END);
    assert_int_equal(res.exit_code, 0);
    char *conv = conversation_of(res.out.data);
    bt_test_result_release(&res);
    assert_int_equal(rmdir(sub), 0);
    baton(c, &res, NULL, 0, "send", "--detach", conv, "deploy", END);
    assert_int_equal(res.exit_code, 1);
    assert_non_null(strstr(res.err.data, "nothing was sent"));
    bt_test_result_release(&res);
    cJSON *doc = messages_of(c, conv);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "messages")), 2);
    cJSON_Delete(doc);
    free(conv);
    free(sub);
}

/* In a child: a run owned by this child and a process of that run (tagged
 * BATON_RUN=<run>, in a session of its own, ignoring SIGTERM) that nobody
 * recorded; reports "<run> <pid>" on fd and exits, leaving both behind. */
static void untracked_child(struct ctx *c, int fd)
{
    char *home = path_in(c, "home");
    struct bt_store *s = NULL;
    char conv[BT_ID_SIZE], run[BT_ID_SIZE];
    struct bt_store_conversation_new cn = {.coder = "codex", .cwd = c->dir, .title = "t"};
    struct bt_store_run_new rn = {.conversation = conv, .coder = "codex"};
    int rc = bt_store_open(home, &s, NULL);
    rc = rc ? rc : bt_store_conversation_create(s, &cn, conv);
    rc = rc ? rc : bt_store_run_create(s, &rn, run, NULL);
    bt_store_close(s);
    pid_t pid = rc ? -1 : fork();
    if (pid == 0) {
        setsid();
        signal(SIGTERM, SIG_IGN);
        setenv("BATON_RUN", run, 1);
        execl("/bin/sleep", "sleep", "120", (char *)NULL);
        _exit(127);
    }
    dprintf(fd, "%s %d\n", run, (int)pid);
    _exit(pid > 0 ? 0 : 1);
}

/* A run whose owner died before it recorded the coder's process group (or
 * whose process left the group): recovery finds the run's processes by the
 * BATON_RUN tag in their environment and stops them. */
static void test_untracked_processes_stopped(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0)
        untracked_child(c, fds[1]);
    close(fds[1]);
    char buf[128] = "";
    assert_true(read(fds[0], buf, sizeof buf - 1) > 0);
    close(fds[0]);
    assert_int_equal(wait_exit(child), 0);
    char *sp = strchr(buf, ' ');
    int pid = sp ? (int)strtol(sp + 1, NULL, 10) : 0;
    assert_true(pid > 0);
    assert_int_equal(kill(pid, 0), 0);
    baton(c, &res, NULL, 0, "ls", END); /* recovers the dead owner's run */
    assert_non_null(strstr(res.out.data, "interrupted"));
    bt_test_result_release(&res);
    int gone = 0;
    for (int64_t t0 = 0; !gone && bt_test_poll(&t0);) /* init reaps it */
        gone = kill(pid, 0) != 0;
    assert_true(gone);
}

/* Lines in a buffer. */
static size_t lines_in(const struct bt_buf *b)
{
    size_t n = 0;
    for (size_t i = 0; i < b->len; i++)
        n += b->data[i] == '\n';
    return n;
}

/* A foreground run whose stdout nobody reads (a paused pipe, a terminal
 * stopped by Ctrl-S) blocks in its write; it must not hold the store's
 * write lock meanwhile, or every other run writing to the store waits,
 * and after the busy timeout (5 s) loses its events to a rebuild. Its
 * stdout is a FIFO the test leaves full while another run streams. */
static void test_paused_reader_locks_no_one(void **state)
{
    struct ctx *c = *state;
    char *fifo = path_in(c, "paused.out");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    int rd = open(fifo, O_RDONLY | O_NONBLOCK);
    assert_true(rd >= 0);
    replay(c, "text");
    setenv_kv(c, "FAKE_CODER_DELAY_MS=1");
    setenv_kv(c, "FAKE_CODER_REPEAT=11x1000"); /* some 200 KB of deltas */
    pid_t paused = baton_bg(c, "paused.out", "run", "--json", "paused", END);
    int full = 0;
    for (int64_t t0 = 0; !full && bt_test_poll(&t0);) { /* 64 KiB: the pipe is full */
        int n = 0;
        full = ioctl(rd, FIONREAD, &n) == 0 && n >= 65536 - 4096;
    }
    if (!full)
        kill(paused, SIGKILL);
    assert_true(full);
    setenv_kv(c, "FAKE_CODER_REPEAT=11x20");
    struct bt_test_result res;
    baton(c, &res, NULL, 0, "run", "--json", "streams", END);
    /* the paused run goes on once read (first: a failed assert would leave
     * it blocked), with every event */
    int fl = fcntl(rd, F_GETFL);
    assert_int_equal(fcntl(rd, F_SETFL, fl & ~O_NONBLOCK), 0);
    struct bt_buf out = BT_BUF_INIT;
    char buf[65536];
    for (ssize_t n; (n = read(rd, buf, sizeof buf)) > 0;)
        bt_buf_add(&out, buf, (size_t)n);
    close(rd);
    assert_int_equal(wait_exit(paused), 0);
    assert_null(strstr(res.err.data, "could not store")); /* "database is locked" */
    assert_string_equal(res.err.data, "");
    assert_int_equal(res.exit_code, 0);
    assert_true(lines_in(&res.out) > 20);
    bt_test_result_release(&res);
    assert_true(lines_in(&out) > 1000);
    assert_non_null(strstr(out.data, "\"type\":\"turn.completed\",\"seq\""));
    bt_buf_release(&out);
    free(fifo);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_queue_while_running),
        T(test_rm_queued),
        T(test_cancel_then_retry),
        T(test_detach_and_attach),
        T(test_worker_killed),
        T(test_cancel_survives_owner_crash),
        T(test_detach_refusal_stores_nothing),
        T(test_untracked_processes_stopped),
        T(test_paused_reader_locks_no_one),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
