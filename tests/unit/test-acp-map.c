/* SPDX-License-Identifier: MIT */
/* Unit tests: normalized events as ACP session/update objects (acp-map.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "acp-map.h"
#include "service-work.h"
#include "util.h"

/* The updates of ev, as one JSON array text (caller frees). */
static char *map(struct bt_acp_map *m, const struct bt_event *ev)
{
    cJSON *updates = cJSON_CreateArray();
    int n = bt_acp_map_event(m, ev, updates);
    assert_int_equal(n, cJSON_GetArraySize(updates));
    char *text = cJSON_PrintUnformatted(updates);
    cJSON_Delete(updates);
    return text;
}

static void expect(struct bt_acp_map *m, const struct bt_event *ev, const char *want)
{
    char *got = map(m, ev);
    assert_string_equal(got, want);
    free(got);
}

static struct bt_event item(enum bt_event_type type, const char *id, enum bt_item_kind kind)
{
    struct bt_event ev;
    bt_event_init(&ev, type);
    ev.item.id = id;
    ev.item.kind = kind;
    return ev;
}

static void test_message_deltas_then_the_rest(void **state)
{
    (void)state;
    struct bt_acp_map m;
    bt_acp_map_init(&m);
    struct bt_event ev = item(BT_EVENT_ITEM_STARTED, "m1", BT_ITEM_MESSAGE);
    expect(&m, &ev, "[]");
    ev = item(BT_EVENT_ITEM_DELTA, "m1", BT_ITEM_MESSAGE);
    ev.delta = "Hel";
    ev.delta_len = 3;
    expect(&m, &ev,
           "[{\"sessionUpdate\":\"agent_message_chunk\",\"content\":{\"type\":\"text\","
           "\"text\":\"Hel\"}}]");
    /* the completed text: only what the deltas did not send */
    ev = item(BT_EVENT_ITEM_COMPLETED, "m1", BT_ITEM_MESSAGE);
    ev.item.text = "Hello";
    ev.item.text_len = 5;
    expect(&m, &ev,
           "[{\"sessionUpdate\":\"agent_message_chunk\",\"content\":{\"type\":\"text\","
           "\"text\":\"lo\"}}]");
    expect(&m, &ev, "[]"); /* nothing twice */
    /* a coder that does not stream: all of it at the end */
    ev = item(BT_EVENT_ITEM_COMPLETED, "r1", BT_ITEM_REASONING);
    ev.item.text = "hmm";
    ev.item.text_len = 3;
    expect(&m, &ev,
           "[{\"sessionUpdate\":\"agent_thought_chunk\",\"content\":{\"type\":\"text\","
           "\"text\":\"hmm\"}}]");
    bt_acp_map_release(&m);
}

/* A completed text that does not begin with what was streamed (a delta
 * lost: docs/events.md, `repaired`): ACP chunks only append, so the
 * whole text follows after a blank line; never its tail misaligned. */
static void test_message_repaired(void **state)
{
    (void)state;
    struct bt_acp_map m;
    bt_acp_map_init(&m);
    struct bt_event ev = item(BT_EVENT_ITEM_DELTA, "m1", BT_ITEM_MESSAGE);
    ev.delta = "Hello! Y";
    ev.delta_len = 8;
    free(map(&m, &ev));
    ev.delta = "a";
    ev.delta_len = 1;
    free(map(&m, &ev));
    ev = item(BT_EVENT_ITEM_COMPLETED, "m1", BT_ITEM_MESSAGE);
    ev.item.text = "Hello! You said: banana";
    ev.item.text_len = strlen(ev.item.text);
    expect(&m, &ev,
           "[{\"sessionUpdate\":\"agent_message_chunk\",\"content\":{\"type\":\"text\","
           "\"text\":\"\\n\\nHello! You said: banana\"}}]");
    /* shorter than what was streamed (a delta doubled) */
    ev = item(BT_EVENT_ITEM_DELTA, "m2", BT_ITEM_MESSAGE);
    ev.delta = "abab";
    ev.delta_len = 4;
    free(map(&m, &ev));
    ev = item(BT_EVENT_ITEM_COMPLETED, "m2", BT_ITEM_MESSAGE);
    ev.item.text = "ab";
    ev.item.text_len = 2;
    expect(&m, &ev,
           "[{\"sessionUpdate\":\"agent_message_chunk\",\"content\":{\"type\":\"text\","
           "\"text\":\"\\n\\nab\"}}]");
    /* the same text as streamed: nothing more */
    ev = item(BT_EVENT_ITEM_DELTA, "m3", BT_ITEM_MESSAGE);
    ev.delta = "ok";
    ev.delta_len = 2;
    free(map(&m, &ev));
    ev = item(BT_EVENT_ITEM_COMPLETED, "m3", BT_ITEM_MESSAGE);
    ev.item.text = "ok";
    ev.item.text_len = 2;
    expect(&m, &ev, "[]");
    bt_acp_map_release(&m);
}

static void test_tools(void **state)
{
    (void)state;
    struct bt_acp_map m;
    bt_acp_map_init(&m);
    struct bt_event ev = item(BT_EVENT_ITEM_STARTED, "c1", BT_ITEM_COMMAND);
    ev.item.command = "ls -l";
    ev.item.status = "in_progress";
    expect(&m, &ev,
           "[{\"sessionUpdate\":\"tool_call\",\"toolCallId\":\"c1\",\"title\":\"ls -l\","
           "\"kind\":\"execute\",\"status\":\"in_progress\"}]");
    ev = item(BT_EVENT_ITEM_DELTA, "c1", BT_ITEM_COMMAND);
    ev.delta = "a";
    ev.delta_len = 1;
    expect(&m, &ev, "[]"); /* the output goes whole, with the end */
    ev = item(BT_EVENT_ITEM_COMPLETED, "c1", BT_ITEM_COMMAND);
    ev.item.status = "completed";
    ev.item.text = "a\nb";
    ev.item.text_len = 3;
    expect(&m, &ev,
           "[{\"sessionUpdate\":\"tool_call_update\",\"toolCallId\":\"c1\",\"status\":"
           "\"completed\",\"content\":[{\"type\":\"content\",\"content\":{\"type\":\"text\","
           "\"text\":\"a\\nb\"}}]}]");
    /* only an end: one tool_call with it all; declined is failed */
    ev = item(BT_EVENT_ITEM_COMPLETED, "f1", BT_ITEM_FILE_CHANGE);
    ev.item.name = "src/a.c";
    ev.item.status = "declined";
    expect(&m, &ev,
           "[{\"sessionUpdate\":\"tool_call\",\"toolCallId\":\"f1\",\"title\":\"src/a.c\","
           "\"kind\":\"edit\",\"status\":\"failed\"}]");
    ev = item(BT_EVENT_ITEM_STARTED, "w1", BT_ITEM_WEB_SEARCH);
    ev.item.name = "acp schema";
    expect(&m, &ev,
           "[{\"sessionUpdate\":\"tool_call\",\"toolCallId\":\"w1\",\"title\":\"acp schema\","
           "\"kind\":\"search\",\"status\":\"in_progress\"}]");
    ev = item(BT_EVENT_ITEM_STARTED, "t1", BT_ITEM_TOOL_CALL); /* no name: its kind */
    expect(&m, &ev,
           "[{\"sessionUpdate\":\"tool_call\",\"toolCallId\":\"t1\",\"title\":\"tool_call\","
           "\"kind\":\"other\",\"status\":\"in_progress\"}]");
    bt_acp_map_release(&m);
}

/* A sub-agent (codex thread, claude Task) and its work: tool calls of the
 * turn, never the agent's message chunks or plan. */
static void test_subagent(void **state)
{
    (void)state;
    struct bt_acp_map m;
    bt_acp_map_init(&m);
    struct bt_event ev = item(BT_EVENT_ITEM_STARTED, "th2", BT_ITEM_SUBAGENT);
    ev.item.subagent = "th2";
    ev.item.name = "Counter";
    ev.item.status = "in_progress";
    expect(&m, &ev,
           "[{\"sessionUpdate\":\"tool_call\",\"toolCallId\":\"th2\",\"title\":\"Counter\","
           "\"kind\":\"other\",\"status\":\"in_progress\"}]");
    ev = item(BT_EVENT_ITEM_DELTA, "m9", BT_ITEM_MESSAGE);
    ev.item.subagent = "th2";
    ev.delta = "child";
    ev.delta_len = 5;
    expect(&m, &ev, "[]");
    ev = item(BT_EVENT_ITEM_COMPLETED, "m9", BT_ITEM_MESSAGE);
    ev.item.subagent = "th2";
    ev.item.status = "completed";
    ev.item.text = "child";
    ev.item.text_len = 5;
    expect(&m, &ev,
           "[{\"sessionUpdate\":\"tool_call\",\"toolCallId\":\"m9\",\"title\":\"message\","
           "\"kind\":\"other\",\"status\":\"completed\",\"content\":[{\"type\":\"content\","
           "\"content\":{\"type\":\"text\",\"text\":\"child\"}}]}]");
    ev = item(BT_EVENT_ITEM_COMPLETED, "p9", BT_ITEM_PLAN);
    ev.item.subagent = "th2";
    ev.item.status = "completed";
    char *got = map(&m, &ev);
    assert_null(strstr(got, "\"sessionUpdate\":\"plan\""));
    assert_non_null(strstr(got, "\"tool_call\""));
    free(got);
    bt_acp_map_release(&m);
}

static void test_plan(void **state)
{
    (void)state;
    struct bt_acp_map m;
    bt_acp_map_init(&m);
    struct bt_event ev = item(BT_EVENT_ITEM_COMPLETED, "plan", BT_ITEM_PLAN);
    /* the status words of claude and the ACP agents, codex's inProgress
     * (turn/plan/updated), its "?" for none, one no coder uses */
    const char *text = "[completed] read it\n  [in_progress] fix it \n\nship it\n[odd] x\n"
                       "[inProgress] run tests\n[?] y\n[]z";
    ev.item.text = text;
    ev.item.text_len = strlen(text);
    expect(&m, &ev,
           "[{\"sessionUpdate\":\"plan\",\"entries\":["
           "{\"content\":\"read it\",\"priority\":\"medium\",\"status\":\"completed\"},"
           "{\"content\":\"fix it\",\"priority\":\"medium\",\"status\":\"in_progress\"},"
           "{\"content\":\"ship it\",\"priority\":\"medium\",\"status\":\"pending\"},"
           "{\"content\":\"x\",\"priority\":\"medium\",\"status\":\"pending\"},"
           "{\"content\":\"run tests\",\"priority\":\"medium\",\"status\":\"in_progress\"},"
           "{\"content\":\"y\",\"priority\":\"medium\",\"status\":\"pending\"},"
           "{\"content\":\"[]z\",\"priority\":\"medium\",\"status\":\"pending\"}]}]");
    bt_acp_map_release(&m);
}

/* A steer from another front end: the user's words in the turn. */
static void test_steer(void **state)
{
    (void)state;
    struct bt_acp_map m;
    bt_acp_map_init(&m);
    struct bt_event ev;
    bt_event_init(&ev, BT_EVENT_TURN_STEERED);
    ev.steer_text = "use \"the other\" API";
    ev.control = 4;
    expect(&m, &ev,
           "[{\"sessionUpdate\":\"user_message_chunk\",\"content\":{\"type\":\"text\","
           "\"text\":\"use \\\"the other\\\" API\"}}]");
    bt_acp_map_release(&m);
}

static void test_usage_and_the_rest(void **state)
{
    (void)state;
    struct bt_acp_map m;
    bt_acp_map_init(&m);
    struct bt_event ev;
    bt_event_init(&ev, BT_EVENT_USAGE);
    ev.usage.context_tokens = 10;
    expect(&m, &ev, "[]"); /* no window: no share of it to show */
    ev.usage.context_window = 100;
    expect(&m, &ev, "[{\"sessionUpdate\":\"usage_update\",\"used\":10,\"size\":100}]");
    ev.usage.cost_usd = 0.5; /* the turn's: ACP's cost is the session's */
    expect(&m, &ev, "[{\"sessionUpdate\":\"usage_update\",\"used\":10,\"size\":100}]");
    static const enum bt_event_type silent[] = {
        BT_EVENT_TURN_STARTED,      BT_EVENT_SESSION_STARTED, BT_EVENT_APPROVAL_REQUESTED,
        BT_EVENT_APPROVAL_RESOLVED, BT_EVENT_WARNING,         BT_EVENT_ERROR,
        BT_EVENT_TURN_COMPLETED};
    for (size_t i = 0; i < sizeof(silent) / sizeof(silent[0]); i++) {
        bt_event_init(&ev, silent[i]);
        expect(&m, &ev, "[]");
    }
    assert_string_equal(bt_acp_stop_reason(BT_TURN_COMPLETED), "end_turn");
    assert_string_equal(bt_acp_stop_reason(BT_TURN_CANCELLED), "cancelled");
    assert_string_equal(bt_acp_stop_reason(BT_TURN_INTERRUPTED), "cancelled");
    assert_null(bt_acp_stop_reason(BT_TURN_FAILED));
    cJSON *u = bt_acp_map_user_text("hi");
    char *text = cJSON_PrintUnformatted(u);
    assert_string_equal(text, "{\"sessionUpdate\":\"user_message_chunk\",\"content\":"
                              "{\"type\":\"text\",\"text\":\"hi\"}}");
    free(text);
    cJSON_Delete(u);
    bt_acp_map_release(&m);
}

/* A question the coder asked is shown, not asked: one failed tool call
 * with the questions and options as text, named by run and seq; a
 * question without a list shows its summary. */
static void test_question(void **state)
{
    (void)state;
    struct bt_acp_map m;
    bt_acp_map_init(&m);
    struct bt_event ev;
    bt_event_init(&ev, BT_EVENT_APPROVAL_REQUESTED);
    ev.run = "r1";
    ev.seq = 7;
    ev.approval_kind = "user_input";
    ev.summary = "Which database?";
    ev.questions_json = "[{\"header\":\"DB\",\"text\":\"Which database?\",\"options\":"
                        "[{\"label\":\"SQLite\",\"description\":\"one file\"},{\"label\":"
                        "\"Postgres\"}],\"multiple\":true}]";
    expect(&m, &ev,
           "[{\"sessionUpdate\":\"tool_call\",\"toolCallId\":\"question-r1-7\",\"title\":"
           "\"Question: Which database?\",\"kind\":\"other\",\"status\":\"failed\",\"content\":"
           "[{\"type\":\"content\",\"content\":{\"type\":\"text\",\"text\":\"DB: Which "
           "database? [SQLite (one file) / Postgres] (one or more)\\n(nobody could answer during "
           "the turn; answer it with your next message)\"}}]}]");
    ev.questions_json = NULL;
    ev.summary = "Your name?";
    expect(&m, &ev,
           "[{\"sessionUpdate\":\"tool_call\",\"toolCallId\":\"question-r1-7\",\"title\":"
           "\"Question: Your name?\",\"kind\":\"other\",\"status\":\"failed\",\"content\":"
           "[{\"type\":\"content\",\"content\":{\"type\":\"text\",\"text\":\"Your name?\\n"
           "(nobody could answer during the turn; answer it with your next message)\"}}]}]");
    ev.approval_kind = "command"; /* an approval: session/request_permission asks it */
    expect(&m, &ev, "[]");
    bt_acp_map_release(&m);
}

/* A file change's changes as diffs: relative paths against the turn's
 * cwd, unified hunks one Diff each, sent again with the output. */
/* A turn's changes from its snapshots (acp-diff.c, bt_acp_diff_turn): the
 * patch cut at each "diff --git", each file's path from its +++ line (---
 * for a deletion, the file list for a name git quoted), a Diff per hunk,
 * a binary file as text; nothing when nothing changed. */
static void test_turn_changes(void **state)
{
    (void)state;
    struct bt_service_diff d = {0};
    struct bt_repo_change files[4] = {
        {.path = "a.c"}, {.path = "bin.dat"}, {.path = "gone.txt"}, {.path = "sp\"q.txt"}};
    d.files = (struct bt_repo_changes){.v = files, .n = 4};
    d.top = "/top";
    bt_buf_init(&d.patch);
    assert_null(bt_acp_diff_turn("R1", 2, &(struct bt_service_diff){.patch = d.patch}));
    bt_buf_adds(&d.patch, "diff --git a/a.c b/a.c\nindex 1..2 100644\n--- a/a.c\n+++ b/a.c\n"
                          "@@ -1,2 +1,2 @@\n keep\n-old\n+new\n"
                          "diff --git a/bin.dat b/bin.dat\nBinary files a/bin.dat and b/bin.dat "
                          "differ\n"
                          "diff --git a/gone.txt b/gone.txt\ndeleted file mode 100644\n"
                          "--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n"
                          "diff --git \"a/sp\\\"q.txt\" \"b/sp\\\"q.txt\"\nnew file mode "
                          "100644\n--- /dev/null\n+++ \"b/sp\\\"q.txt\"\n@@ -0,0 +1 @@\n+hi\n");
    cJSON *u = bt_acp_diff_turn("R1", 2, &d);
    assert_non_null(u);
    char *got = cJSON_PrintUnformatted(u);
    assert_string_equal(
        got,
        "{\"sessionUpdate\":\"tool_call\",\"toolCallId\":\"changes-R1\",\"title\":"
        "\"Changes of turn 2: a.c and 3 more files\",\"kind\":\"edit\",\"status\":"
        "\"completed\",\"content\":[{\"type\":\"diff\",\"path\":\"/top/a.c\",\"oldText\":"
        "\"keep\\nold\\n\",\"newText\":\"keep\\nnew\\n\"},{\"type\":\"content\",\"content\":{"
        "\"type\":\"text\",\"text\":\"diff --git a/bin.dat b/bin.dat\\nBinary files a/bin.dat "
        "and b/bin.dat differ\\n\"}},{\"type\":\"diff\",\"path\":\"/top/gone.txt\",\"oldText\":"
        "\"bye\\n\",\"newText\":\"\"},{\"type\":\"diff\",\"path\":\"/top/sp\\\"q.txt\",\"oldText\":"
        "\"\",\"newText\":\"hi\\n\"}],\"locations\":[{\"path\":\"/top/a.c\"},{\"path\":"
        "\"/top/bin.dat\"},{\"path\":\"/top/gone.txt\"},{\"path\":\"/top/sp\\\"q.txt\"}]}");
    free(got);
    cJSON_Delete(u);
    bt_buf_release(&d.patch);
}

static void test_file_change_diffs(void **state)
{
    (void)state;
    struct bt_acp_map m;
    bt_acp_map_init(&m);
    struct bt_event ev;
    bt_event_init(&ev, BT_EVENT_TURN_STARTED);
    ev.cwd = "/p";
    expect(&m, &ev, "[]");
    ev = item(BT_EVENT_ITEM_STARTED, "f1", BT_ITEM_FILE_CHANGE);
    ev.item.changes_json =
        "[{\"path\":\"a.c\",\"kind\":\"update\",\"move_to\":\"b.c\",\"diff\":\"--- a/a.c\\n+++ "
        "b/a.c\\n@@ -1,2 +1,2 @@\\n keep\\n-old\\n+new\\n@@ -9 +9,2 @@\\n x\\n+y\\n\\\\ No "
        "newline at end of file\\n\"},"
        "{\"path\":\"/abs/n.txt\",\"kind\":\"add\",\"new_text\":\"hi\\n\"},"
        "{\"path\":\"gone\",\"kind\":\"delete\"}]";
    const char *diffs =
        "\"content\":[{\"type\":\"diff\",\"path\":\"/p/a.c\",\"oldText\":\"keep\\nold\\n\","
        "\"newText\":\"keep\\nnew\\n\"},{\"type\":\"diff\",\"path\":\"/p/a.c\",\"oldText\":"
        "\"x\\n\",\"newText\":\"x\\ny\\n\"},{\"type\":\"diff\",\"path\":\"/abs/n.txt\","
        "\"newText\":\"hi\\n\"},{\"type\":\"diff\",\"path\":\"/p/gone\",\"oldText\":\"\","
        "\"newText\":\"\"}";
    const char *locations = "\"locations\":[{\"path\":\"/p/a.c\"},{\"path\":\"/p/b.c\"},"
                            "{\"path\":\"/abs/n.txt\"},{\"path\":\"/p/gone\"}]";
    char *want = bt_xasprintf("[{\"sessionUpdate\":\"tool_call\",\"toolCallId\":\"f1\","
                              "\"title\":\"a.c and 2 more files\",\"kind\":\"edit\",\"status\":"
                              "\"in_progress\",%s],%s}]",
                              diffs, locations);
    expect(&m, &ev, want);
    free(want);
    /* the end has no changes of its own: the diffs go again, then the output */
    ev = item(BT_EVENT_ITEM_COMPLETED, "f1", BT_ITEM_FILE_CHANGE);
    ev.item.status = "completed";
    ev.item.text = "done";
    ev.item.text_len = 4;
    want = bt_xasprintf("[{\"sessionUpdate\":\"tool_call_update\",\"toolCallId\":\"f1\","
                        "\"status\":\"completed\",%s,{\"type\":\"content\",\"content\":{"
                        "\"type\":\"text\",\"text\":\"done\"}}],%s}]",
                        diffs, locations);
    expect(&m, &ev, want);
    free(want);
    /* a diff without hunks is shown as text; a change without a path is none */
    ev = item(BT_EVENT_ITEM_COMPLETED, "f2", BT_ITEM_FILE_CHANGE);
    ev.item.status = "completed";
    ev.item.changes_json = "[{\"path\":\"/x\",\"kind\":\"update\",\"diff\":\"binary\"},"
                           "{\"kind\":\"update\",\"diff\":\"@@\\n+z\\n\"}]";
    expect(&m, &ev,
           "[{\"sessionUpdate\":\"tool_call\",\"toolCallId\":\"f2\",\"title\":"
           "\"/x\",\"kind\":\"edit\",\"status\":\"completed\",\"content\":[{\"type\":"
           "\"content\",\"content\":{\"type\":\"text\",\"text\":\"binary\"}}],\"locations\":[{"
           "\"path\":\"/x\"}]}]");
    /* not JSON: no content rather than a crash */
    ev = item(BT_EVENT_ITEM_COMPLETED, "f3", BT_ITEM_FILE_CHANGE);
    ev.item.status = "failed";
    ev.item.changes_json = "[{";
    expect(&m, &ev,
           "[{\"sessionUpdate\":\"tool_call\",\"toolCallId\":\"f3\",\"title\":"
           "\"file_change\",\"kind\":\"edit\",\"status\":\"failed\"}]");
    bt_acp_map_release(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_message_deltas_then_the_rest),
        cmocka_unit_test(test_message_repaired),
        cmocka_unit_test(test_tools),
        cmocka_unit_test(test_plan),
        cmocka_unit_test(test_steer),
        cmocka_unit_test(test_subagent),
        cmocka_unit_test(test_file_change_diffs),
        cmocka_unit_test(test_turn_changes),
        cmocka_unit_test(test_usage_and_the_rest),
        cmocka_unit_test(test_question),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
