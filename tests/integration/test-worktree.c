/* SPDX-License-Identifier: MIT */
/*
 * integration-worktree: `baton run --worktree` through the baton binary:
 * the conversation's own worktree and branch (src/repo.h), its turns run
 * there and their changes recorded there, the user's checkout untouched;
 * ls/show/handoff name it; rm removes it only when that loses nothing;
 * repositories it cannot use refused with nothing left behind.
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

/* The conversation's worktree as `baton show --json` has it (owned). */
static cJSON *worktree_of(struct ctx *c, const char *conv, cJSON **show)
{
    struct bt_test_result res;
    baton(c, &res, NULL, 0, "show", "--json", conv, END);
    assert_int_equal(res.exit_code, 0);
    *show = cJSON_Parse(res.out.data);
    assert_non_null(*show);
    bt_test_result_release(&res);
    cJSON *conversation = cJSON_GetObjectItemCaseSensitive(*show, "conversation");
    return cJSON_GetObjectItemCaseSensitive(conversation, "worktree");
}

static int exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

/* The user's checkout as git sees it: status, branches, worktrees. */
static char *checkout_state(struct ctx *c)
{
    return sh(c, "cd p && git status --porcelain && git branch --format='%(refname:short)' && "
                 "git worktree list --porcelain | grep -c '^worktree '");
}

static void test_worktree_turns(void **state)
{
    struct ctx *c = *state;
    repo_and_coder(c);
    free(sh(c, "mkdir p/sub && echo k > p/sub/k && cd p && " GIT " add sub && " GIT
               " commit -qm sub && git add s.txt"));
    char *before = checkout_state(c), *head = sh(c, "cd p && git rev-parse HEAD");
    edits(c, "printf 'w1\\nw2\\n' > w.txt; printf 'three\\n' >> ../a.txt\n");
    char *sub = path_in(c, "p/sub");
    struct bt_test_result res;
    baton(c, &res, NULL, 0, "run", "--worktree", "--json", "-C", sub, "Say hello banana", END);
    assert_int_equal(res.exit_code, 0);
    char *conv = conversation_of(res.out.data);
    cJSON *last, *show;
    char *got = json_of(changes_of(res.out.data, &last));
    assert_string_equal(got, "{\"files\":["
                             "{\"path\":\"a.txt\",\"status\":\"modified\",\"added\":1,"
                             "\"removed\":0},"
                             "{\"path\":\"sub/w.txt\",\"status\":\"added\",\"added\":2,"
                             "\"removed\":0}],\"added\":3,\"removed\":0}");
    bt_test_result_release(&res);

    /* where it is: $BATON_HOME/worktrees/<short id>, on baton/<short id> */
    cJSON *wt = worktree_of(c, conv, &show);
    char *want_path = bt_xasprintf("%s/home/worktrees/%.12s", c->dir, conv);
    char *want_branch = bt_xasprintf("baton/%.12s", conv);
    assert_string_equal(bt_test_jstr(wt, "path"), want_path);
    assert_string_equal(bt_test_jstr(wt, "branch"), want_branch);
    assert_string_equal(bt_test_jstr(wt, "base"), "main");
    head[strcspn(head, "\n")] = '\0';
    assert_string_equal(bt_test_jstr(wt, "start"), head);
    char *want_cwd = bt_xasprintf("%s/sub", want_path);
    cJSON *conversation = cJSON_GetObjectItemCaseSensitive(show, "conversation");
    assert_string_equal(bt_test_jstr(conversation, "cwd"), want_cwd);

    /* the user's checkout: as it was, but for one more worktree */
    char *after = checkout_state(c);
    char *want_after = bt_xstrdup(before);
    assert_non_null(strstr(after, want_branch));
    assert_non_null(strstr(after, "\n2\n"));
    char *w = path_in(c, "p/sub/w.txt");
    assert_false(exists(w));

    /* ls, show and handoff name it */
    baton(c, &res, NULL, 0, "ls", END);
    char *tag = bt_xasprintf("[%s]\n", want_branch);
    assert_non_null(strstr(res.out.data, tag));
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "show", conv, END);
    assert_non_null(strstr(res.out.data, want_path));
    assert_non_null(strstr(res.out.data, "(from main at "));
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "handoff", "--print", conv, END);
    assert_int_equal(res.exit_code, 0);
    bt_test_result_release(&res);

    /* the next turn runs there too: its own changes */
    edits(c, "printf 'w3\\n' >> w.txt\n");
    baton(c, &res, NULL, 0, "send", "--json", conv, "And again", END);
    assert_int_equal(res.exit_code, 0);
    cJSON_Delete(last);
    free(got);
    got = json_of(changes_of(res.out.data, &last));
    assert_string_equal(got, "{\"files\":[{\"path\":\"sub/w.txt\",\"status\":\"modified\","
                             "\"added\":1,\"removed\":0}],\"added\":1,\"removed\":0}");
    bt_test_result_release(&res);

    /* diff: as git prints the same trees, and no word of the user's edits */
    baton(c, &res, NULL, 0, "diff", "--stat", conv, END);
    assert_int_equal(res.exit_code, 0);
    assert_string_equal(res.out.data, " a.txt     | 1 +\n sub/w.txt | 3 +++\n"
                                      " 2 files changed, 4 insertions(+)\n");
    assert_null(strstr(res.err.data, "edits of your own"));
    bt_test_result_release(&res);

    /* rm: refused while the worktree holds the coder's work */
    baton(c, &res, NULL, 0, "rm", "-y", conv, END);
    assert_int_equal(res.exit_code, 2);
    assert_non_null(strstr(res.err.data, "has changes (2 files)"));
    assert_non_null(strstr(res.err.data, "rm --force"));
    assert_true(exists(want_path));
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "show", conv, END);
    assert_int_equal(res.exit_code, 0); /* the conversation stays too */
    bt_test_result_release(&res);

    /* rm --force: worktree and branch go; the user's checkout as before */
    baton(c, &res, NULL, 0, "rm", "-y", "--force", conv, END);
    assert_int_equal(res.exit_code, 0);
    assert_non_null(strstr(res.out.data, "removed worktree"));
    assert_false(exists(want_path));
    free(after);
    after = checkout_state(c);
    assert_string_equal(after, want_after);
    char *refs = sh(c, "ls -A home/snapshots && cd p && git for-each-ref refs/baton");
    assert_string_equal(refs, ""); /* the snapshots' store gone with its last conversation */

    free(refs);
    free(tag);
    free(w);
    free(want_after);
    free(after);
    free(want_cwd);
    free(want_branch);
    free(want_path);
    cJSON_Delete(show);
    cJSON_Delete(last);
    free(got);
    free(conv);
    free(sub);
    free(head);
    free(before);
    bt_test_result_release(&res);
}

/* Run --worktree in p; the conversation id (owned). */
static char *run_worktree(struct ctx *c, const char *dir, const char *branch)
{
    char *p = path_in(c, dir);
    struct bt_test_result res;
    if (branch)
        baton(c, &res, NULL, 0, "run", "--worktree", "--branch", branch, "--json", "-C", p,
              "Say hello banana", END);
    else
        baton(c, &res, NULL, 0, "run", "--worktree", "--json", "-C", p, "Say hello banana", END);
    assert_int_equal(res.exit_code, 0);
    char *conv = conversation_of(res.out.data);
    bt_test_result_release(&res);
    free(p);
    return conv;
}

/* Nothing changed: rm removes worktree and branch without --force; with
 * a commit only its branch has, rm refuses. */
static void test_rm_clean_and_committed(void **state)
{
    struct ctx *c = *state;
    repo_and_coder(c);
    char *conv = run_worktree(c, "p", NULL);
    struct bt_test_result res;
    baton(c, &res, NULL, 0, "rm", "-y", conv, END);
    assert_int_equal(res.exit_code, 0);
    char *line = bt_xasprintf("and branch baton/%.12s\n", conv);
    assert_non_null(strstr(res.out.data, line));
    bt_test_result_release(&res);
    char *branches = sh(c, "cd p && git branch --format='%(refname:short)'");
    assert_string_equal(branches, "main\n");
    free(branches);
    free(line);
    free(conv);

    conv = run_worktree(c, "p", "topic/x");
    char *cmd = bt_xasprintf("cd home/worktrees/%.12s && echo c > c.txt && " GIT
                             " add c.txt && " GIT " commit -qm c",
                             conv);
    free(sh(c, cmd));
    baton(c, &res, NULL, 0, "rm", "-y", conv, END);
    assert_int_equal(res.exit_code, 2);
    assert_non_null(strstr(res.err.data, "branch topic/x has 1 commit that main does not"));
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "rm", "-y", "--force", conv, END);
    assert_int_equal(res.exit_code, 0);
    bt_test_result_release(&res);
    branches = sh(c, "cd p && git branch --format='%(refname:short)'");
    assert_string_equal(branches, "main\n");
    free(branches);
    free(cmd);
    free(conv);
}

/* Every refusal: exit 2, one clear line, no conversation, no worktree. */
static void refused(struct ctx *c, const char *dir, const char *branch, const char *says)
{
    char *p = path_in(c, dir);
    struct bt_test_result res;
    char *opt = branch ? bt_xasprintf("--branch=%s", branch) : NULL;
    if (branch)
        baton(c, &res, NULL, 0, "run", "--worktree", opt, "-C", p, "hi", END);
    else
        baton(c, &res, NULL, 0, "run", "--worktree", "-C", p, "hi", END);
    assert_int_equal(res.exit_code, 2);
    if (!strstr(res.err.data, says))
        fail_msg("run --worktree -C %s: wanted \"%s\" in: %s", dir, says, res.err.data);
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "ls", END);
    assert_string_equal(res.out.data, "");
    bt_test_result_release(&res);
    char *wts = path_in(c, "home/worktrees");
    char *cmd = bt_xasprintf("ls -A '%s' 2>/dev/null | wc -l", wts);
    char *n = sh(c, cmd);
    assert_string_equal(n, "0\n");
    free(n);
    free(cmd);
    free(wts);
    free(opt);
    free(p);
}

static void test_refusals(void **state)
{
    struct ctx *c = *state;
    repo_and_coder(c);
    free(sh(c, "mkdir plain && git init -q --bare bare.git && " GIT " init -q empty"));
    char *branches = sh(c, "cd p && git branch --format='%(refname:short)' && git status -s");
    refused(c, "plain", NULL, "a worktree needs a git repository: ");
    refused(c, "bare.git", NULL, "is a bare repository");
    refused(c, "empty", NULL, "has no commit yet: commit something first");
    refused(c, "p", "main", "a branch 'main' exists already: name another with --branch");
    refused(c, "p", "a..b", "'a..b' is not a name git takes for a branch");
    refused(c, "p", "-x", "is not a name git takes for a branch");
    char *after = sh(c, "cd p && git branch --format='%(refname:short)' && git status -s");
    assert_string_equal(after, branches);

    struct bt_test_result res;
    char *p = path_in(c, "p");
    baton(c, &res, NULL, 0, "run", "--branch", "x", "-C", p, "hi", END);
    assert_int_equal(res.exit_code, 2);
    assert_non_null(strstr(res.err.data, "--branch names the branch of --worktree"));
    bt_test_result_release(&res);
    free(p);
    free(after);
    free(branches);
}

/* tmpl with "{}" (if any) replaced by conv's short id (owned). */
static char *with_id(const char *tmpl, const char *conv)
{
    const char *at = strstr(tmpl, "{}");
    if (!at)
        return bt_xstrdup(tmpl);
    return bt_xasprintf("%.*s%.12s%s", (int)(at - tmpl), tmpl, conv, at + 2);
}

/* What git would refuse to lose, rm refuses too: a worktree moved with
 * `git worktree move` that has changes, a locked one, one with an
 * initialized submodule. --force removes each. */
static void test_rm_keeps_work(void **state)
{
    struct ctx *c = *state;
    repo_and_coder(c);
    free(sh(c, "git init -q lib && cd lib && echo l > l && " GIT " add l && " GIT
               " commit -qm l && cd ../p && " GIT
               " -c protocol.file.allow=always submodule --quiet add ../lib lib && " GIT
               " commit -qm lib"));
    static const struct {
        const char *edit, *after, *says;
    } cases[] = {
        {"echo c > new.txt\n", "git -C p worktree move home/worktrees/{} moved",
         "has changes (1 file)"},
        {"", "git -C p worktree lock --reason 'on a stick' home/worktrees/{}",
         "is locked: on a stick"},
        {"git -c protocol.file.allow=always submodule --quiet update --init\n", "true",
         "has initialized submodules"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        edits(c, cases[i].edit);
        char *conv = run_worktree(c, "p", NULL);
        char *cmd = with_id(cases[i].after, conv);
        free(sh(c, cmd));
        struct bt_test_result res;
        baton(c, &res, NULL, 0, "rm", "-y", conv, END);
        if (res.exit_code != 2 || !strstr(res.err.data, cases[i].says))
            fail_msg("case %zu: exit %d: %s", i, res.exit_code, res.err.data);
        bt_test_result_release(&res);
        baton(c, &res, NULL, 0, "rm", "-y", "--force", conv, END);
        assert_int_equal(res.exit_code, 0);
        bt_test_result_release(&res);
        free(cmd);
        free(conv);
    }
    char *left = sh(c, "cd p && git worktree list | wc -l && git branch | wc -l; test -e "
                       "../moved; echo $?");
    assert_string_equal(left, "1\n1\n1\n");
    free(left);
}

/* Refused before anything is made: a repository whose files pass a git
 * filter (git-lfs, git-crypt), a directory HEAD does not have, a branch
 * name that clashes with one as a directory. */
static void test_refused_early(void **state)
{
    struct ctx *c = *state;
    repo_and_coder(c);
    free(sh(c, "cd p && mkdir -p ign && echo ign/ >> .gitignore && touch ign/x && " GIT
               " commit -qam ign && git branch baton/x"));
    refused(c, "p/ign", NULL, "is not in the repository's HEAD");
    refused(c, "p/.git", NULL, "is not in the repository's HEAD");
    refused(c, "p", "baton/x/y", "a branch 'baton/x' exists, so git cannot make 'baton/x/y'");
    free(sh(c, "cd p && git branch -D -q baton/x && git branch baton/y/z"));
    refused(c, "p", "baton/y", "a branch 'baton/y/z' exists");
    free(sh(c, "cd p && git config filter.rot.clean 'tr a-z n-za-m' && git config "
               "filter.rot.smudge 'tr n-za-m a-z' && echo '*.sec filter=rot' > .gitattributes "
               "&& echo s > x.sec && " GIT " add -A && " GIT " commit -qm sec"));
    refused(c, "p", NULL, "the git filter 'rot'");
    /* declared in the user's own attributes file, not the repository */
    free(sh(c, "mkdir -p xdg/git && echo '*.sec filter=rot' > xdg/git/attributes && " GIT
               " init -q q && cd q && git config filter.rot.clean 'tr a-z n-za-m' && echo s > "
               "x.sec && " GIT " add -A && " GIT " commit -qm sec"));
    char *xdg = path_in(c, "xdg");
    char *kv = bt_xasprintf("XDG_CONFIG_HOME=%s", xdg);
    setenv_kv(c, kv);
    refused(c, "q", NULL, "the git filter 'rot'");
    free(kv);
    free(xdg);
}

/* A detached HEAD: the worktree starts from its commit, which show says. */
static void test_detached_head(void **state)
{
    struct ctx *c = *state;
    repo_and_coder(c);
    free(sh(c, "cd p && git checkout -q --detach"));
    char *head = sh(c, "cd p && git rev-parse HEAD");
    head[strcspn(head, "\n")] = '\0';
    char *conv = run_worktree(c, "p", NULL);
    cJSON *show, *wt = worktree_of(c, conv, &show);
    assert_string_equal(bt_test_jstr(wt, "base"), head);
    struct bt_test_result res;
    baton(c, &res, NULL, 0, "show", conv, END);
    assert_non_null(strstr(res.out.data, "a detached HEAD"));
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "rm", "-y", conv, END);
    assert_int_equal(res.exit_code, 0);
    bt_test_result_release(&res);
    cJSON_Delete(show);
    free(conv);
    free(head);
}

/* Spaces and non-ASCII in the repository's path and in BATON_HOME; a
 * submodule in the repository. */
static void test_odd_paths_and_submodule(void **state)
{
    struct ctx *c = *state;
    repo_and_coder(c);
    char *home = path_in(c, "home dir ü");
    char *kv = bt_xasprintf("BATON_HOME=%s", home);
    setenv_kv(c, kv);
    free(sh(c, "mkdir 'q r' && " GIT " init -q 'q r/é p' && cd 'q r/é p' && echo 1 > f && " GIT
               " add f && " GIT " commit -qm one && " GIT
               " -c protocol.file.allow=always submodule --quiet add ../../p lib && " GIT
               " commit -qm lib"));
    edits(c, "echo 2 >> f\n");
    char *conv = run_worktree(c, "q r/é p", NULL);
    cJSON *show, *wt = worktree_of(c, conv, &show);
    char *want = bt_xasprintf("%s/worktrees/%.12s", home, conv);
    assert_string_equal(bt_test_jstr(wt, "path"), want);
    char *f = bt_xasprintf("%s/f", want);
    assert_true(exists(f));
    struct bt_test_result res;
    baton(c, &res, NULL, 0, "diff", "--stat", conv, END);
    assert_string_equal(res.out.data, " f | 1 +\n 1 file changed, 1 insertion(+)\n");
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "rm", "-y", "--force", conv, END);
    assert_int_equal(res.exit_code, 0);
    bt_test_result_release(&res);
    assert_false(exists(want));
    char *status = sh(c, "cd 'q r/é p' && git status --porcelain && git worktree list | wc -l");
    assert_string_equal(status, "1\n");
    free(status);
    free(f);
    free(want);
    cJSON_Delete(show);
    free(conv);
    free(kv);
    free(home);
}

/* A worktree removed behind baton's back: turns and handoff say so; rm
 * prunes what git still records. */
static void test_worktree_gone(void **state)
{
    struct ctx *c = *state;
    repo_and_coder(c);
    char *conv = run_worktree(c, "p", NULL);
    char *cmd = bt_xasprintf("rm -rf home/worktrees/%.12s", conv);
    free(sh(c, cmd));
    struct bt_test_result res;
    baton(c, &res, NULL, 0, "send", conv, "more", END);
    assert_int_equal(res.exit_code, 1);
    assert_non_null(strstr(res.err.data, "worktree"));
    assert_non_null(strstr(res.err.data, "is gone"));
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "handoff", "--print", conv, END);
    assert_int_equal(res.exit_code, 2);
    assert_non_null(strstr(res.err.data, "worktree"));
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "diff", conv, END); /* read from the repository */
    assert_int_equal(res.exit_code, 0);
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "rm", "-y", conv, END);
    assert_int_equal(res.exit_code, 0);
    bt_test_result_release(&res);
    char *left =
        sh(c, "cd p && git worktree list | wc -l && git branch --format='%(refname:short)'");
    assert_string_equal(left, "1\nmain\n");
    free(left);
    free(cmd);
    free(conv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_worktree_turns, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rm_clean_and_committed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_detached_head, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rm_keeps_work, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refused_early, setup, teardown),
        cmocka_unit_test_setup_teardown(test_odd_paths_and_submodule, setup, teardown),
        cmocka_unit_test_setup_teardown(test_worktree_gone, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
