/* SPDX-License-Identifier: MIT */
/*
 * integration-keep: `baton keep` through the baton binary: a worktree
 * conversation's work brought into the branch it started from (src/repo.h,
 * bt_repo_keep) as a fast-forward or a merge commit, the user's checkout
 * following without losing the user's staged or untracked files; a
 * conflict, or the user's edits in the way, leave the base as it was;
 * --prune; the refusals.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "gitfix.h"
#include "harness.h"

/* A worktree conversation in p whose coder runs `edit` (a shell script in
 * its directory); its id (owned). */
static char *worked(struct ctx *c, const char *edit)
{
    edits(c, edit);
    char *p = path_in(c, "p");
    struct bt_test_result res;
    baton(c, &res, NULL, 0, "run", "--worktree", "--json", "-C", p, "Say hello banana", END);
    assert_int_equal(res.exit_code, 0);
    char *conv = conversation_of(res.out.data);
    bt_test_result_release(&res);
    free(p);
    return conv;
}

/* `baton keep ARGS... CONV`: its result (release it). */
static void keep(struct ctx *c, struct bt_test_result *res, const char *opt, const char *conv)
{
    if (opt)
        baton(c, res, NULL, 0, "keep", opt, conv, END);
    else
        baton(c, res, NULL, 0, "keep", conv, END);
}

static void test_fast_forward(void **state)
{
    struct ctx *c = *state;
    repo_and_coder(c); /* s.txt staged in the user's checkout */
    free(sh(c, "cd p && echo mine > untracked.txt"));
    char *conv = worked(c, "printf 'three\\n' >> a.txt; echo n > new.txt; rm gone.txt; "
                           "touch x.log\n");
    struct bt_test_result res;
    keep(c, &res, "--json", conv);
    assert_int_equal(res.exit_code, 0);
    cJSON *j = cJSON_Parse(res.out.data);
    assert_non_null(j);
    assert_string_equal(bt_test_jstr(j, "how"), "fast-forward");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "committed")));
    char *want = path_in(c, "p/");
    assert_string_equal(bt_test_jstr(j, "checkout"), want);
    char *head = sh(c, "cd p && git rev-parse HEAD");
    head[strcspn(head, "\n")] = '\0';
    assert_string_equal(bt_test_jstr(j, "commit"), head);
    bt_test_result_release(&res);
    /* the files, the commit and the user's own files */
    char *got = sh(c, "cd p && cat a.txt new.txt && git show --name-status --format=%s HEAD && "
                      "git status --porcelain; test -e x.log; echo $?");
    assert_string_equal(got, "one\ntwo\nthree\nn\n"
                             "Say hello banana\n\nM\ta.txt\nD\tgone.txt\nA\tnew.txt\n"
                             "A  s.txt\n?? untracked.txt\n1\n");
    free(got);
    /* again: nothing more to bring; --prune removes worktree and branch */
    keep(c, &res, "--prune", conv);
    assert_int_equal(res.exit_code, 0);
    assert_non_null(strstr(res.out.data, "has everything of"));
    assert_non_null(strstr(res.out.data, "removed worktree"));
    bt_test_result_release(&res);
    got = sh(c, "cd p && git branch --format='%(refname:short)' && git worktree list | wc -l");
    assert_string_equal(got, "main\n1\n");
    free(got);
    free(head);
    free(want);
    cJSON_Delete(j);
    free(conv);
}

/* Two conversations from the same commit: the first fast-forwards, the
 * second is merged with a merge commit; a third that conflicts leaves
 * main as it was. */
static void test_merge_and_conflict(void **state)
{
    struct ctx *c = *state;
    repo_and_coder(c);
    char *one = worked(c, "echo 1 > one.txt; printf 'ONE\\ntwo\\n' > a.txt\n");
    char *two = worked(c, "echo 2 > two.txt\n");
    char *three = worked(c, "printf 'THREE\\ntwo\\n' > a.txt\n");
    struct bt_test_result res;
    keep(c, &res, NULL, one);
    assert_int_equal(res.exit_code, 0);
    assert_non_null(strstr(res.out.data, "fast-forwarded main to"));
    bt_test_result_release(&res);
    keep(c, &res, NULL, two);
    assert_int_equal(res.exit_code, 0);
    assert_non_null(strstr(res.out.data, "merged baton/"));
    bt_test_result_release(&res);
    char *got = sh(c, "cd p && git log --format=%P -1 | wc -w && ls one.txt two.txt");
    assert_string_equal(got, "2\none.txt\ntwo.txt\n");
    free(got);
    char *before = sh(c, "cd p && git rev-parse HEAD && git status --porcelain && cat a.txt");
    keep(c, &res, NULL, three);
    assert_int_equal(res.exit_code, 1);
    assert_non_null(strstr(res.err.data, "conflict in a.txt: nothing was merged"));
    bt_test_result_release(&res);
    char *after = sh(c, "cd p && git rev-parse HEAD && git status --porcelain && cat a.txt");
    assert_string_equal(after, before);
    /* its work is on its branch now: rm keeps it unless --force */
    baton(c, &res, NULL, 0, "rm", "-y", three, END);
    assert_int_equal(res.exit_code, 2);
    assert_non_null(strstr(res.err.data, "has 1 commit that main does not"));
    bt_test_result_release(&res);
    free(after);
    free(before);
    free(three);
    free(two);
    free(one);
}

/* The user's edit of a file the work changes: nothing written. */
static void test_user_edits_in_the_way(void **state)
{
    struct ctx *c = *state;
    repo_and_coder(c);
    char *conv = worked(c, "printf 'three\\n' >> a.txt\n");
    free(sh(c, "cd p && echo mine >> a.txt"));
    char *before = sh(c, "cd p && git rev-parse HEAD && git status --porcelain && cat a.txt");
    struct bt_test_result res;
    keep(c, &res, NULL, conv);
    assert_int_equal(res.exit_code, 1);
    assert_non_null(strstr(res.err.data, "are in the way of the files it changes (a.txt)"));
    bt_test_result_release(&res);
    char *after = sh(c, "cd p && git rev-parse HEAD && git status --porcelain && cat a.txt");
    assert_string_equal(after, before);
    /* the user commits: keep goes through as a merge */
    free(sh(c, "cd p && git reset -q && " GIT " commit -qam mine"));
    keep(c, &res, NULL, conv);
    assert_int_equal(res.exit_code, 1); /* both changed a.txt's end: a conflict */
    assert_non_null(strstr(res.err.data, "conflict in a.txt"));
    bt_test_result_release(&res);
    free(after);
    free(before);
    free(conv);
}

/* Refused before anything of main is written, whatever is in the way: a
 * staged change, an untracked file where the work adds one, another git
 * command's index.lock, a rebase in progress. */
static void test_in_the_way(void **state)
{
    struct ctx *c = *state;
    repo_and_coder(c);
    char *conv = worked(c, "printf 'three\\n' >> a.txt; echo n > new.txt; echo w > w.log; git "
                           "add -f w.log\n");
    static const struct {
        const char *make, *undo, *says;
        int code;
    } cases[] = {
        {"echo staged > a.txt && git add a.txt && git checkout -- a.txt 2>/dev/null; "
         "echo one > a.txt; printf 'one\\ntwo\\n' > a.txt",
         "git reset -q a.txt", "(a.txt)", 1},
        {"echo mine > new.txt", "rm new.txt", "(new.txt)", 1},
        {"echo mine > w.log", "rm w.log", "(w.log)", 1}, /* ignored, the user's all the same */
        {"touch .git/index.lock", "rm .git/index.lock", "index.lock exists", 1},
        {"echo x > .git/MERGE_HEAD && git rev-parse HEAD > .git/MERGE_HEAD", "rm .git/MERGE_HEAD",
         "a merge is in progress", 2},
    };
    char *before = sh(c, "cd p && git rev-parse HEAD");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *cmd = bt_xasprintf("cd p && %s", cases[i].make);
        free(sh(c, cmd));
        free(cmd);
        char *state_before = sh(c, "cd p && git status --porcelain && git diff --cached && "
                                   "cat a.txt && ls");
        struct bt_test_result res;
        keep(c, &res, NULL, conv);
        if (res.exit_code != cases[i].code || !strstr(res.err.data, cases[i].says))
            fail_msg("case %zu: exit %d: %s", i, res.exit_code, res.err.data);
        bt_test_result_release(&res);
        char *state_after = sh(c, "cd p && git status --porcelain && git diff --cached && "
                                  "cat a.txt && ls");
        assert_string_equal(state_after, state_before);
        char *head = sh(c, "cd p && git rev-parse HEAD");
        assert_string_equal(head, before);
        free(head);
        free(state_after);
        free(state_before);
        cmd = bt_xasprintf("cd p && %s", cases[i].undo);
        free(sh(c, cmd));
        free(cmd);
    }
    /* nothing left in the way: it goes through, the staged s.txt kept */
    struct bt_test_result res;
    keep(c, &res, NULL, conv);
    assert_int_equal(res.exit_code, 0);
    bt_test_result_release(&res);
    char *got = sh(c, "cd p && git diff --cached --name-only && cat new.txt");
    assert_string_equal(got, "s.txt\nn\n");
    free(got);
    free(before);
    free(conv);
}

/* The worktree's HEAD off its branch (a coder that switched): keep and rm
 * refuse rather than lose what was committed there. */
static void test_head_off_branch(void **state)
{
    struct ctx *c = *state;
    repo_and_coder(c);
    char *conv = worked(c, "git checkout -q --detach && echo d > d.txt && git add d.txt && "
                           "git -c user.name=c -c user.email=c@e commit -qm d\n");
    struct bt_test_result res;
    keep(c, &res, NULL, conv);
    assert_int_equal(res.exit_code, 2);
    assert_non_null(strstr(res.err.data, "is not on its branch"));
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "rm", "-y", conv, END);
    assert_int_equal(res.exit_code, 2);
    assert_non_null(strstr(res.err.data, "has a detached HEAD"));
    bt_test_result_release(&res);
    free(conv);
}

/* main checked out nowhere: only the branch moves. */
static void test_base_not_checked_out(void **state)
{
    struct ctx *c = *state;
    repo_and_coder(c);
    char *conv = worked(c, "echo w > w.txt\n");
    free(sh(c, "cd p && git stash -q && git checkout -q -b other"));
    struct bt_test_result res;
    keep(c, &res, NULL, conv);
    assert_int_equal(res.exit_code, 0);
    assert_non_null(strstr(res.out.data, "main is checked out nowhere"));
    bt_test_result_release(&res);
    char *got = sh(c, "cd p && git show main:w.txt; test -e w.txt; echo $?");
    assert_string_equal(got, "w\n1\n");
    free(got);
    free(conv);
}

static void test_refusals(void **state)
{
    struct ctx *c = *state;
    repo_and_coder(c);
    char *p = path_in(c, "p");
    struct bt_test_result res;
    baton(c, &res, NULL, 0, "run", "--json", "-C", p, "Say hello banana", END);
    char *plain = conversation_of(res.out.data);
    bt_test_result_release(&res);
    keep(c, &res, NULL, plain);
    assert_int_equal(res.exit_code, 2);
    assert_non_null(strstr(res.err.data, "has no worktree of its own"));
    bt_test_result_release(&res);
    keep(c, &res, NULL, "nosuchconv");
    assert_int_equal(res.exit_code, 2);
    bt_test_result_release(&res);
    char *gone = worked(c, "echo g > g.txt\n");
    char *cmd = bt_xasprintf("rm -rf home/worktrees/%.12s", gone);
    free(sh(c, cmd));
    free(cmd);
    keep(c, &res, NULL, gone);
    assert_int_equal(res.exit_code, 2);
    assert_non_null(strstr(res.err.data, "is gone"));
    bt_test_result_release(&res);
    free(gone);
    free(sh(c, "cd p && git checkout -q --detach"));
    char *detached = worked(c, "echo d > d.txt\n");
    char *head = sh(c, "cd p && git rev-parse HEAD");
    keep(c, &res, NULL, detached);
    assert_int_equal(res.exit_code, 2);
    assert_non_null(strstr(res.err.data, "detached HEAD"));
    bt_test_result_release(&res);
    char *after = sh(c, "cd p && git rev-parse HEAD");
    assert_string_equal(after, head);
    free(after);
    free(head);
    free(detached);
    free(plain);
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_fast_forward, setup, teardown),
        cmocka_unit_test_setup_teardown(test_merge_and_conflict, setup, teardown),
        cmocka_unit_test_setup_teardown(test_user_edits_in_the_way, setup, teardown),
        cmocka_unit_test_setup_teardown(test_base_not_checked_out, setup, teardown),
        cmocka_unit_test_setup_teardown(test_in_the_way, setup, teardown),
        cmocka_unit_test_setup_teardown(test_head_off_branch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
