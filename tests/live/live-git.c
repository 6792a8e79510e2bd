/* SPDX-License-Identifier: MIT */
/*
 * live-git: the worktree acceptance (live.h, bt_live_worktree_scenario)
 * with a real coder that writes a file through its shell tool: the
 * turn's changes name it with its line count, the user's checkout stays
 * as it was, a fan-out of two makes two worktrees with two summaries, and
 * keep brings one result into the base branch.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "live.h"

#define GIT "git -c user.name=t -c user.email=t@example.org -c init.defaultBranch=main"
#define WRITE_FILE "[[shell:printf 'one\\ntwo\\n' > made.txt]]"

/* sh -c cmd in dir, asserting exit 0; its stdout (owned). */
static char *sh_in(const char *dir, const char *cmd)
{
    const char *argv[] = {"/bin/sh", "-c", cmd, NULL};
    struct bt_test_run r = {.argv = argv, .cwd = dir};
    struct bt_test_result res;
    assert_int_equal(bt_test_exec(&r, &res), 0);
    if (res.exit_code != 0)
        fail_msg("%s: exit %d: %s", cmd, res.exit_code, res.err.data);
    char *out = bt_xstrdup(res.out.data ? res.out.data : "");
    bt_test_result_release(&res);
    return out;
}

/* baton args... opts... rest... in dir: the result (release it). */
static void baton_in(const char *dir, const char *const *args, const char *const *opts,
                     const char *const *rest, struct bt_test_result *res)
{
    const char *argv[15];
    size_t k = 0;
    for (; args && *args && k < 14; args++)
        argv[k++] = *args;
    for (; opts && *opts && k < 14; opts++)
        argv[k++] = *opts;
    for (; rest && *rest && k < 14; rest++)
        argv[k++] = *rest;
    argv[k] = NULL;
    bt_live_baton(dir, argv, res, 0);
}

/* The changes of every turn.completed of a --json stream, as
 * "conversation path status +added -removed" lines (owned). */
static char *changes_of(const char *out, char *ids[4], size_t *n)
{
    cJSON **lines = NULL;
    size_t k = bt_test_json_lines(out, &lines);
    struct bt_buf b = BT_BUF_INIT;
    *n = 0;
    for (size_t i = 0; i < k; i++) {
        if (strcmp(bt_live_type(lines[i]), "turn.completed") != 0)
            continue;
        if (*n < 4)
            ids[(*n)++] = bt_xstrdup(bt_test_jstr(lines[i], "conversation"));
        const cJSON *files = cJSON_GetObjectItem(cJSON_GetObjectItem(lines[i], "changes"), "files");
        const cJSON *f;
        cJSON_ArrayForEach(f, files)
        {
            bt_buf_addf(&b, "%s %s +%d -%d\n", bt_test_jstr(f, "path"), bt_test_jstr(f, "status"),
                        cJSON_GetObjectItem(f, "added")->valueint,
                        cJSON_GetObjectItem(f, "removed")->valueint);
        }
        if (!files)
            bt_buf_adds(&b, "no changes\n");
    }
    bt_test_lines_free(lines, k);
    return bt_buf_detach(&b, NULL);
}

void bt_live_worktree_scenario(const char *const *run_opts, const char *const *fan_opts)
{
    char *repo = bt_xasprintf("%s/repo", bt_live.dir);
    char *init =
        bt_xasprintf("mkdir -p '%s' && cd '%s' && " GIT " init -q && echo a > a.txt && " GIT
                     " add a.txt && " GIT " commit -qm first",
                     repo, repo);
    free(sh_in(bt_live.dir, init));
    free(init);

    /* one coder in its own worktree: the file is there, not in the checkout */
    static const char *const run[] = {"run", "--worktree", "--json", "--approval", "auto", NULL};
    static const char *const prompt[] = {WRITE_FILE, NULL};
    struct bt_test_result res;
    baton_in(repo, run, run_opts, prompt, &res);
    assert_int_equal(res.exit_code, 0);
    char *ids[4] = {NULL};
    size_t n;
    char *got = changes_of(res.out.data, ids, &n);
    assert_int_equal(n, 1);
    assert_string_equal(got, "made.txt added +2 -0\n");
    free(got);
    free(ids[0]);
    ids[0] = NULL;
    bt_test_result_release(&res);
    char *status = sh_in(repo, "git status --porcelain && git worktree list | wc -l");
    assert_string_equal(status, "2\n");
    free(status);

    /* two at once: two worktrees, two summaries; keep one, drop the other */
    static const char *const fan[] = {"run", "--worktree", "--json", "--approval", "auto", NULL};
    baton_in(repo, fan, fan_opts, prompt, &res);
    assert_int_equal(res.exit_code, 0);
    got = changes_of(res.out.data, ids, &n);
    assert_int_equal(n, 2);
    assert_non_null(ids[0]);
    assert_non_null(ids[1]);
    assert_string_equal(got, "made.txt added +2 -0\nmade.txt added +2 -0\n");
    assert_string_not_equal(ids[0], ids[1]);
    bt_test_result_release(&res);
    const char *keep[] = {"keep", "--prune", ids[0], NULL};
    bt_live_baton(repo, keep, &res, 0);
    assert_int_equal(res.exit_code, 0);
    bt_test_result_release(&res);
    /* the file in main and its checkout; the group's two worktrees gone,
     * the first conversation's left */
    char *kept = sh_in(repo, "git show HEAD:made.txt && cat made.txt && git status --porcelain && "
                             "git worktree list | wc -l");
    assert_string_equal(kept, "one\ntwo\none\ntwo\n2\n");
    free(kept);
    free(got);
    free(ids[0]);
    free(ids[1]);
    free(repo);
}
