/* SPDX-License-Identifier: MIT */
/*
 * integration tests of `baton rm` and the coders' session directories, run
 * as the real baton binary:
 * (the ACP coders' sessions: test-rm-acp.c)
 * - on a terminal (a pseudo-terminal of the test's own, forkpty) rm says
 *   what goes and asks; only y/yes removes, anything else (n, an empty
 *   line, end of input) removes nothing and exits 1; -y skips the question,
 *   and so does a stdin that is not a terminal;
 * - rm deletes only files it proves to be the coder's: for pi and codex,
 *   stored session paths and found files planted with `..`, links pointing
 *   outside, linked directories and absolute paths elsewhere are all kept,
 *   their targets intact, while baton's own records go (exit 0);
 * - where each coder keeps its sessions comes from the environment: with
 *   the variables unset or relative, rm keeps the session and `run` fails
 *   naming the variables.
 * Every run gets its own TMUX_TMPDIR (no tmux server of the machine is
 * asked) and the coders' directory variables of the test, never the
 * user's.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "error.h"
#include "rm-util.h"
#include "store.h"

#define THREAD "01a22760-0481-7d43-b595-86e7298639e7" /* text.jsonl's thread */

/* ---- asking on a terminal ------------------------------------------- */

/* A codex conversation of one turn with its rollout file in CODEX_HOME;
 * its id (caller frees) and the rollout's path. */
static char *codex_conversation(struct ctx *c, char **rollout)
{
    struct bt_test_result res;
    replay(c, "text");
    baton(c, &res, NULL, 0, "run", "--json", "remove me", END);
    assert_int_equal(res.exit_code, 0);
    char *conv = conversation_of(res.out.data);
    bt_test_result_release(&res);
    char *day = bt_xasprintf("%s/codex/sessions/2026/11/29", c->dir);
    make_dirs(day);
    *rollout = bt_xasprintf("%s/rollout-2026-11-29T12-55-33-" THREAD ".jsonl", day);
    write_file(*rollout, "{}\n");
    free(day);
    return conv;
}

/* On a terminal rm names the conversation and what goes, and asks: n, an
 * empty line or the end of input keep everything (exit 1), so does Ctrl-C
 * (130); y or yes (any case) goes on. */
static void test_rm_asks_on_a_terminal(void **state)
{
    struct ctx *c = *state;
    char *rollout, *conv = codex_conversation(c, &rollout);
    static const char *const noes[] = {"n\n", "\n", "no\n", "yess\n", "\x04"};
    for (size_t i = 0; i < BT_ARRAY_SIZE(noes); i++) {
        char *out;
        int rc = baton_pty(c, noes[i], &out, "rm", conv, END);
        assert_int_equal(rc, 1);
        char *head = bt_xasprintf(
            "remove conversation %.12s \"remove me\" (codex): 2 messages, 1 run, the run files",
            conv);
        assert_has(out, head);
        assert_has(out, "and the codex session file ");
        assert_has(out, "rollout-2026-11-29T12-55-33-" THREAD ".jsonl");
        assert_has(out, "remove it? [y/N] ");
        assert_has(out, "nothing removed");
        assert_null(strstr(out, "removed conversation"));
        assert_true(conversation_exists(c, conv));
        assert_true(file_exists(rollout));
        free(head);
        free(out);
    }
    char *out;
    /* Ctrl-C at the question: interrupted (130), nothing removed */
    assert_int_equal(baton_pty(c, "\x03", &out, "rm", conv, END), 130);
    assert_true(conversation_exists(c, conv));
    assert_true(file_exists(rollout));
    free(out);
    assert_int_equal(baton_pty(c, "Yes\n", &out, "rm", conv, END), 0);
    assert_has(out, "[y/N] ");
    assert_has(out, "removed conversation");
    assert_has(out, "removed codex session file");
    assert_false(conversation_exists(c, conv));
    assert_false(file_exists(rollout));
    free(out);
    free(rollout);
    free(conv);
}

/* -y / --yes on a terminal, or a stdin that is not one: no question. */
static void test_rm_without_asking(void **state)
{
    struct ctx *c = *state;
    static const char *const flags[] = {"-y", "--yes"};
    for (size_t i = 0; i < BT_ARRAY_SIZE(flags); i++) {
        char *rollout, *conv = codex_conversation(c, &rollout), *out;
        assert_int_equal(baton_pty(c, NULL, &out, "rm", flags[i], conv, END), 0);
        assert_null(strstr(out, "[y/N]"));
        assert_has(out, "removed conversation");
        assert_false(conversation_exists(c, conv));
        assert_false(file_exists(rollout));
        free(out);
        free(rollout);
        free(conv);
    }
    struct bt_test_result res;
    char *rollout, *conv = codex_conversation(c, &rollout);
    baton(c, &res, "n\n", 0, "rm", conv, END); /* stdin a pipe: never asked, "n" unread */
    assert_int_equal(res.exit_code, 0);
    assert_null(strstr(res.err.data, "[y/N]"));
    assert_false(conversation_exists(c, conv));
    assert_false(file_exists(rollout));
    bt_test_result_release(&res);
    free(rollout);
    free(conv);
}

/* ---- only the coder's files ----------------------------------------- */

/* pi: only a regular .jsonl file inside pi's sessions directory
 * ($PI_CODING_AGENT_DIR/sessions) goes; every other stored path is kept,
 * and so is what it points to, while the conversation goes. */
static void test_rm_pi_only_inside(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    char id[BT_ID_SIZE];
    char *root = path_in(c, "pi/sessions"), *outside = path_in(c, "outside");
    char *work = bt_xasprintf("%s/--work--", root);
    make_dirs(work);
    make_dirs(outside);
    char *precious = bt_xasprintf("%s/precious.jsonl", outside);
    write_file(precious, "the user's\n");

    struct {
        const char *path; /* planted session path, relative to the test dir */
        const char *why;  /* what rm says */
    } cases[] = {
        {"pi/sessions/--work--/../../../outside/precious.jsonl", "'..' component"},
        {"pi/sessions/--work--/../--work--/x.jsonl", "'..' component"},
        {"pi/sessions/--work--/./x.jsonl", "'.' or '..' component"},
        {"pi/sessions/--work--/link.jsonl", "symbolic link"},
        {"pi/sessions/--linked--/precious.jsonl", "is not inside"},
        {"outside/precious.jsonl", "is not inside"},
    };
    char *link = bt_xasprintf("%s/link.jsonl", work), *linked = bt_xasprintf("%s/--linked--", root);
    assert_int_equal(symlink(precious, link), 0);
    assert_int_equal(symlink(outside, linked), 0);
    char *x = bt_xasprintf("%s/x.jsonl", work);
    write_file(x, "pi's, but named oddly\n");
    for (size_t i = 0; i < BT_ARRAY_SIZE(cases); i++) {
        char *path = bt_xasprintf("%s/%s", c->dir, cases[i].path);
        planted(c, "pi", "sess", path, id);
        rm_ok(c, id, &res);
        assert_has(res.out.data, "kept the pi session file");
        assert_has(res.out.data, cases[i].why);
        assert_null(strstr(res.out.data, "removed pi session file"));
        assert_true(file_exists(precious));
        assert_true(file_exists(link));
        assert_true(file_exists(x));
        bt_test_result_release(&res);
        free(path);
    }
    char *text = bt_test_slurp(precious, NULL);
    assert_string_equal(text, "the user's\n");
    free(text);

    /* inside: removed, and said with its real path */
    char *mine = bt_xasprintf("%s/2026-11-29T12-00-00-000Z_baton-1.jsonl", work);
    write_file(mine, "{\"type\":\"session\"}\n");
    planted(c, "pi", "sess", mine, id);
    rm_ok(c, id, &res);
    char *real_work = realpath(work, NULL);
    char *said = bt_xasprintf("removed pi session file %s/2026-11-29T12-00-00-000Z_baton-1.jsonl",
                              real_work);
    assert_has(res.out.data, said);
    assert_false(file_exists(mine));
    bt_test_result_release(&res);

    /* a directory of pi's that is a link leading back inside is fine */
    char *back = bt_xasprintf("%s/--back--", root);
    assert_int_equal(symlink(work, back), 0);
    char *via = bt_xasprintf("%s/--back--/y.jsonl", root), *y = bt_xasprintf("%s/y.jsonl", work);
    write_file(y, "{}\n");
    planted(c, "pi", "sess", via, id);
    rm_ok(c, id, &res);
    assert_has(res.out.data, "removed pi session file");
    assert_false(file_exists(y));
    bt_test_result_release(&res);

    free(y);
    free(via);
    free(back);
    free(said);
    free(real_work);
    free(mine);
    free(x);
    free(linked);
    free(link);
    free(precious);
    free(work);
    free(outside);
    free(root);
}

/* codex: only rollout files inside $CODEX_HOME go; a rollout that is a
 * link, a linked date directory or a linked archive leading outside are
 * kept, and a path stored for a codex conversation is never codex's. */
static void test_rm_codex_only_inside(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    char id[BT_ID_SIZE];
    char *day = path_in(c, "codex/sessions/2026/11/29"), *out1 = path_in(c, "out1"),
         *out2 = path_in(c, "out2/01"), *out3 = path_in(c, "out3");
    make_dirs(day);
    make_dirs(out1);
    make_dirs(out2);
    make_dirs(out3);
    const char *name = "rollout-2026-11-29T12-55-33-" THREAD ".jsonl";
    char *mine = bt_xasprintf("%s/%s", day, name);
    char *targets[] = {bt_xasprintf("%s/precious.jsonl", out1), bt_xasprintf("%s/%s", out2, name),
                       bt_xasprintf("%s/%s", out3, name)};
    for (size_t i = 0; i < BT_ARRAY_SIZE(targets); i++)
        write_file(targets[i], "the user's\n");
    /* a rollout that is a link; a date directory that is one; the archive */
    char *link = bt_xasprintf("%s/rollout-2026-11-29T13-00-00-" THREAD ".jsonl", day);
    char *month = path_in(c, "codex/sessions/2026/12"),
         *archive = path_in(c, "codex/archived_sessions");
    char *out2dir = path_in(c, "out2");
    assert_int_equal(symlink(targets[0], link), 0);
    assert_int_equal(symlink(out2dir, month), 0);
    assert_int_equal(symlink(out3, archive), 0);
    write_file(mine, "{}\n");
    /* a date directory linked to another directory inside CODEX_HOME:
     * never descended, so a rollout-named file there is never found */
    char *other = path_in(c, "codex/notsessions/12/01"), *year = path_in(c, "codex/sessions/2025");
    char *notsessions = path_in(c, "codex/notsessions");
    make_dirs(other);
    char *elsewhere = bt_xasprintf("%s/rollout-keep-" THREAD ".jsonl", other);
    write_file(elsewhere, "the user's\n");
    assert_int_equal(symlink(notsessions, year), 0);

    planted(c, "codex", THREAD, targets[0], id); /* a path codex never names */
    rm_ok(c, id, &res);
    assert_has(res.out.data, "removed codex session file");
    assert_has(res.out.data, name);
    assert_false(file_exists(mine));
    assert_has(res.out.data, "symbolic link");
    assert_has(res.out.data, "is not inside");
    for (size_t i = 0; i < BT_ARRAY_SIZE(targets); i++) {
        char *text = bt_test_slurp(targets[i], NULL);
        assert_non_null(text);
        assert_string_equal(text, "the user's\n");
        free(text);
    }
    assert_true(file_exists(link));
    assert_true(file_exists(elsewhere));
    assert_null(strstr(res.out.data, "notsessions"));
    free(elsewhere);
    free(notsessions);
    free(year);
    free(other);
    /* the kept ones are named: the link and the archive that leads
     * outside (a linked date directory is not descended at all) */
    size_t kept = 0;
    for (const char *p = res.out.data; (p = strstr(p, "kept the codex session file")); p++)
        kept++;
    assert_int_equal(kept, 2);
    assert_null(strstr(res.out.data, "out2"));
    bt_test_result_release(&res);
    for (size_t i = 0; i < BT_ARRAY_SIZE(targets); i++)
        free(targets[i]);
    free(out2dir);
    free(archive);
    free(month);
    free(link);
    free(mine);
    free(out3);
    free(out2);
    free(out1);
    free(day);
}

/* pi: the session file of an active conversation goes; a transferred
 * one's stays (pi's own UI owns it), as do a file that is not pi's kind
 * and a link; one already gone is not an error. */
static void test_rm_pi_session(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    char id[BT_ID_SIZE];
    char *sessions = path_in(c, "pi/sessions/--work--");
    make_dirs(sessions);
    char *file = bt_xasprintf("%s/2026-11-29T12-00-00-000Z_baton-1.jsonl", sessions);
    write_file(file, "{\"type\":\"session\"}\n");
    planted(c, "pi", "sess-1", file, id);
    rm_ok(c, id, &res);
    assert_false(file_exists(file));
    assert_has(res.out.data, "removed pi session file");
    assert_has(res.out.data, "2026-11-29T12-00-00-000Z_baton-1.jsonl");
    bt_test_result_release(&res);

    write_file(file, "{\"type\":\"session\"}\n");
    planted_as(c, "pi", "sess-2", file, 1, id);
    rm_ok(c, id, &res);
    assert_true(file_exists(file));
    assert_has(res.out.data, "kept the pi session");
    assert_has(res.out.data, "handed to pi's own interface");
    bt_test_result_release(&res);

    char *other = bt_xasprintf("%s/notes.txt", sessions);
    write_file(other, "keep me\n");
    planted(c, "pi", "sess-3", other, id);
    rm_ok(c, id, &res);
    assert_true(file_exists(other));
    assert_has(res.out.data, "does not name a pi session file");
    bt_test_result_release(&res);
    char *link = bt_xasprintf("%s/link.jsonl", sessions);
    assert_int_equal(symlink(file, link), 0);
    planted(c, "pi", "sess-4", link, id);
    rm_ok(c, id, &res);
    assert_true(file_exists(link));
    assert_true(file_exists(file));
    bt_test_result_release(&res);

    char *gone = bt_xasprintf("%s/gone.jsonl", sessions);
    planted(c, "pi", "sess-5", gone, id);
    rm_ok(c, id, &res);
    assert_has(res.out.data, "no pi session file found");
    bt_test_result_release(&res);
    free(gone);
    free(link);
    free(other);
    free(file);
    free(sessions);
}

/* claude: the transcript goes only when it is this session's: a stored
 * path naming another session's file (or a link, or a file outside
 * claude's projects directory) is kept. */
static void test_rm_claude_only_its_transcript(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    char id[BT_ID_SIZE];
    static const char mine_id[] = "0b7e6b5e-4a1c-4d2e-9f00-1234567890ab";
    static const char other_id[] = "11111111-2222-4333-8444-555555555555";
    char *project = path_in(c, "claude/projects/-w");
    make_dirs(project);
    char *mine = bt_xasprintf("%s/%s.jsonl", project, mine_id);
    char *other = bt_xasprintf("%s/%s.jsonl", project, other_id);
    write_file(mine, "{}\n");
    write_file(other, "another conversation's\n");
    planted(c, "claude", mine_id, other, id);
    rm_ok(c, id, &res);
    assert_true(file_exists(other));
    assert_true(file_exists(mine));
    assert_has(res.out.data, "kept the claude session");
    assert_has(res.out.data, "transcript of session");
    bt_test_result_release(&res);

    char *link = bt_xasprintf("%s/%s.jsonl", project, "22222222-2222-4333-8444-555555555555");
    assert_int_equal(symlink(other, link), 0);
    planted(c, "claude", "22222222-2222-4333-8444-555555555555", link, id);
    rm_ok(c, id, &res);
    assert_true(file_exists(other));
    assert_has(res.out.data, "symbolic link");
    bt_test_result_release(&res);

    planted(c, "claude", mine_id, mine, id);
    rm_ok(c, id, &res);
    assert_false(file_exists(mine));
    assert_true(file_exists(other));
    assert_has(res.out.data, "removed claude session file");
    bt_test_result_release(&res);
    free(link);
    free(other);
    free(mine);
    free(project);
}

/* codex: every rollout of the thread goes, dated or archived, no other
 * thread's; a transferred conversation's stay; an id that could walk out
 * of the sessions directory touches nothing. */
static void test_rm_codex_session(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    char id[BT_ID_SIZE];
    static const char other_thread[] = "01a2275d-e218-7842-ac7b-e31014b1afe0";
    char *day = path_in(c, "codex/sessions/2026/11/29");
    char *archived = path_in(c, "codex/archived_sessions");
    make_dirs(day);
    make_dirs(archived);
    char *mine = bt_xasprintf("%s/rollout-2026-11-29T12-55-33-%s.jsonl", day, THREAD);
    char *old = bt_xasprintf("%s/rollout-2026-11-28T09-00-00-%s.jsonl", archived, THREAD);
    char *theirs = bt_xasprintf("%s/rollout-2026-11-29T12-53-13-%s.jsonl", day, other_thread);
    write_file(mine, "{}\n");
    write_file(old, "{}\n");
    write_file(theirs, "{}\n");

    planted(c, "codex", THREAD, NULL, id);
    rm_ok(c, id, &res);
    assert_false(file_exists(mine));
    assert_false(file_exists(old));
    assert_true(file_exists(theirs));
    assert_has(res.out.data, strrchr(mine, '/'));
    assert_has(res.out.data, strrchr(old, '/'));
    bt_test_result_release(&res);

    planted_as(c, "codex", other_thread, NULL, 1, id);
    rm_ok(c, id, &res);
    assert_true(file_exists(theirs));
    bt_test_result_release(&res);

    static const char *const bad[] = {"../../x", "..", "-rf", "a/b", "*"};
    for (size_t i = 0; i < BT_ARRAY_SIZE(bad); i++) {
        planted(c, "codex", bad[i], NULL, id);
        rm_ok(c, id, &res);
        assert_has(res.out.data, "kept the codex session");
        bt_test_result_release(&res);
    }
    assert_true(file_exists(theirs));
    free(theirs);
    free(old);
    free(mine);
    free(archived);
    free(day);
}

/* claude's `--resume` takes a word that is not a UUID as a session title
 * (another conversation's, maybe): a stored id that is no UUID never
 * reaches claude. */
static void test_claude_resumes_only_uuids(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    char id[BT_ID_SIZE];
    char *argv_file = path_in(c, "claude-argv");
    char *kv = bt_xasprintf("FAKE_CODER_ARGV=%s", argv_file);
    setenv_kv(c, kv);
    setenv_kv(c, "BATON_CLAUDE_BIN=" FAKE);
    planted(c, "claude", "notes", NULL, id);
    baton(c, &res, NULL, 0, "send", "--timeout", "20", id, "hello", END);
    assert_int_equal(res.exit_code, 1);
    assert_has(res.err.data, "not one claude can take");
    char *text = bt_test_slurp(argv_file, NULL);
    if (text && strstr(text, "--resume"))
        fail_msg("claude was started to resume a session: %s", text);
    free(text);
    bt_test_result_release(&res);
    free(kv);
    free(argv_file);
}

/* ---- the coders' directories from the environment ------------------- */

/* The fake coder never ran a turn (a `--version` probe may have run). */
static void assert_no_turn(const char *argv_file)
{
    char *text = bt_test_slurp(argv_file, NULL);
    if (text && strstr(text, "rpc"))
        fail_msg("pi was started for a turn: %s", text);
    free(text);
    unlink(argv_file);
}

/* Neither the coder's variable nor HOME, or a relative one: rm keeps the
 * session and says what is missing; `run -c pi` fails saying it, before
 * pi starts. */
static void test_session_dirs_from_env(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    char id[BT_ID_SIZE];
    char *file = path_in(c, "pi/sessions/--w--/a.jsonl"), *dir = path_in(c, "pi/sessions/--w--");
    make_dirs(dir);
    write_file(file, "{}\n");
    static const char *const no_pi[] = {"HOME", "PI_CODING_AGENT_DIR",
                                        "PI_CODING_AGENT_SESSION_DIR", NULL};
    static const char *const no_codex[] = {"HOME", "CODEX_HOME", NULL};

    planted(c, "pi", "sess", file, id);
    const char *rm[] = {"rm", id, NULL};
    baton_without(c, &res, no_pi, rm);
    assert_int_equal(res.exit_code, 0);
    assert_has(res.out.data, "neither PI_CODING_AGENT_DIR nor HOME is set");
    assert_true(file_exists(file));
    bt_test_result_release(&res);

    setenv_kv(c, "PI_CODING_AGENT_DIR=pi");
    planted(c, "pi", "sess", file, id);
    baton(c, &res, NULL, 0, "rm", id, END);
    assert_int_equal(res.exit_code, 0);
    assert_has(res.out.data, "PI_CODING_AGENT_DIR is not an absolute path");
    assert_true(file_exists(file));
    bt_test_result_release(&res);

    /* ~/ as pi reads it: from HOME */
    setenv_kv(c, "PI_CODING_AGENT_DIR=~/pi");
    planted(c, "pi", "sess", file, id);
    rm_ok(c, id, &res);
    assert_has(res.out.data, "removed pi session file");
    assert_false(file_exists(file));
    bt_test_result_release(&res);

    planted(c, "codex", THREAD, NULL, id);
    baton_without(c, &res, no_codex, rm);
    assert_int_equal(res.exit_code, 0);
    assert_has(res.out.data, "neither CODEX_HOME nor HOME is set");
    bt_test_result_release(&res);
    setenv_kv(c, "CODEX_HOME=codex");
    planted(c, "codex", THREAD, NULL, id);
    baton(c, &res, NULL, 0, "rm", id, END);
    assert_has(res.out.data, "CODEX_HOME is not an absolute path");
    bt_test_result_release(&res);

    /* a pi turn cannot choose its session file: said, nothing started */
    setenv_kv(c, "BATON_PI_BIN=" FAKE);
    char *started = path_in(c, "started");
    char *kv = bt_xasprintf("FAKE_CODER_ARGV=%s", started);
    setenv_kv(c, kv);
    const char *run[] = {"run", "-c", "pi", "hello", NULL};
    baton_without(c, &res, no_pi, run);
    assert_int_equal(res.exit_code, 1);
    assert_has(res.err.data,
               "cannot choose a session file for pi: neither PI_CODING_AGENT_DIR nor HOME is set");
    assert_no_turn(started);
    bt_test_result_release(&res);
    setenv_kv(c, "PI_CODING_AGENT_DIR=relative/pi");
    baton(c, &res, NULL, 0, "run", "-c", "pi", "hello", END);
    assert_int_equal(res.exit_code, 1);
    assert_has(res.err.data, "PI_CODING_AGENT_DIR is not an absolute path");
    assert_no_turn(started);
    bt_test_result_release(&res);
    free(kv);
    free(started);
    free(dir);
    free(file);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, rm_setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_rm_asks_on_a_terminal),
        T(test_rm_without_asking),
        T(test_rm_pi_only_inside),
        T(test_rm_codex_only_inside),
        T(test_rm_pi_session),
        T(test_rm_codex_session),
        T(test_rm_claude_only_its_transcript),
        T(test_claude_resumes_only_uuids),
        T(test_session_dirs_from_env),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
