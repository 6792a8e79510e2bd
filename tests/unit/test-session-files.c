/* SPDX-License-Identifier: MIT */
/*
 * unit tests of the proof `baton rm` asks before it removes a coder's file
 * or directory (bt_runner_session_file, runners/runner.h), of the coders'
 * directories from the environment (bt_runner_home_dir), and of what the
 * ACP coders name for rm: gemini's and copilot's candidates and
 * opencode's own command (runners/runner-<coder>.c).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "coder.h"
#include "unit-fs.h"
#include "util.h"

struct fixture {
    char dir[64];
    char *real; /* realpath of dir */
};

static int setup(void **state)
{
    struct fixture *f = bt_xcalloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "%s", "/tmp/bt-session-XXXXXX");
    if (!mkdtemp(f->dir))
        return -1;
    f->real = realpath(f->dir, NULL);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    bt_unit_rm_rf(f->dir);
    free(f->real);
    free(f);
    return 0;
}

/* f->real/rel (caller frees). */
static char *at(const struct fixture *f, const char *rel)
{
    return bt_xasprintf("%s/%s", f->real, rel);
}

/* mkdir -p f->real/rel */
static void dirs(const struct fixture *f, const char *rel)
{
    char *p = at(f, rel);
    for (char *s = p + 1; *s; s++) {
        if (*s == '/') {
            *s = '\0';
            mkdir(p, 0700);
            *s = '/';
        }
    }
    mkdir(p, 0700);
    free(p);
}

static void file(const struct fixture *f, const char *rel, const char *text)
{
    char *p = at(f, rel);
    FILE *fp = fopen(p, "w");
    assert_non_null(fp);
    fputs(text, fp);
    assert_int_equal(fclose(fp), 0);
    free(p);
}

static int there(const struct fixture *f, const char *rel)
{
    char *p = at(f, rel);
    struct stat st;
    int rc = lstat(p, &st) == 0;
    free(p);
    return rc;
}

/* bt_runner_session_file(root, path) of f's paths; *why in why (caller
 * frees, may be NULL). */
static int check(const struct fixture *f, const char *root, const char *path, int remove,
                 char **resolved, char **why)
{
    char *r = at(f, root), *p = path[0] == '/' ? bt_xstrdup(path) : at(f, path);
    int rc = bt_runner_session_file(r, p, remove, resolved, why);
    free(p);
    free(r);
    return rc;
}

/* A path that names a directory (a trailing '/') must be one; one that
 * names a file must be a regular file; '.' and '..' components, a link in
 * the last place and a parent leading outside are refused, whatever the
 * shape. */
static void test_shapes_and_refusals(void **state)
{
    struct fixture *f = *state;
    dirs(f, "root/s/dir/sub");
    dirs(f, "out/dir");
    file(f, "root/s/file", "x\n");
    file(f, "out/dir/precious", "the user's\n");
    char *out = at(f, "out/dir"), *lnk = at(f, "root/s/link"), *lnkdir = at(f, "root/s/away");
    assert_int_equal(symlink(out, lnk), 0);
    char *outs = at(f, "out");
    assert_int_equal(symlink(outs, lnkdir), 0);
    static const struct {
        const char *path;
        int rc;
        const char *why;
    } cases[] = {
        {"root/s/dir/", 0, NULL},
        {"root/s/file", 0, NULL},
        {"root/s/file/", -EPERM, "it is not a directory"},
        {"root/s/dir", -EPERM, "it is not a regular file"},
        {"root/s/link/", -EPERM, "it is a symbolic link, not a session directory"},
        {"root/s/link", -EPERM, "it is a symbolic link, not a session file"},
        {"root/s/away/dir/", -EPERM, "it is not inside"},
        {"root/s/../s/dir/", -EPERM, "'.' or '..' component"},
        {"root/s/./dir/", -EPERM, "'.' or '..' component"},
        {"root/s/dir/sub/../", -EPERM, "'.' or '..' component"},
        {"root/s//dir/", -EPERM, "'.' or '..' component"},
        {"root/s/dir//", -EPERM, "not an absolute path of a file"},
        {"root/s/none/", -ENOENT, NULL},
        {"root/none/x/", -ENOENT, NULL},
        {"out/dir/", -EPERM, "it is not inside"},
    };
    for (size_t i = 0; i < BT_ARRAY_SIZE(cases); i++) {
        char *resolved, *why;
        int rc = check(f, "root", cases[i].path, 0, &resolved, &why);
        if (rc != cases[i].rc)
            fail_msg("%s: %d, not %d (%s)", cases[i].path, rc, cases[i].rc, why ? why : "");
        if (cases[i].why && (!why || !strstr(why, cases[i].why)))
            fail_msg("%s: '%s', not '%s'", cases[i].path, why ? why : "", cases[i].why);
        free(resolved);
        free(why);
    }
    char *resolved, *why;
    assert_int_equal(bt_runner_session_file("/", "/", 0, &resolved, &why), -EPERM);
    free(why);
    assert_int_equal(check(f, "root", "root/s/dir/", 0, &resolved, &why), 0);
    char *want = at(f, "root/s/dir/");
    assert_string_equal(resolved, want); /* the '/' kept */
    free(want);
    free(resolved);
    assert_true(there(f, "root/s/dir/sub"));
    assert_true(there(f, "out/dir/precious"));
    free(outs);
    free(lnkdir);
    free(lnk);
    free(out);
}

/* Removing a directory: everything inside goes as names (a link as a
 * link, a hard link as one name of the file), nothing it leads to. */
static void test_remove_directory(void **state)
{
    struct fixture *f = *state;
    dirs(f, "root/s/a/b/c");
    dirs(f, "out");
    file(f, "root/s/a/b/c/leaf", "leaf\n");
    file(f, "root/s/top", "top\n");
    file(f, "out/precious", "the user's\n");
    char *out = at(f, "out"), *precious = at(f, "out/precious");
    char *l1 = at(f, "root/s/a/to-out"), *l2 = at(f, "root/s/a/b/to-file");
    char *hard = at(f, "root/s/hard");
    assert_int_equal(symlink(out, l1), 0);
    assert_int_equal(symlink(precious, l2), 0);
    assert_int_equal(link(precious, hard), 0);
    char *resolved, *why;
    assert_int_equal(check(f, "root", "root/s/", 1, &resolved, &why), 0);
    assert_null(why);
    assert_false(there(f, "root/s"));
    assert_true(there(f, "root"));
    assert_true(there(f, "out/precious"));
    char *text = bt_read_file(precious, NULL);
    assert_string_equal(text, "the user's\n");
    free(text);
    free(resolved);
    /* gone now: not an error of the check */
    assert_int_equal(check(f, "root", "root/s/", 1, &resolved, &why), -ENOENT);
    free(hard);
    free(l2);
    free(l1);
    free(precious);
    free(out);
}

/* One level more than BT_RUNNER_TREE_DEPTH: refused before anything
 * goes. */
static void test_too_deep(void **state)
{
    struct fixture *f = *state;
    struct bt_buf rel = BT_BUF_INIT;
    bt_buf_adds(&rel, "root/s");
    for (int i = 0; i <= BT_RUNNER_TREE_DEPTH; i++)
        bt_buf_adds(&rel, "/d");
    dirs(f, rel.data);
    file(f, "root/s/first", "x\n");
    char *resolved, *why;
    assert_int_equal(check(f, "root", "root/s/", 1, &resolved, &why), -EPERM);
    assert_non_null(strstr(why, "nested more than 64 directories deep"));
    assert_true(there(f, "root/s/first"));
    assert_true(there(f, rel.data));
    free(why);
    bt_buf_release(&rel);
    /* at the bound exactly: fine */
    bt_unit_rm_rf(f->real);
    mkdir(f->real, 0700);
    bt_buf_adds(&rel, "root/s");
    for (int i = 0; i < BT_RUNNER_TREE_DEPTH; i++)
        bt_buf_adds(&rel, "/d");
    dirs(f, rel.data);
    assert_int_equal(check(f, "root", "root/s/", 1, &resolved, &why), 0);
    assert_false(there(f, "root/s"));
    free(resolved);
    bt_buf_release(&rel);
}

/* $VAR + tail, else $HOME + tail; empty counts as unset; relative and ~/
 * refused. */
static void test_home_dir(void **state)
{
    (void)state;
    char *dir, *why;
    const char *home = getenv("HOME");
    char *saved = home ? bt_xstrdup(home) : NULL;
    setenv("BT_TEST_HOME_VAR", "/x/y", 1);
    assert_int_equal(bt_runner_home_dir("BT_TEST_HOME_VAR", "/t", "/.h", &dir, &why), 0);
    assert_string_equal(dir, "/x/y/t");
    free(dir);
    setenv("BT_TEST_HOME_VAR", "", 1);
    setenv("HOME", "/home/u", 1);
    assert_int_equal(bt_runner_home_dir("BT_TEST_HOME_VAR", "/t", "/.h", &dir, &why), 0);
    assert_string_equal(dir, "/home/u/.h");
    free(dir);
    static const char *const bad[] = {"rel", "~/x", "./x"};
    for (size_t i = 0; i < BT_ARRAY_SIZE(bad); i++) {
        setenv("BT_TEST_HOME_VAR", bad[i], 1);
        assert_int_equal(bt_runner_home_dir("BT_TEST_HOME_VAR", "", "", &dir, &why), -EINVAL);
        assert_null(dir);
        assert_string_equal(why, "BT_TEST_HOME_VAR is not an absolute path");
        free(why);
    }
    unsetenv("BT_TEST_HOME_VAR");
    setenv("HOME", "rel", 1);
    assert_int_equal(bt_runner_home_dir("BT_TEST_HOME_VAR", "", "", &dir, &why), -EINVAL);
    assert_string_equal(why, "HOME is not an absolute path");
    free(why);
    unsetenv("HOME");
    assert_int_equal(bt_runner_home_dir("BT_TEST_HOME_VAR", "", "", &dir, &why), -ENOENT);
    assert_string_equal(why, "neither BT_TEST_HOME_VAR nor HOME is set");
    free(why);
    if (saved)
        setenv("HOME", saved, 1);
    free(saved);
}

static const struct bt_runner_ops *runner(const char *coder)
{
    const struct bt_coder *c = bt_coder_find(coder);
    assert_non_null(c);
    return c->runner;
}

/* opencode: `session delete ID` for its own ids only; its end read as
 * deleted, already gone, or failed. */
static void test_opencode_command(void **state)
{
    (void)state;
    const struct bt_runner_ops *ops = runner("opencode");
    assert_non_null(ops->delete_session_argv);
    assert_null(ops->session_root); /* one way or the other, not both */
    struct bt_runner_config cfg = {.native_session_id = "ses_dca8e5215ffexw7mD4DSwpRuO0"};
    struct bt_strv argv;
    char *why;
    bt_strv_init(&argv);
    assert_int_equal(ops->delete_session_argv(&cfg, &argv, &why), 0);
    assert_int_equal(argv.n, 3);
    assert_string_equal(argv.v[0], "session");
    assert_string_equal(argv.v[1], "delete");
    assert_string_equal(argv.v[2], "ses_dca8e5215ffexw7mD4DSwpRuO0");
    bt_strv_release(&argv);
    static const char *const bad[] = {"-rf",     "--help",   "ses_",   "ses_a-b", "ses_a b",
                                      "x ses_a", "ses_../x", "sess_a", ""};
    for (size_t i = 0; i < BT_ARRAY_SIZE(bad); i++) {
        struct bt_runner_config b = {.native_session_id = bad[i]};
        bt_strv_init(&argv);
        assert_int_equal(ops->delete_session_argv(&b, &argv, &why), -EINVAL);
        assert_int_equal(argv.n, 0);
        assert_non_null(why);
        free(why);
        bt_strv_release(&argv);
    }
    struct bt_runner_config none = {0};
    bt_strv_init(&argv);
    assert_int_equal(ops->delete_session_argv(&none, &argv, &why), -ENOENT);
    bt_strv_release(&argv);
    assert_int_equal(ops->delete_session_status(0, "\x1b[92mSession ses_x deleted\x1b[0m\n"), 0);
    assert_int_equal(
        ops->delete_session_status(1, "\x1b[91m\x1b[1mError: \x1b[0mSession not found: ses_x\n"),
        -ENOENT);
    assert_true(ops->delete_session_status(1, "Error: database is locked\n") != 0);
    assert_true(ops->delete_session_status(1, "Error: database is locked\n") != -ENOENT);
    assert_true(ops->delete_session_status(137, "Session not found") != -ENOENT);
}

/* copilot: its session directory by id; gemini: the chat files that hold
 * the id and what is named by it; neither for an id that is no UUID. */
static void test_acp_candidates(void **state)
{
    struct fixture *f = *state;
    static const char id[] = "aa8442fd-9d0a-49d2-bef2-7bde297e6bd0";
    dirs(f, "cp/session-state/aa8442fd-9d0a-49d2-bef2-7bde297e6bd0");
    dirs(f, "gm/proj/chats");
    dirs(f, "gm/proj/aa8442fd-9d0a-49d2-bef2-7bde297e6bd0");
    file(f, "gm/proj/chats/session-2026-12-02T06-27-aa8442fd.jsonl",
         "{\"sessionId\":\"aa8442fd-9d0a-49d2-bef2-7bde297e6bd0\",\"kind\":\"main\"}\n"
         "{\"$set\":{\"lastUpdated\":\"x\"}}\n");
    file(f, "gm/proj/chats/session-2026-12-02T06-28-aa8442fd.jsonl",
         "{\"sessionId\":\"aa8442fd-0000-4000-8000-000000000000\",\"kind\":\"main\"}\n");
    file(f, "gm/proj/chats/session-2026-12-02T06-29-aa8442fd.jsonl", "not json\n");
    file(f, "gm/proj/chats/session-2026-12-02T06-30-aa8442fd.jsonl", "");
    struct bt_runner_config cfg = {.native_session_id = id};
    struct bt_strv files;
    char *why, *root = at(f, "cp");
    bt_strv_init(&files);
    assert_int_equal(runner("copilot")->session_files(&cfg, root, &files, &why), 0);
    assert_int_equal(files.n, 1);
    char *want = at(f, "cp/session-state/aa8442fd-9d0a-49d2-bef2-7bde297e6bd0/");
    assert_string_equal(files.v[0], want);
    free(want);
    bt_strv_release(&files);
    free(root);

    root = at(f, "gm");
    bt_strv_init(&files);
    assert_int_equal(runner("gemini")->session_files(&cfg, root, &files, &why), 0);
    assert_int_equal(files.n, 2);
    char *chat = at(f, "gm/proj/chats/session-2026-12-02T06-27-aa8442fd.jsonl");
    char *dir = at(f, "gm/proj/aa8442fd-9d0a-49d2-bef2-7bde297e6bd0/");
    assert_string_equal(files.v[0], chat);
    assert_string_equal(files.v[1], dir);
    free(dir);
    free(chat);
    bt_strv_release(&files);

    static const char *const bad[] = {"../x", "aa8442fd", "aa8442fd-9d0a-49d2-bef2-7bde297e6bd0/",
                                      "-rf"};
    for (size_t i = 0; i < BT_ARRAY_SIZE(bad); i++) {
        struct bt_runner_config b = {.native_session_id = bad[i]};
        static const char *const coders[] = {"gemini", "copilot"};
        for (size_t k = 0; k < BT_ARRAY_SIZE(coders); k++) {
            bt_strv_init(&files);
            assert_int_equal(runner(coders[k])->session_files(&b, root, &files, &why), -EINVAL);
            assert_int_equal(files.n, 0);
            free(why);
            bt_strv_release(&files);
        }
    }
    free(root);
}

int main(void)
{
#define T(t) cmocka_unit_test_setup_teardown(t, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_shapes_and_refusals), T(test_remove_directory), T(test_too_deep), T(test_home_dir),
        T(test_opencode_command),    T(test_acp_candidates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
