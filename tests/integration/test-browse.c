/* SPDX-License-Identifier: MIT */
/*
 * integration tests of browsing: `baton search`, `baton ls`, `baton show
 * --last` and `baton rm`, run as the real baton binary against a store of
 * 10,000 generated conversations (tests/support/gen-store: conversation k
 * has the title word ibex<k>, zebra<k> in its first answer and yak<k> in
 * its second) made once for the whole group (the coders' session files
 * are test-rm.c's). Every baton process gets CODEX_HOME and TMUX_TMPDIR
 * in the test's scratch directory, so no real codex home or tmux server
 * is ever looked at.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "error.h"
#include "store.h"
#include "support.h"

#define BATON BT_BINARY_DIR "/baton"
#define GEN_STORE BT_BINARY_DIR "/tests/support/gen-store"
#define END ((const char *)NULL) /* ends baton()'s argument list */
#define N_CONV 10000

/* The generated store, shared by the group. */
static struct {
    char *dir;            /* scratch directory of the group */
    char *home;           /* dir/home: BATON_HOME of the big store */
    char ids[N_CONV][32]; /* id of conversation k */
    int removed;          /* conversations the rm tests took out of it */
} big;

/* One test's scratch directory and environment. */
struct ctx {
    char *dir;    /* scratch directory */
    char *env[5]; /* BATON_HOME, CODEX_HOME, NO_COLOR, TMUX_TMPDIR, NULL */
};

static int group_setup(void **state)
{
    (void)state;
    big.dir = bt_test_mkdtemp(bt_test_scratch_root(BT_BINARY_DIR), "browse");
    if (!big.dir)
        return -1;
    big.home = bt_xasprintf("%s/home", big.dir);
    char n[16];
    snprintf(n, sizeof n, "%d", N_CONV);
    const char *argv[] = {GEN_STORE, big.home, n, "42", NULL};
    struct bt_test_run r = {.argv = argv, .timeout_s = 240};
    struct bt_test_result res;
    if (bt_test_exec(&r, &res) != 0 || res.exit_code != 0) {
        fprintf(stderr, "gen-store failed: %s\n", res.err.data);
        bt_test_result_release(&res);
        return -1;
    }
    size_t k = 0;
    for (char *line = strtok(res.out.data, "\n"); line && k < N_CONV; line = strtok(NULL, "\n"))
        snprintf(big.ids[k++], sizeof big.ids[0], "%s", line);
    bt_test_result_release(&res);
    return k == N_CONV ? 0 : -1;
}

static int group_teardown(void **state)
{
    (void)state;
    bt_test_rmdir(big.dir);
    free(big.dir);
    free(big.home);
    return 0;
}

static int setup(void **state)
{
    struct ctx *c = bt_xcalloc(1, sizeof(*c));
    c->dir = bt_test_mkdtemp(bt_test_scratch_root(BT_BINARY_DIR), "browse-t");
    assert_non_null(c->dir);
    c->env[1] = bt_xasprintf("CODEX_HOME=%s/codex", c->dir);
    c->env[2] = bt_xstrdup("NO_COLOR=1");
    c->env[3] = bt_xasprintf("TMUX_TMPDIR=%s", c->dir);
    *state = c;
    return 0;
}

static int teardown(void **state)
{
    struct ctx *c = *state;
    bt_test_rmdir(c->dir);
    free(c->dir);
    for (int i = 0; i < 4; i++)
        free(c->env[i]);
    free(c);
    return 0;
}

/* Run baton with args (NULL-terminated) on the big store. */
static void baton(struct ctx *c, struct bt_test_result *res, const char *first, ...)
{
    const char *argv[24] = {BATON, first};
    size_t n = 2;
    va_list ap;
    va_start(ap, first);
    while (n < 23 && (argv[n] = va_arg(ap, const char *)) != NULL)
        n++;
    va_end(ap);
    argv[n] = NULL;
    free(c->env[0]);
    c->env[0] = bt_xasprintf("BATON_HOME=%s", big.home);
    struct bt_test_run r = {
        .argv = argv, .env = (const char *const *)c->env, .cwd = c->dir, .timeout_s = 120};
    assert_int_equal(bt_test_exec(&r, res), 0);
    assert_false(res->timed_out);
}

static size_t count_lines(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

static struct bt_store *open_store(const char *home)
{
    struct bt_store *s = NULL;
    char *err = NULL;
    int rc = bt_store_open(home, &s, &err);
    if (rc)
        print_error("open %s: %s\n", home, err ? err : "?");
    free(err);
    assert_int_equal(rc, 0);
    return s;
}

static int file_exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static int count_event(void *data, const struct bt_store_event *ev)
{
    (void)ev;
    ++*(int *)data;
    return 0;
}

/* ---- search --------------------------------------------------------- */

static void test_search_finds_exactly_k(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    static const int ks[] = {0, 1, 4242, N_CONV - 1};
    for (size_t i = 0; i < BT_ARRAY_SIZE(ks); i++) {
        int k = ks[i];
        char word[32], title[32];
        snprintf(word, sizeof word, "zebra%d", k);
        snprintf(title, sizeof title, "ibex%d ", k);
        /* human: the ls line, then the snippet indented */
        baton(c, &res, "search", word, END);
        assert_int_equal(res.exit_code, 0);
        assert_int_equal(count_lines(res.out.data), 2);
        assert_memory_equal(res.out.data, big.ids[k], 12);
        assert_non_null(strstr(res.out.data, title));
        char *second = strchr(res.out.data, '\n') + 1;
        assert_memory_equal(second, "    ", 4);
        assert_non_null(strstr(second, word));
        bt_test_result_release(&res);
        /* json */
        baton(c, &res, "search", "--json", word, END);
        assert_int_equal(res.exit_code, 0);
        cJSON **lines;
        size_t n = bt_test_json_lines(res.out.data, &lines);
        assert_int_equal(n, 1);
        assert_non_null(lines[0]);
        assert_string_equal(bt_test_jstr(lines[0], "id"), big.ids[k]);
        assert_non_null(strstr(bt_test_jstr(lines[0], "snippet"), word));
        assert_memory_equal(bt_test_jstr(lines[0], "title"), title, strlen(title));
        assert_string_equal(bt_test_jstr(lines[0], "coder"), "codex");
        assert_string_equal(bt_test_jstr(lines[0], "status"), "active");
        assert_string_equal(bt_test_jstr(lines[0], "last_run_state"), "completed");
        assert_non_null(bt_test_jstr(lines[0], "updated"));
        bt_test_lines_free(lines, n);
        bt_test_result_release(&res);
    }
    /* case does not matter; every word must be in one message or the title */
    baton(c, &res, "search", "--json", "ZEBRA4242", "Answer", END);
    assert_int_equal(res.exit_code, 0);
    assert_int_equal(count_lines(res.out.data), 1);
    assert_non_null(strstr(res.out.data, big.ids[4242]));
    bt_test_result_release(&res);
    baton(c, &res, "search", "zebra4242 yak4242", END);
    assert_int_equal(res.exit_code, 1);
    bt_test_result_release(&res);
}

static void test_search_title_only(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    baton(c, &res, "search", "--json", "ibex31", END);
    assert_int_equal(res.exit_code, 0);
    cJSON **lines;
    size_t n = bt_test_json_lines(res.out.data, &lines);
    assert_int_equal(n, 1);
    assert_string_equal(bt_test_jstr(lines[0], "id"), big.ids[31]);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(lines[0], "snippet")));
    bt_test_lines_free(lines, n);
    bt_test_result_release(&res);
    baton(c, &res, "search", "ibex31", END);
    assert_int_equal(res.exit_code, 0);
    assert_int_equal(count_lines(res.out.data), 1); /* no snippet line */
    bt_test_result_release(&res);
}

static void test_search_no_match(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    baton(c, &res, "search", "quetzalcoatl", END);
    assert_int_equal(res.exit_code, 1);
    assert_int_equal(res.out.len, 0);
    assert_non_null(strstr(res.err.data, "no conversation matches"));
    bt_test_result_release(&res);
    baton(c, &res, "search", "--json", "zebra10000", END); /* one past the last */
    assert_int_equal(res.exit_code, 1);
    assert_int_equal(res.out.len, 0);
    bt_test_result_release(&res);
}

static void test_search_limit_and_order(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    /* "answer" is in every conversation: the newest come first, as ls
     * lists them (gen-store makes several in one millisecond, which the
     * id then orders, not the order they were made in) */
    struct bt_test_result newest;
    baton(c, &newest, "ls", "--json", "--limit", "3", END);
    assert_int_equal(newest.exit_code, 0);
    cJSON **want;
    size_t nwant = bt_test_json_lines(newest.out.data, &want);
    assert_int_equal(nwant, 3);
    baton(c, &res, "search", "--json", "--limit", "3", "answer", END);
    assert_int_equal(res.exit_code, 0);
    cJSON **lines;
    size_t n = bt_test_json_lines(res.out.data, &lines);
    assert_int_equal(n, 3);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(bt_test_jstr(lines[i], "id"), bt_test_jstr(want[i], "id"));
    bt_test_lines_free(lines, n);
    bt_test_lines_free(want, nwant);
    bt_test_result_release(&newest);
    assert_non_null(strstr(res.err.data, "--limit"));
    bt_test_result_release(&res);
    /* default: 50 conversations, two lines each */
    baton(c, &res, "search", "answer", END);
    assert_int_equal(res.exit_code, 0);
    assert_int_equal(count_lines(res.out.data), 100);
    bt_test_result_release(&res);
}

/* Text that means something to FTS5 is searched for as plain words. */
static void test_search_fts_syntax_is_text(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    static const char *const inputs[] = {
        "\"",
        "\"\"",
        "AND",
        "OR",
        "NOT",
        "*",
        "NEAR(",
        "NEAR(a b)",
        "-x",
        "col:x",
        "text:x",
        "title:ibex1",
        "^zebra1",
        "zebra1*",
        "(zebra1",
        "zebra1)",
        "+",
        "a AND",
        "{text}: x",
        "zebra1 OR x",
        "\"zebra1",
        "zebra1\"",
        "x:",
        ":",
        "'",
        "zebra1 -",
        "- -- *",
        "\\",
        "%",
        "_",
        "NEAR(zebra1 zebra2, 3)",
        "rank:x",
        "messages_fts",
        "\xc3\xa9",
        "\xe2\x80\x94",
    };
    for (size_t i = 0; i < BT_ARRAY_SIZE(inputs); i++) {
        baton(c, &res, "search", "--", inputs[i], END);
        if (res.exit_code != 0 && res.exit_code != 1)
            print_error("input %zu '%s': exit %d: %s\n", i, inputs[i], res.exit_code, res.err.data);
        assert_true(res.exit_code == 0 || res.exit_code == 1);
        if (res.exit_code == 1)
            assert_string_equal(res.err.data, "baton: no conversation matches\n");
        bt_test_result_release(&res);
    }
    /* punctuation around a word leaves the word */
    baton(c, &res, "search", "--json", "--", "\"zebra17\"", END);
    assert_int_equal(res.exit_code, 0);
    assert_non_null(strstr(res.out.data, big.ids[17]));
    bt_test_result_release(&res);
    baton(c, &res, "search", "--json", "--", "(zebra18)*", END);
    assert_int_equal(res.exit_code, 0);
    assert_non_null(strstr(res.out.data, big.ids[18]));
    bt_test_result_release(&res);
}

static void test_search_usage(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    static const char *const cases[][3] = {
        {"", NULL, NULL},
        {"   ", NULL, NULL},
        {"\t\n", NULL, NULL},
        {"bad \xff", NULL, NULL},
        {"\xc3", NULL, NULL},
        {"--limit", "0", "x"},
        {"--limit", "-1", "x"},
        {"--limit", "x", "x"},
        {"--limit", "99999999999", "x"},
        {"--nosuchoption", "x", NULL},
    };
    for (size_t i = 0; i < BT_ARRAY_SIZE(cases); i++) {
        baton(c, &res, "search", cases[i][0], cases[i][1], cases[i][2], END);
        if (res.exit_code != 2)
            print_error("case %zu: exit %d\n", i, res.exit_code);
        assert_int_equal(res.exit_code, 2);
        assert_int_equal(res.out.len, 0);
        assert_true(res.err.len > 0);
        bt_test_result_release(&res);
    }
    baton(c, &res, "search", END);
    assert_int_equal(res.exit_code, 2);
    bt_test_result_release(&res);
}

/* ---- ls and show ---------------------------------------------------- */

static void test_ls_lists_all(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    size_t want = (size_t)(N_CONV - big.removed);
    baton(c, &res, "ls", END);
    assert_int_equal(res.exit_code, 0);
    assert_int_equal(count_lines(res.out.data), want);
    assert_memory_equal(res.out.data, big.ids[N_CONV - 1], 12); /* newest first */
    bt_test_result_release(&res);
    baton(c, &res, "ls", "--json", END);
    assert_int_equal(res.exit_code, 0);
    cJSON **lines;
    size_t n = bt_test_json_lines(res.out.data, &lines);
    assert_int_equal(n, want);
    for (size_t i = 0; i < n; i++) {
        assert_non_null(lines[i]);
        assert_non_null(bt_test_jstr(lines[i], "id"));
    }
    assert_string_equal(bt_test_jstr(lines[0], "id"), big.ids[N_CONV - 1]);
    bt_test_lines_free(lines, n);
    bt_test_result_release(&res);
}

/* ls's columns stay put whatever the coder and the state: the title
 * starts at the same column for codex and opencode (the longest coder
 * name), new and transferred (the longest state word). */
static void test_ls_columns(void **state)
{
    struct ctx *c = *state;
    char *home = bt_xasprintf("%s/home", c->dir);
    struct bt_store *s = open_store(home);
    static const char *const coders[] = {"codex", "opencode", "pi", "copilot"};
    char ids[4][BT_ID_SIZE];
    for (int i = 0; i < 4; i++) {
        struct bt_store_conversation_new cn = {
            .coder = coders[i], .cwd = c->dir, .title = "the title"};
        assert_int_equal(bt_store_conversation_create(s, &cn, ids[i]), 0);
    }
    assert_int_equal(bt_store_conversation_set_status(s, ids[1], BT_STORE_CONV_TRANSFERRED), 0);
    assert_int_equal(bt_store_conversation_set_status(s, ids[3], BT_STORE_CONV_ARCHIVED), 0);
    bt_store_close(s);
    c->env[0] = bt_xasprintf("BATON_HOME=%s", home);
    const char *argv[] = {BATON, "ls", NULL};
    struct bt_test_run r = {
        .argv = argv, .env = (const char *const *)c->env, .cwd = c->dir, .timeout_s = 120};
    struct bt_test_result res;
    assert_int_equal(bt_test_exec(&r, &res), 0);
    assert_int_equal(res.exit_code, 0);
    assert_int_equal(count_lines(res.out.data), 4);
    long col = -1;
    int seen_transferred = 0;
    for (char *line = strtok(res.out.data, "\n"); line; line = strtok(NULL, "\n")) {
        const char *title = strstr(line, "the title");
        assert_non_null(title);
        seen_transferred |= strstr(line, " transferred ") != NULL;
        if (col < 0)
            col = title - line;
        if (title - line != col)
            fail_msg("the title moves from column %ld to %ld in:\n%s", col, (long)(title - line),
                     line);
    }
    assert_true(seen_transferred);
    bt_test_result_release(&res);
    free(home);
}

static void test_show_last(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    const char *id = big.ids[123];
    baton(c, &res, "show", "--last", "2", id, END);
    assert_int_equal(res.exit_code, 0);
    assert_non_null(strstr(res.out.data, "prompt123b"));
    assert_non_null(strstr(res.out.data, "yak123"));
    assert_null(strstr(res.out.data, "prompt123a"));
    assert_null(strstr(res.out.data, "zebra123"));
    assert_non_null(strstr(res.out.data, "the last 2 of 4 messages"));
    bt_test_result_release(&res);

    baton(c, &res, "show", "--json", "--last", "2", id, END);
    assert_int_equal(res.exit_code, 0);
    cJSON *doc = cJSON_Parse(res.out.data);
    assert_non_null(doc);
    cJSON *msgs = cJSON_GetObjectItem(doc, "messages");
    assert_int_equal(cJSON_GetArraySize(msgs), 2);
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(msgs, 0), "seq")->valueint, 3);
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(msgs, 1), "seq")->valueint, 4);
    cJSON_Delete(doc);
    bt_test_result_release(&res);

    /* more than there are: all of them */
    baton(c, &res, "show", "--last", "10", id, END);
    assert_int_equal(res.exit_code, 0);
    assert_non_null(strstr(res.out.data, "prompt123a"));
    assert_null(strstr(res.out.data, "the last"));
    bt_test_result_release(&res);

    static const char *const bad[] = {"0", "-1", "x", "2x", "", " 2", "1e3", "9999999999"};
    for (size_t i = 0; i < BT_ARRAY_SIZE(bad); i++) {
        baton(c, &res, "show", "--last", bad[i], id, END);
        assert_int_equal(res.exit_code, 2);
        assert_int_equal(res.out.len, 0);
        bt_test_result_release(&res);
    }
    baton(c, &res, "show", id, "--last", END);
    assert_int_equal(res.exit_code, 2);
    bt_test_result_release(&res);
}

/* ---- rm ------------------------------------------------------------- */

static void test_rm_removes_everything(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    const char *id = big.ids[777];
    /* its runs, events and run files */
    struct bt_store *s = open_store(big.home);
    struct bt_store_message *msgs;
    size_t n;
    assert_int_equal(bt_store_message_list(s, id, &msgs, &n), 0);
    assert_int_equal(n, 4);
    char runs[2][BT_ID_SIZE];
    int nruns = 0, events = 0;
    for (size_t i = 0; i < n; i++)
        if (msgs[i].role == BT_STORE_ROLE_ASSISTANT)
            memcpy(runs[nruns++], msgs[i].run, BT_ID_SIZE);
    bt_store_message_list_free(msgs, n);
    assert_int_equal(nruns, 2);
    char *files[4];
    for (int i = 0; i < 4; i++) {
        files[i] = bt_store_run_file(s, runs[i / 2], i % 2 ? ".err" : ".out");
        write_file(files[i], "raw output\n");
    }
    for (int i = 0; i < 2; i++)
        assert_int_equal(bt_store_event_each(s, runs[i], 1, count_event, &events), 0);
    assert_int_equal(events, 6);
    bt_store_close(s);

    baton(c, &res, "rm", id, END);
    assert_int_equal(res.exit_code, 0);
    big.removed++;
    assert_non_null(strstr(res.out.data, "removed conversation"));
    assert_non_null(strstr(res.out.data, id));
    assert_non_null(strstr(res.out.data, "(4 messages, 2 runs, 6 events)"));
    for (int i = 0; i < 4; i++) {
        assert_non_null(strstr(res.out.data, files[i]));
        assert_false(file_exists(files[i]));
        free(files[i]);
    }
    bt_test_result_release(&res);

    s = open_store(big.home);
    struct bt_store_conversation conv;
    assert_int_equal(bt_store_conversation_get(s, id, &conv), BT_ENOTFOUND);
    assert_int_equal(bt_store_message_list(s, id, &msgs, &n), BT_ENOTFOUND);
    for (int i = 0; i < 2; i++) {
        struct bt_store_run r;
        assert_int_equal(bt_store_run_get(s, runs[i], &r), BT_ENOTFOUND);
        events = 0;
        assert_int_equal(bt_store_event_each(s, runs[i], 1, count_event, &events), 0);
        assert_int_equal(events, 0);
    }
    bt_store_close(s);

    baton(c, &res, "search", "zebra777", END);
    assert_int_equal(res.exit_code, 1);
    bt_test_result_release(&res);
    baton(c, &res, "search", "ibex777", END);
    assert_int_equal(res.exit_code, 1);
    bt_test_result_release(&res);
    baton(c, &res, "search", "zebra778", END); /* the neighbours stay */
    assert_int_equal(res.exit_code, 0);
    bt_test_result_release(&res);
    baton(c, &res, "show", id, END);
    assert_int_equal(res.exit_code, 2);
    bt_test_result_release(&res);
    baton(c, &res, "rm", id, END);
    assert_int_equal(res.exit_code, 2);
    bt_test_result_release(&res);
}

static void test_rm_refused_while_running(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    const char *id = big.ids[888];
    /* a turn of this process: its owner is alive, so no recovery ends it */
    struct bt_store *s = open_store(big.home);
    char run[BT_ID_SIZE];
    struct bt_store_run_new ro = {.conversation = id, .coder = "codex", .user_text = "third"};
    assert_int_equal(bt_store_run_create(s, &ro, run, NULL), 0);

    baton(c, &res, "rm", id, END);
    assert_int_equal(res.exit_code, 2);
    assert_int_equal(res.out.len, 0);
    assert_int_equal(count_lines(res.err.data), 1);
    assert_non_null(strstr(res.err.data, "running"));
    bt_test_result_release(&res);

    struct bt_store_message *msgs;
    size_t n;
    assert_int_equal(bt_store_message_list(s, id, &msgs, &n), 0);
    assert_int_equal(n, 6);
    bt_store_message_list_free(msgs, n);
    struct bt_store_run r;
    assert_int_equal(bt_store_run_get(s, run, &r), 0);
    assert_int_equal(r.state, BT_STORE_RUN_RUNNING);
    bt_store_run_release(&r);
    baton(c, &res, "search", "zebra888", END);
    assert_int_equal(res.exit_code, 0);
    bt_test_result_release(&res);

    struct bt_store_run_end end = {.state = BT_STORE_RUN_CANCELLED, .exit_code = BT_UNKNOWN};
    assert_int_equal(bt_store_run_finish(s, run, &end), 0);
    bt_store_close(s);
    baton(c, &res, "rm", id, END);
    assert_int_equal(res.exit_code, 0);
    big.removed++;
    assert_non_null(strstr(res.out.data, "(6 messages, 3 runs,"));
    bt_test_result_release(&res);
}

static void test_rm_usage(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    static const char *const cases[][2] = {
        {NULL, NULL}, {"zzzz", NULL}, {"--nosuch", NULL}, {"a", "b"}, {"", NULL}};
    for (size_t i = 0; i < BT_ARRAY_SIZE(cases); i++) {
        baton(c, &res, "rm", cases[i][0], cases[i][1], END);
        assert_int_equal(res.exit_code, 2);
        assert_int_equal(res.out.len, 0);
        bt_test_result_release(&res);
    }
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_search_finds_exactly_k),
        T(test_search_title_only),
        T(test_search_no_match),
        T(test_search_limit_and_order),
        T(test_search_fts_syntax_is_text),
        T(test_search_usage),
        T(test_ls_lists_all),
        T(test_ls_columns),
        T(test_show_last),
        T(test_rm_removes_everything),
        T(test_rm_refused_while_running),
        T(test_rm_usage),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
