/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the person's side of --approval ask in the CLI
 * (src/cmd-ask.h): an answer's option numbers become their labels, a
 * number that is none of the question's options is refused (never sent
 * as the person's words), a question without options takes numbers as
 * words; the inline ask reading typed lines from a pipe: a line longer
 * than its bound answers nothing and its tail is not the start of the
 * next line, which still answers.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd-ask.h"
#include "event.h"
#include "store.h"
#include "unit-fs.h"
#include "util.h"

#define QUESTION                                                                                   \
    "{\"id\":\"color\",\"text\":\"Which colour?\",\"options\":[{\"label\":\"Red\"},"               \
    "{\"label\":\"Blue\"}]}"
#define FREE_TEXT "{\"id\":\"name\",\"text\":\"What name?\",\"options\":[]}"

/* What text answers to question q_json, printed, or NULL when refused
 * (then *options is what the call returned). */
static char *answer_of(const char *q_json, const char *text, int *options)
{
    cJSON *q = cJSON_Parse(q_json), *all = cJSON_CreateArray();
    *options = bt_cmd_answer_add(all, q, text);
    char *out = *options ? NULL : cJSON_PrintUnformatted(all);
    if (*options)
        assert_int_equal(cJSON_GetArraySize(all), 0); /* nothing appended */
    cJSON_Delete(all);
    cJSON_Delete(q);
    return out;
}

static void expect_answer(const char *q_json, const char *text, const char *want)
{
    int options;
    char *got = answer_of(q_json, text, &options);
    assert_int_equal(options, 0);
    assert_string_equal(got, want);
    free(got);
}

static void expect_refused(const char *q_json, const char *text, int options_want)
{
    int options;
    char *got = answer_of(q_json, text, &options);
    assert_null(got);
    assert_int_equal(options, options_want);
}

static void test_option_numbers(void **state)
{
    (void)state;
    expect_answer(QUESTION, "2", "[[\"Blue\"]]");
    expect_answer(QUESTION, "1,2", "[[\"Red\",\"Blue\"]]");
    expect_answer(QUESTION, "02", "[[\"Blue\"]]");
    /* numbers, but none of its options: refused with how many it has */
    expect_refused(QUESTION, "7", 2);
    expect_refused(QUESTION, "0", 2);
    expect_refused(QUESTION, "1,3", 2);
    expect_refused(QUESTION, "99999999999999999999999", 2);
    /* not only numbers: the person's own words */
    expect_answer(QUESTION, "2 please", "[[\"2 please\"]]");
    expect_answer(QUESTION, "1,", "[[\"1,\"]]");
    expect_answer(QUESTION, "-1", "[[\"-1\"]]");
    expect_answer(QUESTION, "Green", "[[\"Green\"]]");
    /* a question without options takes numbers as words */
    expect_answer(FREE_TEXT, "42", "[[\"42\"]]");
    expect_answer(FREE_TEXT, "0", "[[\"0\"]]");
}

/* The inline ask on a pipe, with a request of a conversation that runs
 * no turn: a decision reaches the service, which says nothing waits. */
static void test_overlong_line(void **state)
{
    (void)state;
    char dir[] = "/tmp/bt-cmdask-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char *home = bt_xasprintf("%s/home", dir);
    struct bt_store *s;
    assert_int_equal(bt_store_open(home, &s, NULL), 0);
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    char *said = NULL;
    size_t said_len = 0;
    FILE *err = open_memstream(&said, &said_len);
    struct bt_cmd_ask *k = bt_cmd_ask_new(s, fds[0], err);

    struct bt_event ev;
    bt_event_init(&ev, BT_EVENT_APPROVAL_REQUESTED);
    ev.conversation = "0mxcsv9dxujeh6tv32ada4";
    ev.request_id = "0";
    ev.approval_kind = "command";
    ev.summary = "ls";
    bt_cmd_ask_event(k, &ev);

    /* 70,000 bytes then its end, in pieces as a terminal would give them */
    char chunk[1000];
    memset(chunk, 'y', sizeof chunk);
    for (int i = 0; i < 70; i++) {
        assert_int_equal(write(fds[1], chunk, sizeof chunk), (ssize_t)sizeof chunk);
        bt_cmd_ask_tick(k);
    }
    assert_int_equal(write(fds[1], "\n", 1), 1);
    bt_cmd_ask_tick(k);
    fflush(err);
    assert_non_null(strstr(said, "that line is longer than 64 KiB: it answers nothing"));
    assert_null(strstr(said, "type y, a or n"));      /* no tail taken for a line */
    assert_null(strstr(said, "waits for an answer")); /* nothing decided */

    /* the next line is whole, and answers */
    assert_int_equal(write(fds[1], "n\n", 2), 2);
    bt_cmd_ask_tick(k);
    fflush(err);
    assert_null(strstr(said, "type y, a or n"));
    assert_non_null(strstr(said, "no turn of 0mxcsv9dxujeh6tv32ada4 is running"));

    bt_cmd_ask_free(k);
    fclose(err);
    free(said);
    close(fds[0]);
    close(fds[1]);
    bt_store_close(s);
    free(home);
    bt_unit_rm_rf(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_option_numbers),
        cmocka_unit_test(test_overlong_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
