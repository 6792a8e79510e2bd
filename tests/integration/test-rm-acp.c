/* SPDX-License-Identifier: MIT */
/*
 * integration tests of `baton rm` for the ACP coders' sessions, one of
 * each shape, run as the real baton binary (docs/acp.md, "Session
 * deletion"):
 * - gemini (files and directories): the chat files that hold the session
 *   (by its whole id inside, never by the 8 characters of their name) and
 *   the directories named by its id, its sub-agents' too, in any project
 *   directory; another session's files with the same name prefix, files
 *   that name another session as well, links and directories leading
 *   outside are kept, their targets intact;
 * - copilot (a directory): session-state/<id>/ goes with all it holds, no
 *   link inside followed; a link in its place, a linked session-state
 *   leading outside, a file in its place, a tree too deep are kept;
 * - opencode (its own command): `opencode session delete ID` (fake-acp as
 *   opencode) runs in the conversation's directory with the coder's
 *   environment, after the question on a terminal, never for an id that is
 *   not opencode's or a conversation handed off; a session it does not
 *   have is not a failure, a failing command is (exit 1);
 * - each coder's directory from the environment: unset, relative or `~/`
 *   variables keep the session and say why.
 */
#include <errno.h>
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

#include "rm-util.h"
#include "store.h"

#define FAKE_ACP BT_BINARY_DIR "/tests/fake-coder/fake-acp"

/* gemini sessions: B shares A's first 8 characters (so the name of its
 * chat file), C does not; SUB is a sub-agent of A. */
#define SESSION_A "aa8442fd-9d0a-49d2-bef2-7bde297e6bd0"
#define SESSION_B "aa8442fd-1111-4222-8333-444444444444"
#define SESSION_C "0b7e6b5e-4a1c-4d2e-9f00-1234567890ab"
#define SUBAGENT "5d1f0c2e-7a6b-4c3d-8e9f-0a1b2c3d4e5f"

/* Ids that are no session id of any of them (a path, a flag, a pattern). */
static const char *const bad_ids[] = {"../../x", "..", "-rf", "a/b", "*", "--help", "notes"};

/* A gemini chat file as 0.61.0 writes it: the header naming sid, records,
 * and `extra` (a JSON line, or NULL) last. */
static void gemini_chat(const char *path, const char *sid, const char *extra)
{
    char *text = bt_xasprintf("{\"sessionId\":\"%s\",\"projectHash\":\"ab\",\"startTime\":\"x\","
                              "\"kind\":\"main\"}\n"
                              "{\"$set\":{\"messages\":[]}}\n"
                              "{\"id\":\"m1\",\"type\":\"user\",\"content\":[{\"text\":\"a "
                              "\\\"sessionId\\\":\\\"%s\\\" in a prompt\"}]}\n"
                              "{\"$set\":{\"lastUpdated\":\"y\"}}\n%s%s",
                              sid, SESSION_C, extra ? extra : "", extra ? "\n" : "");
    write_file(path, text);
    free(text);
}

/* <test dir>/<rel> made as a directory; caller frees. */
static char *dir_in(struct ctx *c, const char *rel)
{
    char *p = path_in(c, rel);
    make_dirs(p);
    return p;
}

/* <test dir>/<rel> written with text, its directories made; caller frees. */
static char *file_in(struct ctx *c, const char *rel, const char *text)
{
    char *p = path_in(c, rel);
    char *dir = bt_xstrndup(p, (size_t)(strrchr(p, '/') - p));
    make_dirs(dir);
    free(dir);
    write_file(p, text);
    return p;
}

static void assert_text(const char *path, const char *want)
{
    char *text = bt_test_slurp(path, NULL);
    if (!text || strcmp(text, want) != 0)
        fail_msg("%s holds '%s', not '%s'", path, text ? text : "(nothing)", want);
    free(text);
}

/* ---- gemini: files and directories ---------------------------------- */

#define G "gemini/.gemini/tmp"

/* Every file and directory of session A goes, in every project, its
 * sub-agent's too; B's chat file (same name prefix), a file that names B
 * as well, and B's and C's artifacts stay. */
static void test_rm_gemini_session(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    char id[BT_ID_SIZE];
    char *chats = dir_in(c, G "/proj/chats"), *chats2 = dir_in(c, G "/proj2/chats");
    char *mine = bt_xasprintf("%s/session-2026-12-02T06-27-aa8442fd.jsonl", chats);
    char *mine_old = bt_xasprintf("%s/session-2026-11-02T06-27-aa8442fd.json", chats);
    char *mine2 = bt_xasprintf("%s/session-2026-12-03T09-00-aa8442fd.jsonl", chats2);
    char *theirs = bt_xasprintf("%s/session-2026-12-02T06-28-aa8442fd.jsonl", chats);
    char *mixed = bt_xasprintf("%s/session-2026-12-02T06-29-aa8442fd.jsonl", chats);
    char *other = bt_xasprintf("%s/session-2026-12-02T06-30-0b7e6b5e.jsonl", chats);
    gemini_chat(mine, SESSION_A, NULL);
    /* an older release's one document, pretty-printed */
    write_file(mine_old, "{\n  \"sessionId\": \"" SESSION_A "\",\n  \"messages\": []\n}\n");
    gemini_chat(mine2, SESSION_A, "{\"$set\":{\"sessionId\":\"" SESSION_A "\"}}");
    gemini_chat(theirs, SESSION_B, NULL);
    gemini_chat(mixed, SESSION_A, "{\"sessionId\":\"" SESSION_B "\",\"kind\":\"main\"}");
    gemini_chat(other, SESSION_C, NULL);
    /* A's artifacts, its sub-agent's, and B's */
    char *kept[] = {
        file_in(c, G "/proj/logs/session-" SESSION_B ".jsonl", "b\n"),
        file_in(c, G "/proj/tool-outputs/session-" SESSION_B "/out.txt", "b\n"),
        file_in(c, G "/proj/" SESSION_C "/plans/plan.md", "c\n"),
        file_in(c, G "/proj/.project_root", "/w\n"),
    };
    char *gone[] = {
        file_in(c, G "/proj/logs/session-" SESSION_A ".jsonl", "a\n"),
        file_in(c, G "/proj/tool-outputs/session-" SESSION_A "/out.txt", "a\n"),
        file_in(c, G "/proj/" SESSION_A "/plans/plan.md", "a\n"),
        file_in(c, G "/proj/" SESSION_A "/tasks/t.json", "a\n"),
        file_in(c, G "/proj/chats/" SESSION_A "/" SUBAGENT ".jsonl", "sub\n"),
        file_in(c, G "/proj/logs/session-" SUBAGENT ".jsonl", "sub\n"),
        file_in(c, G "/proj/" SUBAGENT "/plans/plan.md", "sub\n"),
        file_in(c, G "/proj2/" SESSION_A "/tracker/t.json", "a\n"),
    };
    planted(c, "gemini", SESSION_A, NULL, id);
    rm_ok(c, id, &res);
    assert_false(file_exists(mine));
    assert_false(file_exists(mine_old));
    assert_false(file_exists(mine2));
    for (size_t i = 0; i < BT_ARRAY_SIZE(gone); i++)
        if (file_exists(gone[i]))
            fail_msg("%s is still there:\n%s", gone[i], res.out.data);
    char *dir = path_in(c, G "/proj/" SESSION_A);
    assert_false(file_exists(dir));
    free(dir);
    dir = path_in(c, G "/proj/chats/" SESSION_A);
    assert_false(file_exists(dir));
    free(dir);
    assert_has(res.out.data, "removed gemini session file ");
    assert_has(res.out.data, "session-2026-12-02T06-27-aa8442fd.jsonl");
    assert_has(res.out.data, "removed gemini session directory ");
    assert_has(res.out.data, "/tool-outputs/session-" SESSION_A "/\n");
    assert_null(strstr(res.out.data, "06-28-aa8442fd"));
    assert_null(strstr(res.out.data, "06-29-aa8442fd"));
    assert_true(file_exists(theirs));
    assert_true(file_exists(mixed));
    assert_true(file_exists(other));
    for (size_t i = 0; i < BT_ARRAY_SIZE(kept); i++)
        assert_true(file_exists(kept[i]));
    bt_test_result_release(&res);

    /* a session of nothing found, and a transferred one: kept */
    planted(c, "gemini", SESSION_A, NULL, id);
    rm_ok(c, id, &res);
    assert_has(res.out.data, "no gemini session file found for " SESSION_A);
    bt_test_result_release(&res);
    planted_as(c, "gemini", SESSION_B, NULL, 1, id);
    rm_ok(c, id, &res);
    assert_has(res.out.data, "kept the gemini session " SESSION_B);
    assert_true(file_exists(theirs));
    bt_test_result_release(&res);

    for (size_t i = 0; i < BT_ARRAY_SIZE(bad_ids); i++) {
        planted(c, "gemini", bad_ids[i], NULL, id);
        rm_ok(c, id, &res);
        assert_has(res.out.data, "it is not a gemini session id");
        bt_test_result_release(&res);
    }
    assert_true(file_exists(theirs));
    for (size_t i = 0; i < BT_ARRAY_SIZE(kept); i++)
        free(kept[i]);
    for (size_t i = 0; i < BT_ARRAY_SIZE(gone); i++)
        free(gone[i]);
    free(other);
    free(mixed);
    free(theirs);
    free(mine2);
    free(mine_old);
    free(mine);
    free(chats2);
    free(chats);
}

/* Links: a chat file that is one, a project directory that is one, a
 * logs directory leading outside, a link inside a session directory: none
 * is followed, every target stays. */
static void test_rm_gemini_only_inside(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    char id[BT_ID_SIZE];
    char *outside = dir_in(c, "outside"), *chats = dir_in(c, G "/proj/chats");
    char *precious = file_in(c, "outside/precious.jsonl", "the user's\n");
    /* outside: a project of A's as gemini would make it */
    char *out_chats = dir_in(c, "outside/proj/chats");
    char *out_chat = bt_xasprintf("%s/session-2026-12-02T06-27-aa8442fd.jsonl", out_chats);
    gemini_chat(out_chat, SESSION_A, NULL);
    char *out_logs = dir_in(c, "outside/logs");
    char *out_log = file_in(c, "outside/logs/session-" SESSION_A ".jsonl", "the user's\n");
    char *out_plan = file_in(c, "outside/proj/" SESSION_A "/plan.md", "the user's\n");

    char *link_chat = bt_xasprintf("%s/session-2026-12-02T06-31-aa8442fd.jsonl", chats);
    assert_int_equal(symlink(out_chat, link_chat), 0);
    char *linked_project = path_in(c, G "/linked"), *out_proj = path_in(c, "outside/proj");
    assert_int_equal(symlink(out_proj, linked_project), 0);
    char *logs = path_in(c, G "/proj/logs");
    assert_int_equal(symlink(out_logs, logs), 0);
    char *inside_link = path_in(c, G "/proj/" SESSION_A "/back");
    char *a_dir = dir_in(c, G "/proj/" SESSION_A);
    assert_int_equal(symlink(outside, inside_link), 0);
    char *hard = path_in(c, G "/proj/" SESSION_A "/hard.jsonl");
    assert_int_equal(link(precious, hard), 0);

    planted(c, "gemini", SESSION_A, NULL, id);
    rm_ok(c, id, &res);
    /* the session directory went, the link and the hard link in it as
     * names only */
    assert_false(file_exists(a_dir));
    assert_has(res.out.data, "removed gemini session directory");
    /* the log reached through the linked logs directory is kept */
    assert_has(res.out.data, "kept the gemini session file");
    assert_has(res.out.data, "is not inside");
    assert_text(precious, "the user's\n");
    assert_text(out_log, "the user's\n");
    assert_text(out_plan, "the user's\n");
    assert_true(file_exists(out_chat));
    assert_true(file_exists(link_chat)); /* a link is no chat file of A's */
    assert_null(strstr(res.out.data, "outside/proj"));
    bt_test_result_release(&res);
    free(hard);
    free(a_dir);
    free(inside_link);
    free(logs);
    free(out_proj);
    free(linked_project);
    free(link_chat);
    free(out_plan);
    free(out_log);
    free(out_logs);
    free(out_chat);
    free(out_chats);
    free(precious);
    free(chats);
    free(outside);
}

/* ---- copilot: a directory ------------------------------------------- */

/* session-state/<id>/ goes with all it holds (links inside as links, a
 * hard link as a name); another session's, the lock file, and what
 * links lead to stay. */
static void test_rm_copilot_session(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    char id[BT_ID_SIZE];
    char *outside = dir_in(c, "outside");
    char *precious = file_in(c, "outside/precious.txt", "the user's\n");
    char *mine = dir_in(c, "copilot/session-state/" SESSION_A);
    char *events = file_in(c, "copilot/session-state/" SESSION_A "/events.jsonl", "{}\n");
    char *deep = dir_in(c, "copilot/session-state/" SESSION_A "/files/a/b/c");
    char *dlink = path_in(c, "copilot/session-state/" SESSION_A "/files/out");
    assert_int_equal(symlink(outside, dlink), 0);
    char *flink = path_in(c, "copilot/session-state/" SESSION_A "/files/a/p");
    assert_int_equal(symlink(precious, flink), 0);
    char *hard = path_in(c, "copilot/session-state/" SESSION_A "/research/hard.txt");
    char *research = dir_in(c, "copilot/session-state/" SESSION_A "/research");
    assert_int_equal(link(precious, hard), 0);
    char *fifo = path_in(c, "copilot/session-state/" SESSION_A "/fifo");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    char *theirs = file_in(c, "copilot/session-state/" SESSION_B "/events.jsonl", "{}\n");
    char *lock =
        file_in(c, "copilot/session-state/.session-operation-locks/" SESSION_A ".lock", "");

    planted(c, "copilot", SESSION_A, NULL, id);
    rm_ok(c, id, &res);
    assert_false(file_exists(mine));
    char *real = realpath(c->dir, NULL);
    char *said = bt_xasprintf("removed copilot session directory %s/copilot/session-state/%s/\n",
                              real, SESSION_A);
    assert_has(res.out.data, said);
    assert_text(precious, "the user's\n");
    assert_true(file_exists(outside));
    assert_true(file_exists(theirs));
    assert_true(file_exists(lock));
    bt_test_result_release(&res);

    planted(c, "copilot", SESSION_A, NULL, id);
    rm_ok(c, id, &res);
    assert_has(res.out.data, "no copilot session file found for " SESSION_A);
    bt_test_result_release(&res);
    planted_as(c, "copilot", SESSION_B, NULL, 1, id);
    rm_ok(c, id, &res);
    assert_has(res.out.data, "handed to copilot's own interface");
    assert_true(file_exists(theirs));
    bt_test_result_release(&res);
    for (size_t i = 0; i < BT_ARRAY_SIZE(bad_ids); i++) {
        planted(c, "copilot", bad_ids[i], NULL, id);
        rm_ok(c, id, &res);
        assert_has(res.out.data, "it is not a copilot session id");
        bt_test_result_release(&res);
    }
    /* a stored path is never copilot's: only the id counts */
    char *elsewhere = dir_in(c, "outside/" SESSION_B);
    planted(c, "copilot", SESSION_C, elsewhere, id);
    rm_ok(c, id, &res);
    assert_true(file_exists(elsewhere));
    bt_test_result_release(&res);
    free(elsewhere);
    free(lock);
    free(theirs);
    free(fifo);
    free(research);
    free(hard);
    free(flink);
    free(dlink);
    free(deep);
    free(events);
    free(mine);
    free(precious);
    free(outside);
    free(said);
    free(real);
}

/* What is in the session directory's place, or leads to it, decides:
 * a link to a directory outside, a linked session-state leading outside,
 * a file, a tree deeper than baton descends are kept, nothing in them
 * removed. */
static void test_rm_copilot_only_inside(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    char id[BT_ID_SIZE];
    char *outside = dir_in(c, "outside/" SESSION_A);
    char *precious = file_in(c, "outside/" SESSION_A "/events.jsonl", "the user's\n");
    char *state_dir = dir_in(c, "copilot/session-state");
    char *link = path_in(c, "copilot/session-state/" SESSION_A);
    assert_int_equal(symlink(outside, link), 0);
    planted(c, "copilot", SESSION_A, NULL, id);
    rm_ok(c, id, &res);
    assert_has(res.out.data, "kept the copilot session directory");
    assert_has(res.out.data, "symbolic link, not a session directory");
    assert_text(precious, "the user's\n");
    assert_true(file_exists(link));
    bt_test_result_release(&res);
    assert_int_equal(unlink(link), 0);

    write_file(link, "not a directory\n");
    planted(c, "copilot", SESSION_A, NULL, id);
    rm_ok(c, id, &res);
    assert_has(res.out.data, "it is not a directory");
    assert_true(file_exists(link));
    bt_test_result_release(&res);
    assert_int_equal(unlink(link), 0);

    /* 65 levels below the session directory: more than baton descends
     * (BT_RUNNER_TREE_DEPTH, 64) */
    struct bt_buf deep = BT_BUF_INIT;
    bt_buf_adds(&deep, link);
    for (int i = 0; i < 65; i++)
        bt_buf_adds(&deep, "/d");
    make_dirs(deep.data);
    bt_buf_adds(&deep, "/leaf");
    write_file(deep.data, "deep\n");
    planted(c, "copilot", SESSION_A, NULL, id);
    rm_ok(c, id, &res);
    assert_has(res.out.data, "nested more than 64 directories deep");
    assert_true(file_exists(deep.data)); /* checked before anything went */
    bt_test_result_release(&res);
    bt_buf_release(&deep);

    /* session-state itself a link leading outside */
    char *moved = path_in(c, "copilot/state-was");
    assert_int_equal(rename(state_dir, moved), 0);
    char *out_state = path_in(c, "outside");
    assert_int_equal(symlink(out_state, state_dir), 0);
    planted(c, "copilot", SESSION_A, NULL, id);
    rm_ok(c, id, &res);
    assert_has(res.out.data, "is not inside");
    assert_text(precious, "the user's\n");
    bt_test_result_release(&res);
    free(out_state);
    free(moved);
    free(link);
    free(state_dir);
    free(precious);
    free(outside);
}

/* ---- opencode: its own command -------------------------------------- */

/* fake-acp as opencode, its sessions one file each in <dir>/sessions,
 * its calls logged; the log's path (caller frees). */
static char *opencode_env(struct ctx *c)
{
    char *sessions = dir_in(c, "sessions"), *log = path_in(c, "opencode.log");
    char *kv[] = {bt_xstrdup("BATON_OPENCODE_BIN=" FAKE_ACP),
                  bt_xasprintf("FAKE_ACP_SESSIONS=%s", sessions),
                  bt_xasprintf("FAKE_ACP_LOG=%s", log)};
    for (size_t i = 0; i < BT_ARRAY_SIZE(kv); i++) {
        setenv_kv(c, kv[i]);
        free(kv[i]);
    }
    free(sessions);
    return log;
}

/* What the log says of `session delete` calls ("" for none; caller frees). */
static char *deletes(const char *log)
{
    char *text = bt_test_slurp(log, NULL);
    struct bt_buf b = BT_BUF_INIT;
    for (char *l = text; l && *l;) {
        size_t n = strcspn(l, "\n");
        if (strncmp(l, "delete ", 7) == 0) {
            bt_buf_add(&b, l, n);
            bt_buf_addc(&b, '\n');
        }
        l += n + (l[n] == '\n');
    }
    free(text);
    return bt_buf_detach(&b, NULL);
}

/* A real turn with fake-acp as opencode, then rm: opencode's own command
 * deletes the session, run in the conversation's directory; another
 * session of opencode's stays. */
static void test_rm_opencode_session(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    char *log = opencode_env(c);
    setenv_kv(c, "FAKE_ACP_SESSION_ID=ses_fake1");
    char *mine = file_in(c, "sessions/ses_fake1", "{}\n");
    char *theirs = file_in(c, "sessions/ses_other2", "{}\n");
    baton(c, &res, NULL, 0, "run", "-c", "opencode", "--json", "hello", END);
    assert_int_equal(res.exit_code, 0);
    char *conv = conversation_of(res.out.data);
    bt_test_result_release(&res);

    rm_ok(c, conv, &res);
    assert_has(res.out.data,
               "removed opencode session ses_fake1 (opencode session delete ses_fake1)\n");
    assert_false(file_exists(mine));
    assert_true(file_exists(theirs));
    char *real = realpath(c->dir, NULL);
    char *calls = deletes(log), *want = bt_xasprintf("delete ses_fake1 in %s\n", real);
    assert_string_equal(calls, want);
    bt_test_result_release(&res);
    free(want);
    free(calls);
    free(real);
    free(conv);
    free(theirs);
    free(mine);
    free(log);
}

/* A session opencode does not have: said, exit 0; a command that fails:
 * exit 1, its words said, baton's records gone all the same. */
static void test_rm_opencode_outcomes(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    char id[BT_ID_SIZE];
    char *log = opencode_env(c);
    planted(c, "opencode", "ses_gone1", NULL, id);
    rm_ok(c, id, &res);
    assert_has(res.out.data, "no opencode session ses_gone1 found (opencode session delete "
                             "ses_gone1: Error: Session not found: ses_gone1)");
    bt_test_result_release(&res);

    setenv_kv(c, "FAKE_ACP_DELETE_FAIL=1");
    char *mine = file_in(c, "sessions/ses_locked1", "{}\n");
    planted(c, "opencode", "ses_locked1", NULL, id);
    baton(c, &res, NULL, 0, "rm", id, END);
    assert_int_equal(res.exit_code, 1);
    assert_false(conversation_exists(c, id));
    assert_has(res.err.data, "cannot remove the opencode session ses_locked1: `opencode session "
                             "delete ses_locked1` exited 2: Error: database is locked");
    assert_null(strstr(res.err.data, "\x1b"));
    assert_true(file_exists(mine));
    bt_test_result_release(&res);

    /* the conversation's directory gone: run in baton's own */
    setenv_kv(c, "FAKE_ACP_DELETE_FAIL=");
    char *gone_dir = dir_in(c, "was-here");
    char *home = path_in(c, "home");
    struct bt_store *s = NULL;
    assert_int_equal(bt_store_open(home, &s, NULL), 0);
    struct bt_store_conversation_new cn = {.coder = "opencode", .cwd = gone_dir, .title = "t"};
    assert_int_equal(bt_store_conversation_create(s, &cn, id), 0);
    assert_int_equal(bt_store_conversation_set_native(s, id, "ses_locked1", NULL), 0);
    bt_store_close(s);
    assert_int_equal(rmdir(gone_dir), 0);
    unlink(log);
    rm_ok(c, id, &res);
    assert_has(res.out.data, "removed opencode session ses_locked1");
    assert_false(file_exists(mine));
    char *real = realpath(c->dir, NULL);
    char *calls = deletes(log), *want = bt_xasprintf("delete ses_locked1 in %s\n", real);
    assert_string_equal(calls, want);
    bt_test_result_release(&res);
    free(want);
    free(calls);
    free(real);
    free(home);
    free(gone_dir);
    free(mine);
    free(log);
}

/* Never run: for an id that is not opencode's, a conversation handed off,
 * an answer but yes on a terminal; without opencode installed the
 * session is kept and said. */
static void test_rm_opencode_refusals(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    char id[BT_ID_SIZE];
    char *log = opencode_env(c);
    static const char *const not_opencode[] = {"ses_", "ses_a/b", "ses_a.b", "ses-1", "../ses_x"};
    for (size_t i = 0; i < BT_ARRAY_SIZE(bad_ids) + BT_ARRAY_SIZE(not_opencode); i++) {
        const char *sid =
            i < BT_ARRAY_SIZE(bad_ids) ? bad_ids[i] : not_opencode[i - BT_ARRAY_SIZE(bad_ids)];
        planted(c, "opencode", sid, NULL, id);
        rm_ok(c, id, &res);
        assert_has(res.out.data, "it is not an opencode session id");
        bt_test_result_release(&res);
    }
    planted_as(c, "opencode", "ses_mine1", NULL, 1, id);
    rm_ok(c, id, &res);
    assert_has(res.out.data, "handed to opencode's own interface");
    bt_test_result_release(&res);

    char *out;
    planted(c, "opencode", "ses_mine1", NULL, id);
    assert_int_equal(baton_pty(c, "n\n", &out, "rm", id, END), 1);
    assert_has(out, "and the opencode session ses_mine1 (by `opencode session delete ses_mine1`)");
    assert_true(conversation_exists(c, id));
    free(out);
    char *calls = deletes(log);
    assert_string_equal(calls, "");
    free(calls);

    setenv_kv(c, "BATON_OPENCODE_BIN=/nonexistent/opencode");
    rm_ok(c, id, &res);
    assert_has(res.out.data, "kept the opencode session ses_mine1: BATON_OPENCODE_BIN="
                             "/nonexistent/opencode is not an executable file");
    bt_test_result_release(&res);
    free(log);
}

/* ---- the coders' directories from the environment ------------------- */

/* Neither the coder's variable nor HOME, a relative one, one with `~/`
 * (which neither gemini nor copilot expands): the session is kept, and
 * said; HOME alone is where the coder keeps them then. */
static void test_session_dirs_from_env(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    char id[BT_ID_SIZE];
    char *chats = dir_in(c, G "/p/chats");
    char *chat = bt_xasprintf("%s/session-2026-12-02T06-27-aa8442fd.jsonl", chats);
    gemini_chat(chat, SESSION_A, NULL);
    char *copilot = dir_in(c, "copilot/session-state/" SESSION_A);
    static const struct {
        const char *coder, *var, *why_unset;
    } coders[] = {
        {"gemini", "GEMINI_CLI_HOME", "neither GEMINI_CLI_HOME nor HOME is set"},
        {"copilot", "COPILOT_HOME", "neither COPILOT_HOME nor HOME is set"},
    };
    for (size_t i = 0; i < BT_ARRAY_SIZE(coders); i++) {
        const char *unset[] = {"HOME", coders[i].var, NULL};
        planted(c, coders[i].coder, SESSION_A, NULL, id);
        const char *rm[] = {"rm", id, NULL};
        baton_without(c, &res, unset, rm);
        assert_int_equal(res.exit_code, 0);
        assert_has(res.out.data, coders[i].why_unset);
        bt_test_result_release(&res);
        static const char *const relative[] = {"gemini", "~/gemini"};
        for (size_t k = 0; k < BT_ARRAY_SIZE(relative); k++) {
            char *kv = bt_xasprintf("%s=%s", coders[i].var, relative[k]);
            setenv_kv(c, kv);
            planted(c, coders[i].coder, SESSION_A, NULL, id);
            rm_ok(c, id, &res);
            char *why = bt_xasprintf("%s is not an absolute path", coders[i].var);
            assert_has(res.out.data, why);
            bt_test_result_release(&res);
            free(why);
            free(kv);
        }
    }
    assert_true(file_exists(chat));
    assert_true(file_exists(copilot));

    /* the variables unset: HOME's .gemini and .copilot (HOME is the test's
     * directory) */
    char *home_copilot = dir_in(c, ".copilot/session-state/" SESSION_A);
    char *home_chats = dir_in(c, ".gemini/tmp/p/chats");
    char *home_chat = bt_xasprintf("%s/session-2026-12-02T06-27-aa8442fd.jsonl", home_chats);
    gemini_chat(home_chat, SESSION_A, NULL);
    static const char *const unset_both[] = {"GEMINI_CLI_HOME", "COPILOT_HOME", NULL};
    for (size_t i = 0; i < BT_ARRAY_SIZE(coders); i++) {
        planted(c, coders[i].coder, SESSION_A, NULL, id);
        const char *rm[] = {"rm", id, NULL};
        baton_without(c, &res, unset_both, rm);
        assert_int_equal(res.exit_code, 0);
        assert_has(res.out.data, "removed");
        bt_test_result_release(&res);
    }
    assert_false(file_exists(home_chat));
    assert_false(file_exists(home_copilot));
    assert_true(file_exists(chat));
    assert_true(file_exists(copilot));
    free(home_chat);
    free(home_chats);
    free(home_copilot);
    free(copilot);
    free(chat);
    free(chats);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, rm_setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_rm_gemini_session),      T(test_rm_gemini_only_inside), T(test_rm_copilot_session),
        T(test_rm_copilot_only_inside), T(test_rm_opencode_session),   T(test_rm_opencode_outcomes),
        T(test_rm_opencode_refusals),   T(test_session_dirs_from_env),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
