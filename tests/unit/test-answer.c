/* SPDX-License-Identifier: MIT */
/* Unit tests of the answer rule (src/answer.h): a turn's final_text from its
 * message items, live and from stored events: sub-agents' messages left
 * out, the last final answer when the coder marks it (codex phase),
 * commentary only when there is nothing else, a cut-short message kept. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "answer.h"
#include "event.h"

/* ev into a (live) and, encoded, into b (from the store). */
static void feed(struct bt_answer *a, struct bt_answer *b, const struct bt_event *ev)
{
    bt_answer_add(a, ev);
    struct bt_buf json = BT_BUF_INIT;
    bt_event_to_json(ev, &json);
    bt_answer_add_json(b, json.data, json.len);
    bt_buf_release(&json);
}

/* One message event into a (live) and, encoded, into b (from the store). */
static void msg(struct bt_answer *a, struct bt_answer *b, enum bt_event_type type, const char *id,
                const char *text, const char *phase, const char *subagent)
{
    struct bt_event ev;
    bt_event_init(&ev, type);
    ev.run = "r";
    ev.conversation = "c";
    ev.seq = 1;
    ev.item.id = id;
    ev.item.kind = BT_ITEM_MESSAGE;
    ev.item.phase = phase;
    ev.item.subagent = subagent;
    if (type == BT_EVENT_ITEM_DELTA) {
        ev.delta = text;
        ev.delta_len = strlen(text);
    } else if (text) {
        ev.item.text = text;
        ev.item.text_len = strlen(text);
    }
    feed(a, b, &ev);
}

/* Both answers are want. */
static void expect(struct bt_answer *a, struct bt_answer *b, const char *want)
{
    char *x = bt_answer_text(a), *y = bt_answer_text(b);
    assert_string_equal(x, want);
    assert_string_equal(y, want);
    free(x);
    free(y);
}

/* One work item's event (a command, a sub-agent…) into a and b. */
static void work(struct bt_answer *a, struct bt_answer *b, enum bt_event_type type,
                 enum bt_item_kind kind, const char *id, const char *subagent)
{
    struct bt_event ev;
    bt_event_init(&ev, type);
    ev.run = "r";
    ev.conversation = "c";
    ev.seq = 1;
    ev.item.id = id;
    ev.item.kind = kind;
    ev.item.subagent = subagent;
    feed(a, b, &ev);
}

#define S BT_EVENT_ITEM_STARTED
#define D BT_EVENT_ITEM_DELTA
#define C BT_EVENT_ITEM_COMPLETED

static void test_plain_messages_joined(void **state)
{
    (void)state;
    struct bt_answer a, b;
    bt_answer_init(&a);
    bt_answer_init(&b);
    msg(&a, &b, C, "m1", "one", NULL, NULL);
    msg(&a, &b, D, "m2", "tw", NULL, NULL);
    expect(&a, &b, "one\n\ntw"); /* the cut-short one in its place */
    msg(&a, &b, C, "m2", "two", NULL, NULL);
    expect(&a, &b, "one\n\ntwo");
    bt_answer_release(&a);
    bt_answer_release(&b);
}

static void test_subagent_messages_left_out(void **state)
{
    (void)state;
    struct bt_answer a, b;
    bt_answer_init(&a);
    bt_answer_init(&b);
    msg(&a, &b, S, "c1", "", NULL, "thread-child");
    msg(&a, &b, D, "c1", "child words", NULL, "thread-child");
    expect(&a, &b, "");
    msg(&a, &b, C, "m1", "parent words", NULL, NULL);
    msg(&a, &b, C, "c1", "child words", NULL, "thread-child");
    /* the same id in the sub-agent (codex stand-in ids repeat) */
    msg(&a, &b, C, "m1", "child again", NULL, "thread-child");
    expect(&a, &b, "parent words");
    bt_answer_release(&a);
    bt_answer_release(&b);
}

static void test_last_final_answer(void **state)
{
    (void)state;
    struct bt_answer a, b;
    bt_answer_init(&a);
    bt_answer_init(&b);
    msg(&a, &b, S, "m1", "", "commentary", NULL);
    msg(&a, &b, D, "m1", "Looking", NULL, NULL);
    expect(&a, &b, "Looking"); /* commentary only: kept */
    msg(&a, &b, C, "m1", "Looking first.", "commentary", NULL);
    msg(&a, &b, C, "m2", "First answer.", "final_answer", NULL);
    expect(&a, &b, "First answer.");
    msg(&a, &b, C, "m3", "Steered.", "commentary", NULL);
    msg(&a, &b, S, "m4", "", "final_answer", NULL);
    msg(&a, &b, D, "m4", "Second", NULL, NULL);
    expect(&a, &b, "Second"); /* the last answer, cut short, wins */
    msg(&a, &b, C, "m4", "Second answer.", "final_answer", NULL);
    msg(&a, &b, C, "m5", "Tail remark.", "commentary", NULL);
    expect(&a, &b, "Second answer.");
    bt_answer_release(&a);
    bt_answer_release(&b);
}

static void test_unmarked_beats_commentary(void **state)
{
    (void)state;
    struct bt_answer a, b;
    bt_answer_init(&a);
    bt_answer_init(&b);
    msg(&a, &b, C, "m1", "preamble", "commentary", NULL);
    msg(&a, &b, C, "m2", "answer", NULL, NULL);
    expect(&a, &b, "answer");
    bt_answer_release(&a);
    bt_answer_release(&b);
}

/* What the agent said before its last work was a preamble (claude, pi, the
 * ACP agents mark no phase): the answer is what came after it. */
static void test_preamble_before_work_left_out(void **state)
{
    (void)state;
    struct bt_answer a, b;
    bt_answer_init(&a);
    bt_answer_init(&b);
    msg(&a, &b, C, "m1", "I will look.", NULL, NULL);
    work(&a, &b, S, BT_ITEM_COMMAND, "t1", NULL);
    expect(&a, &b, "I will look."); /* nothing after the work yet */
    work(&a, &b, C, BT_ITEM_COMMAND, "t1", NULL);
    msg(&a, &b, D, "m2", "Two fi", NULL, NULL);
    expect(&a, &b, "Two fi");
    msg(&a, &b, C, "m2", "Two files.", NULL, NULL);
    msg(&a, &b, C, "m3", "Done.", NULL, NULL);
    expect(&a, &b, "Two files.\n\nDone.");
    /* a message streamed when work starts was a preamble too */
    msg(&a, &b, D, "m4", "Now edit", NULL, NULL);
    work(&a, &b, S, BT_ITEM_FILE_CHANGE, "t2", NULL);
    msg(&a, &b, C, "m4", "Now editing.", NULL, NULL);
    msg(&a, &b, C, "m5", "Edited.", NULL, NULL);
    expect(&a, &b, "Edited.");
    bt_answer_release(&a);
    bt_answer_release(&b);
}

/* A sub-agent item (it names itself) is the turn's work; what the
 * sub-agent does inside is not. */
static void test_subagent_is_work_its_tools_are_not(void **state)
{
    (void)state;
    struct bt_answer a, b;
    bt_answer_init(&a);
    bt_answer_init(&b);
    msg(&a, &b, C, "m1", "I will ask a helper.", NULL, NULL);
    work(&a, &b, S, BT_ITEM_SUBAGENT, "task", "task");
    msg(&a, &b, C, "m2", "Hello.", NULL, NULL);
    work(&a, &b, S, BT_ITEM_COMMAND, "ls", "task"); /* the sub-agent's */
    expect(&a, &b, "Hello.");
    bt_answer_release(&a);
    bt_answer_release(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_messages_joined),
        cmocka_unit_test(test_preamble_before_work_left_out),
        cmocka_unit_test(test_subagent_is_work_its_tools_are_not),
        cmocka_unit_test(test_subagent_messages_left_out),
        cmocka_unit_test(test_last_final_answer),
        cmocka_unit_test(test_unmarked_beats_commentary),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
