/* SPDX-License-Identifier: MIT */
/*
 * gen-store: fill a store with N generated conversations through the public
 * store API, for the browse tests (tests/integration/test-browse.c) and the
 * store benchmark (tests/bench/bench-store.c).
 *
 * usage: gen-store HOME N [SEED]
 *
 * Conversation k (0 <= k < N) has:
 * - the title "ibex<k> " + a few words (only the title holds ibex<k>),
 * - two turns, each a complete user prompt and a completed run whose
 *   assistant answer is 20-40 words from a small vocabulary; the first
 *   answer also holds "zebra<k>", the second "yak<k>", the prompts
 *   "prompt<k>a" and "prompt<k>b", and every answer the word "answer",
 * - three events per run (turn.started, item.delta, turn.completed).
 * Conversations are created in order, so k = N-1 is the newest. Prints the
 * id of conversation k on line k+1 of stdout. The words depend only on
 * SEED (default 1); ids and times are those of the moment. Exit 0, or 1
 * with a message on stderr.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store.h"
#include "util.h"

static const char *const vocab[] = {
    "the",      "parser",   "returns",   "a",       "buffer",  "when",     "line",    "is",
    "complete", "test",     "fails",     "because", "timeout", "of",       "process", "group",
    "signal",   "handler",  "queue",     "retry",   "cancel",  "database", "index",   "query",
    "schema",   "version",  "migration", "file",    "path",    "session",  "thread",  "model",
    "token",    "usage",    "error",     "warning", "stream",  "event",    "delta",   "approval",
    "command",  "shell",    "output",    "input",   "stdin",   "stdout",   "stderr",  "exit",
    "code",     "refactor", "function",  "struct",  "pointer", "memory",   "leak",    "free",
    "write",    "read",     "close",     "open",    "socket",  "json",     "utf8",    "unicode",
};

static uint64_t rng_state;

/* xorshift64*: reproducible words for a seed. */
static uint64_t rnd(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ULL;
}

static void add_words(struct bt_buf *b, int n)
{
    for (int i = 0; i < n; i++) {
        if (b->len && b->data[b->len - 1] != ' ')
            bt_buf_addc(b, ' ');
        bt_buf_adds(b, vocab[rnd() % BT_ARRAY_SIZE(vocab)]);
    }
}

static int fail(struct bt_store *s, const char *what, int k)
{
    fprintf(stderr, "gen-store: %s of conversation %d: %s\n", what, k, bt_store_errmsg(s));
    return 1;
}

/* One turn: prompt, run, three events, the answer. */
static int turn(struct bt_store *s, const char *conv, int k, const char *prompt, const char *answer)
{
    char run[BT_ID_SIZE];
    struct bt_store_run_new ro = {.conversation = conv, .coder = "codex", .user_text = prompt};
    if (bt_store_run_create(s, &ro, run, NULL) != 0)
        return fail(s, "run", k);
    struct bt_buf data = BT_BUF_INIT;
    static const char *const types[] = {"turn.started", "item.delta", "turn.completed"};
    for (int i = 0; i < 3; i++) {
        bt_buf_reset(&data);
        bt_buf_addf(&data, "{\"type\":\"%s\",\"seq\":%d", types[i], i + 1);
        bt_json_member(&data, "run", run);
        bt_json_member(&data, "conversation", conv);
        if (i == 1) {
            bt_buf_adds(&data, ",\"item\":{\"id\":\"msg_1\",\"kind\":\"message\"}");
            bt_json_member(&data, "text", answer);
        } else if (i == 2) {
            bt_json_member(&data, "status", "completed");
            bt_json_member(&data, "final_text", answer);
        }
        bt_buf_addc(&data, '}');
        struct bt_store_event ev = {.run = run,
                                    .seq = i + 1,
                                    .type = types[i],
                                    .ts_ms = bt_now_ms(),
                                    .data = data.data,
                                    .len = data.len};
        if (bt_store_event_append(s, &ev) != 0) {
            bt_buf_release(&data);
            return fail(s, "event", k);
        }
    }
    bt_buf_release(&data);
    struct bt_store_run_end end = {
        .state = BT_STORE_RUN_COMPLETED, .exit_code = 0, .final_text = answer};
    if (bt_store_run_finish(s, run, &end) != 0)
        return fail(s, "finish", k);
    return 0;
}

static int conversation(struct bt_store *s, int k)
{
    struct bt_buf title = BT_BUF_INIT, p1 = BT_BUF_INIT, p2 = BT_BUF_INIT, a1 = BT_BUF_INIT,
                  a2 = BT_BUF_INIT;
    bt_buf_addf(&title, "ibex%d", k);
    add_words(&title, 4);
    bt_buf_addf(&p1, "prompt%da please look at the", k);
    add_words(&p1, 6 + (int)(rnd() % 10));
    bt_buf_addf(&p2, "prompt%db and now", k);
    add_words(&p2, 6 + (int)(rnd() % 10));
    bt_buf_adds(&a1, "answer:");
    add_words(&a1, 10 + (int)(rnd() % 10));
    bt_buf_addf(&a1, " zebra%d", k);
    add_words(&a1, 10 + (int)(rnd() % 10));
    bt_buf_adds(&a2, "answer:");
    add_words(&a2, 10 + (int)(rnd() % 10));
    bt_buf_addf(&a2, " yak%d", k);
    add_words(&a2, 10 + (int)(rnd() % 10));

    char id[BT_ID_SIZE];
    struct bt_store_conversation_new o = {.coder = "codex", .cwd = "/work", .title = title.data};
    int rc = bt_store_conversation_create(s, &o, id) != 0 ? fail(s, "create", k) : 0;
    if (rc == 0)
        rc = turn(s, id, k, p1.data, a1.data);
    if (rc == 0)
        rc = turn(s, id, k, p2.data, a2.data);
    if (rc == 0)
        printf("%s\n", id);
    bt_buf_release(&title);
    bt_buf_release(&p1);
    bt_buf_release(&p2);
    bt_buf_release(&a1);
    bt_buf_release(&a2);
    return rc;
}

int main(int argc, char **argv)
{
    char *end = NULL;
    long n = argc >= 3 ? strtol(argv[2], &end, 10) : -1;
    if (argc < 3 || argc > 4 || *end || n < 0 || n > 10000000) {
        fprintf(stderr, "usage: gen-store HOME N [SEED]\n");
        return 2;
    }
    rng_state = argc == 4 ? strtoull(argv[3], NULL, 10) : 1;
    rng_state = (rng_state * 0x9E3779B97F4A7C15ULL) | 1; /* never 0 */
    struct bt_store *s;
    char *err = NULL;
    if (bt_store_open(argv[1], &s, &err) != 0) {
        fprintf(stderr, "gen-store: %s\n", err ? err : "cannot open the store");
        free(err);
        return 1;
    }
    int rc = 0;
    for (int k = 0; k < (int)n && rc == 0; k++)
        rc = conversation(s, k);
    bt_store_close(s);
    if (fflush(stdout) != 0)
        rc = 1;
    return rc;
}
