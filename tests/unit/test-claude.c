/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the claude write side: argv for the first and later turns,
 * the session baton chooses (transcript path and id), handoff, rm's
 * candidates, the version line, and the stdin messages (prompt, permission
 * answers by policy, answers to unknown control requests, interrupt).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "coder.h"
#include "rig.h"

static const struct bt_runner_ops *ops(void)
{
    const struct bt_coder *c = bt_coder_find("claude");
    assert_non_null(c);
    return c->runner;
}

/* argv joined by spaces (caller frees). */
static char *joined(const struct bt_strv *v)
{
    struct bt_buf b = BT_BUF_INIT;
    for (size_t i = 0; i < v->n; i++)
        bt_buf_addf(&b, "%s%s", i ? " " : "", v->v[i]);
    return bt_buf_detach(&b, NULL);
}

static char *argv_of(const struct bt_runner_config *cfg, int *rc)
{
    struct bt_strv v;
    bt_strv_init(&v);
    *rc = ops()->build_argv(cfg, &v);
    char *s = joined(&v);
    bt_strv_release(&v);
    return s;
}

#define SID "0b7e6b5e-4a1c-4d2e-9f00-1234567890ab"
#define PATH "/cfg/projects/-w/" SID ".jsonl"

static void test_first_turn_names_the_chosen_session(void **state)
{
    (void)state;
    struct bt_runner_config cfg = {.cwd = "/w", .native_session_path = PATH};
    int rc;
    char *s = argv_of(&cfg, &rc);
    assert_int_equal(rc, 0);
    assert_string_equal(s, "-p --output-format stream-json --input-format stream-json --verbose "
                           "--include-partial-messages --permission-prompt-tool stdio "
                           "--session-id " SID);
    free(s);
}

static void test_later_turn_resumes(void **state)
{
    (void)state;
    struct bt_runner_config cfg = {.cwd = "/w",
                                   .native_session_path = PATH,
                                   .native_session_id = SID,
                                   .model = "opus",
                                   .approval = BT_APPROVAL_NEVER,
                                   .no_retry = 1};
    int rc;
    char *s = argv_of(&cfg, &rc);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(s, "--permission-mode bypassPermissions --model opus --settings "
                              "{\"env\":{\"CLAUDE_CODE_MAX_RETRIES\":\"0\"}} --resume " SID));
    assert_null(strstr(s, "--permission-prompt-tool"));
    free(s);
}

static void test_unusable_sessions_and_models(void **state)
{
    (void)state;
    int rc;
    struct bt_runner_config none = {.cwd = "/w"};
    free(argv_of(&none, &rc));
    assert_int_equal(rc, -EINVAL); /* no session chosen: nothing to name */
    struct bt_runner_config bad_path = {.cwd = "/w",
                                        .native_session_path = "/cfg/x/not-a-uuid.jsonl"};
    free(argv_of(&bad_path, &rc));
    assert_int_equal(rc, -EINVAL);
    struct bt_runner_config flag_id = {.cwd = "/w", .native_session_id = "--help"};
    free(argv_of(&flag_id, &rc));
    assert_int_equal(rc, -EINVAL);
    /* --resume takes a word that is not a UUID as a session title */
    struct bt_runner_config title_id = {.cwd = "/w", .native_session_id = "notes"};
    free(argv_of(&title_id, &rc));
    assert_int_equal(rc, -EINVAL);
    struct bt_runner_config flag_model = {.cwd = "/w", .native_session_path = PATH, .model = "-x"};
    free(argv_of(&flag_model, &rc));
    assert_int_equal(rc, -EINVAL);
}

static void test_handoff(void **state)
{
    (void)state;
    struct bt_strv v;
    bt_strv_init(&v);
    struct bt_runner_config cfg = {.native_session_id = SID};
    assert_int_equal(ops()->handoff_argv(&cfg, &v), 0);
    char *s = joined(&v);
    assert_string_equal(s, "--resume " SID);
    free(s);
    bt_strv_release(&v);
    bt_strv_init(&v);
    struct bt_runner_config empty = {0};
    assert_int_equal(ops()->handoff_argv(&empty, &v), -ENOENT);
    bt_strv_release(&v);
}

static void test_new_session_path(void **state)
{
    (void)state;
    setenv("CLAUDE_CONFIG_DIR", "/cfg", 1);
    struct bt_runner_config cfg = {.cwd = "/tmp/a.b_c d"};
    char *path = NULL, *why = NULL;
    assert_int_equal(ops()->new_session_path(&cfg, &path, &why), 0);
    const char *prefix = "/cfg/projects/-tmp-a-b-c-d/";
    assert_int_equal(strncmp(path, prefix, strlen(prefix)), 0);
    const char *id = path + strlen(prefix);
    assert_int_equal(strlen(id), 36 + 6);
    assert_string_equal(id + 36, ".jsonl");
    assert_int_equal(id[14], '4'); /* a version 4 UUID */
    /* the path names the id the first turn passes */
    struct bt_runner_config first = {.cwd = cfg.cwd, .native_session_path = path};
    int rc;
    char *s = argv_of(&first, &rc);
    assert_int_equal(rc, 0);
    char want[64];
    snprintf(want, sizeof(want), "--session-id %.36s", id);
    assert_non_null(strstr(s, want));
    free(s);
    char *root = NULL;
    assert_int_equal(ops()->session_root(&root, &why), 0);
    assert_string_equal(root, "/cfg/projects");
    free(root);
    free(path);
    /* claude counts UTF-16 code units and cuts long names, adding a hash
     * (the directories claude 2.1.332 made for these cwds) */
    static const struct {
        const char *cwd, *dir;
    } names[] = {
        {"/w/caf\xc3\xa9 dir", "/cfg/projects/-w-caf--dir/"},
        {"/w/\xf0\x9f\x98\x80", "/cfg/projects/-w---/"},
        {"/root/advt/work/dddddddddddddddddddddddddddddddddddddddd/"
         "dddddddddddddddddddddddddddddddddddddddd/dddddddddddddddddddddddddddddddddddddddd/"
         "dddddddddddddddddddddddddddddddddddddddd/dddddddddddddddddddddddddddddddddddddddd/"
         "dddddddddddddddddddddddddddddddddddddddd",
         "/cfg/projects/-root-advt-work-dddddddddddddddddddddddddddddddddddddddd-"
         "dddddddddddddddddddddddddddddddddddddddd-dddddddddddddddddddddddddddddddddddddddd-"
         "dddddddddddddddddddddddddddddddddddddddd-dddddddddddddddddddd-mksjbz/"},
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        struct bt_runner_config odd = {.cwd = names[i].cwd};
        assert_int_equal(ops()->new_session_path(&odd, &path, &why), 0);
        assert_int_equal(strncmp(path, names[i].dir, strlen(names[i].dir)), 0);
        assert_int_equal(strlen(path), strlen(names[i].dir) + 36 + 6);
        free(path);
    }
    setenv("CLAUDE_CONFIG_DIR", "relative", 1);
    assert_int_equal(ops()->session_root(&root, &why), -EINVAL);
    assert_non_null(why);
    free(why);
    unsetenv("CLAUDE_CONFIG_DIR");
}

static void test_session_files(void **state)
{
    (void)state;
    struct bt_strv files;
    char *why = NULL;
    bt_strv_init(&files);
    struct bt_runner_config cfg = {.native_session_path = PATH, .native_session_id = SID};
    assert_int_equal(ops()->session_files(&cfg, "/cfg/projects", &files, &why), 0);
    assert_int_equal(files.n, 1);
    assert_string_equal(files.v[0], PATH);
    bt_strv_release(&files);
    bt_strv_init(&files);
    /* a path naming another session's transcript is not this one's */
    struct bt_runner_config other = {.native_session_path = PATH,
                                     .native_session_id = "11111111-2222-4333-8444-555555555555"};
    assert_int_equal(ops()->session_files(&other, "/cfg/projects", &files, &why), -EINVAL);
    assert_int_equal(files.n, 0);
    assert_non_null(why);
    free(why);
    why = NULL;
    struct bt_runner_config odd = {.native_session_path = "/cfg/projects/-w/notes.txt"};
    assert_int_equal(ops()->session_files(&odd, "/cfg/projects", &files, &why), -EINVAL);
    assert_non_null(why);
    free(why);
    bt_strv_release(&files);
}

static void test_version(void **state)
{
    (void)state;
    char *v = NULL;
    assert_int_equal(ops()->parse_version("2.1.332 (Claude Code)\n", &v), 0);
    assert_string_equal(v, "2.1.332");
    free(v);
    assert_int_not_equal(ops()->parse_version("codex-cli 0.171.0\n", &v), 0);
}

/* ---- stdin messages ----------------------------------------------------- */

static struct bt_buf g_events;

static void on_event(void *data, const struct bt_event *ev)
{
    (void)data;
    bt_event_to_json(ev, &g_events);
}

static void on_signal(void *data, const struct bt_signal *sig)
{
    (void)data;
    (void)sig;
}

static char *answer(enum bt_approval approval, const char *method)
{
    struct bt_runner_config cfg = {.prompt = "hi", .approval = approval};
    void *r = ops()->create(&cfg);
    struct bt_buf out = BT_BUF_INIT;
    struct bt_parser_sink sink = {on_event, on_signal, NULL};
    struct bt_signal sig = {.type = BT_SIGNAL_REQUEST,
                            .request = {.request_id = "\"req-1\"",
                                        .method = method,
                                        .approval_kind = "command",
                                        .summary = "touch x",
                                        .params_json = "{\"command\":\"touch x\"}"}};
    ops()->on_signal(r, &sig, &out, &sink);
    ops()->destroy(r);
    return bt_buf_detach(&out, NULL);
}

static void test_prompt_line(void **state)
{
    (void)state;
    struct bt_runner_config cfg = {.prompt = "say \"hi\"\n"};
    void *r = ops()->create(&cfg);
    struct bt_buf out = BT_BUF_INIT;
    ops()->start(r, &out);
    assert_string_equal(out.data,
                        "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"say "
                        "\\\"hi\\\"\\n\"}}\n");
    bt_buf_release(&out);
    /* the interrupt goes once */
    assert_int_equal(ops()->interrupt(r, &out), 0);
    assert_string_equal(out.data,
                        "{\"type\":\"control_request\",\"request_id\":\"baton-interrupt\","
                        "\"request\":{\"subtype\":\"interrupt\"}}\n");
    assert_int_equal(ops()->interrupt(r, &out), -ENOTSUP);
    bt_buf_release(&out);
    ops()->destroy(r);
}

/* A steer is one more user message on the open stdin, which claude answers
 * with a result of its own (TAKEN_END); none after the interrupt. */
static void test_steer_line(void **state)
{
    (void)state;
    struct bt_runner_config cfg = {.prompt = "first"};
    void *r = ops()->create(&cfg);
    struct bt_buf out = BT_BUF_INIT;
    assert_int_equal(ops()->steer(r, 3, "then \"this\"", &out, NULL), BT_RUNNER_STEER_TAKEN_END);
    assert_string_equal(out.data, "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":"
                                  "\"then \\\"this\\\"\"}}\n");
    bt_buf_reset(&out);
    assert_int_equal(ops()->interrupt(r, &out), 0);
    bt_buf_reset(&out);
    assert_int_equal(ops()->steer(r, 4, "late", &out, NULL), -EAGAIN);
    assert_int_equal(out.len, 0);
    bt_buf_release(&out);
    ops()->destroy(r);
}

/* A steer's query ends with a result of its own: the turn's token counts
 * are the results' sums, the repeated init starts no second session. */
static void test_usage_summed_over_results(void **state)
{
    (void)state;
    struct bt_test_rig r;
    bt_test_rig_init(&r, "claude", BT_APPROVAL_DENY, NULL);
    const char *init = "{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s-1\"}";
    bt_test_rig_line(&r, init);
    bt_test_rig_line(&r, "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,"
                         "\"usage\":{\"input_tokens\":10,\"cache_read_input_tokens\":100,"
                         "\"output_tokens\":5},\"total_cost_usd\":0.5}");
    assert_int_equal(r.usage.input_tokens, 110);
    assert_int_equal(r.usage.output_tokens, 5);
    bt_test_rig_line(&r, init);
    bt_test_rig_line(&r, "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,"
                         "\"usage\":{\"input_tokens\":20,\"cache_read_input_tokens\":200,"
                         "\"output_tokens\":7},\"total_cost_usd\":1.25}");
    assert_int_equal(r.usage.input_tokens, 330);
    assert_int_equal(r.usage.cached_input_tokens, 300);
    assert_int_equal(r.usage.output_tokens, 12);
    assert_true(r.usage.cost_usd == 1.25); /* claude's running total */
    assert_int_equal(r.ended, 2);
    /* one session.started: the second init is the same session */
    const char *first = strstr(r.events.data, "session.started");
    assert_non_null(first);
    assert_null(strstr(first + 1, "session.started"));
    bt_test_rig_release(&r);
}

static void test_permission_answers(void **state)
{
    (void)state;
    bt_buf_init(&g_events);
    char *allow = answer(BT_APPROVAL_AUTO, "can_use_tool");
    assert_string_equal(allow, "{\"type\":\"control_response\",\"response\":{\"subtype\":"
                               "\"success\",\"request_id\":\"req-1\",\"response\":{\"behavior\":"
                               "\"allow\",\"updatedInput\":{\"command\":\"touch x\"}}}}\n");
    assert_non_null(strstr(g_events.data, "\"decision\":\"accept\""));
    free(allow);
    bt_buf_reset(&g_events);
    char *deny = answer(BT_APPROVAL_DENY, "can_use_tool");
    assert_non_null(strstr(deny, "\"behavior\":\"deny\",\"message\":"));
    assert_non_null(strstr(g_events.data, "\"decision\":\"decline\""));
    free(deny);
    bt_buf_reset(&g_events);
    /* a request baton does not know still gets an answer */
    char *other = answer(BT_APPROVAL_AUTO, "hook_callback");
    assert_non_null(strstr(other, "\"subtype\":\"error\",\"request_id\":\"req-1\",\"error\":"));
    assert_int_equal(g_events.len, 0);
    free(other);
    bt_buf_release(&g_events);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_first_turn_names_the_chosen_session),
        cmocka_unit_test(test_later_turn_resumes),
        cmocka_unit_test(test_unusable_sessions_and_models),
        cmocka_unit_test(test_handoff),
        cmocka_unit_test(test_steer_line),
        cmocka_unit_test(test_usage_summed_over_results),
        cmocka_unit_test(test_new_session_path),
        cmocka_unit_test(test_session_files),
        cmocka_unit_test(test_version),
        cmocka_unit_test(test_prompt_line),
        cmocka_unit_test(test_permission_answers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
