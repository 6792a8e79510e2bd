/* SPDX-License-Identifier: MIT */
/*
 * integration-snapshots: what a turn's snapshots of the working tree must
 * never copy, through the baton binary (docs/snapshots.md): nothing is
 * written into the user's repository (no object of an untracked .env, no
 * reference; a mirror clone carries nothing of it), the untracked files of
 * a home directory's repository are not taken, untracked files over the
 * bounds make the changes unknown while the turn completes, --no-snapshot
 * and BATON_SNAPSHOTS=0 make none, and refs/baton/ of an earlier baton
 * move out of the repository into baton's store.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gitfix.h"
#include "harness.h"

/* The store's git directory, for a shell command. */
#define STORE "\"$(echo \"$PWD\"/home/snapshots/*)\""

/* Every file of p/.git with its checksum: what a turn must not change. */
#define GIT_FILES "cd p/.git && find . -type f | sort | xargs sha1sum"

/* A turn in dir (run --json, more args before the prompt); exit 0 asserted;
 * its changes as compact JSON (owned), the conversation in *conv. */
static char *turn(struct ctx *c, const char *dir, const char *more, char **conv)
{
    struct bt_test_result res;
    char *p = path_in(c, dir);
    if (more)
        baton(c, &res, NULL, 0, "run", "--json", more, "-C", p, "Say hello banana", END);
    else
        baton(c, &res, NULL, 0, "run", "--json", "-C", p, "Say hello banana", END);
    assert_int_equal(res.exit_code, 0);
    cJSON *last;
    char *got = json_of(changes_of(res.out.data, &last));
    assert_string_equal(bt_test_jstr(last, "status"), "completed");
    if (conv)
        *conv = conversation_of(res.out.data);
    cJSON_Delete(last);
    bt_test_result_release(&res);
    free(p);
    return got;
}

/* An untracked .env before the turn and a token file the coder makes:
 * the user's repository is byte for byte as it was, has no object of
 * either and no refs/baton/, nor has a mirror clone of it; baton's store
 * (0700) has them. */
static void test_secrets_stay_out(void **state)
{
    struct ctx *c = *state;
    repo_and_coder(c);
    free(sh(c, "printf 'KEY=hunter2\\n' > p/.env"));
    edits(c, "printf 'TOKEN=abc\\n' > token.txt\n");
    char *before = sh(c, GIT_FILES);
    char *got = turn(c, "p", NULL, NULL);
    assert_string_equal(got, "{\"files\":[{\"path\":\"token.txt\",\"status\":\"added\",\"added\":"
                             "1,\"removed\":0}],\"added\":1,\"removed\":0}");
    char *after = sh(c, GIT_FILES);
    assert_string_equal(after, before);
    char *none =
        sh(c, "cd p && env=$(git hash-object .env) && tok=$(git hash-object token.txt) && "
              "! git cat-file -e $env 2>/dev/null && ! git cat-file -e $tok 2>/dev/null && "
              "git for-each-ref refs/baton && git clone -q --mirror . ../m.git && cd "
              "../m.git && ! git cat-file -e $env 2>/dev/null && ! git cat-file -e $tok "
              "2>/dev/null && git for-each-ref refs/baton");
    assert_string_equal(none, "");
    char *kept = sh(c, "stat -c %a home/snapshots && git --git-dir=" STORE " cat-file -p "
                       "$(git hash-object p/.env) && git --git-dir=" STORE
                       " cat-file -p $(git hash-object p/token.txt)");
    assert_string_equal(kept, "700\nKEY=hunter2\nTOKEN=abc\n");
    free(kept);
    free(none);
    free(after);
    free(before);
    free(got);
}

/* A home directory that is a git repository (dotfiles): a turn in a
 * folder of it takes no untracked file (no .ssh key), as $HOME itself or
 * by status.showUntrackedFiles=no; a tracked file it edits still counts. */
static void test_home_repository(void **state)
{
    struct ctx *c = *state;
    repo_and_coder(c);
    free(sh(c, "mkdir h && cd h && " GIT " init -q && printf 'set -o vi\\n' > .bashrc && " GIT
               " add .bashrc && " GIT " commit -qm dots && mkdir .ssh proj && "
               "printf PRIVATE > .ssh/id_ed25519"));
    edits(c, "printf 'alias l=ls\\n' >> ../.bashrc; printf x > made.txt\n");
    char *h = path_in(c, "h"), *kv = bt_xasprintf("HOME=%s", h), *conv = NULL;
    setenv_kv(c, kv); /* the working tree is $HOME */
    char *got = turn(c, "h/proj", NULL, &conv);
    assert_string_equal(got, "{\"files\":[{\"path\":\".bashrc\",\"status\":\"modified\",\"added\":"
                             "1,\"removed\":0}],\"added\":1,\"removed\":0}");
    struct bt_test_result res;
    baton(c, &res, NULL, 0, "diff", "--json", conv, END);
    assert_int_equal(res.exit_code, 0);
    cJSON *d = cJSON_Parse(res.out.data);
    char *cmd =
        bt_xasprintf("git --git-dir=" STORE " ls-tree -r --name-only %s", bt_test_jstr(d, "to"));
    char *paths = sh(c, cmd);
    assert_string_equal(paths, ".bashrc\n");
    free(paths);

    /* HOME elsewhere, but the repository says untracked files are not its
     * business */
    free(sh(c, "git -C h config status.showUntrackedFiles no && printf y > h/proj/other.txt"));
    setenv_kv(c, "HOME=/nonexistent");
    edits(c, "printf 'alias ll=ls\\n' >> ../.bashrc\n");
    free(got);
    got = turn(c, "h/proj", NULL, NULL);
    assert_string_equal(got, "{\"files\":[{\"path\":\".bashrc\",\"status\":\"modified\",\"added\":"
                             "1,\"removed\":0}],\"added\":1,\"removed\":0}");
    char *secret = sh(c, "! git --git-dir=" STORE
                         " cat-file -e $(git hash-object h/.ssh/id_ed25519) 2>/dev/null && ! git "
                         "--git-dir=" STORE " cat-file -e $(git hash-object h/proj/made.txt) "
                         "2>/dev/null && echo none");
    assert_string_equal(secret, "none\n");
    free(secret);
    free(cmd);
    cJSON_Delete(d);
    bt_test_result_release(&res);
    free(got);
    free(conv);
    free(kv);
    free(h);
}

/* More repositories whose untracked files are not wanted: one that holds
 * the home directory (a repository at / or /home), one that says so with
 * another spelling of false ("Off", as git >= 2.46 takes it); and
 * baton's own home inside a repository: its database, run files and
 * store are no change of a turn and never copied into the store. */
static void test_untracked_not_wanted(void **state)
{
    struct ctx *c = *state;
    repo_and_coder(c);
    free(sh(c, "mkdir -p p/u/.ssh p/u/proj && printf PRIVATE > p/u/.ssh/id_ed25519"));
    edits(c, "printf x > made.txt\n");
    char *h = path_in(c, "p/u"), *kv = bt_xasprintf("HOME=%s", h);
    setenv_kv(c, kv); /* the working tree holds $HOME */
    char *got = turn(c, "p/u/proj", NULL, NULL);
    assert_string_equal(got, "{\"files\":[],\"added\":0,\"removed\":0}");
    char *secret = sh(c, "! git --git-dir=" STORE
                         " cat-file -e $(git hash-object p/u/.ssh/id_ed25519) 2>/dev/null && "
                         "echo none");
    assert_string_equal(secret, "none\n");
    free(secret);
    free(got);

    setenv_kv(c, "HOME=/nonexistent");
    free(sh(c, "git -C p config status.showUntrackedFiles Off && rm -r home"));
    got = turn(c, "p", NULL, NULL);
    assert_string_equal(got, "{\"files\":[],\"added\":0,\"removed\":0}");
    free(got);

    /* BATON_HOME in the repository: only what the coder made */
    free(sh(c, "git -C p config --unset status.showUntrackedFiles && rm -r home p/u "
               "p/proj/made.txt p/made.txt 2>/dev/null; true"));
    char *bh = path_in(c, "p/.baton"), *bkv = bt_xasprintf("BATON_HOME=%s", bh);
    setenv_kv(c, bkv);
    for (int i = 0; i < 2; i++) {
        edits(c, i ? "printf y > more.txt\n" : "printf x > made.txt\n");
        got = turn(c, "p", NULL, NULL);
        assert_string_equal(got, i ? "{\"files\":[{\"path\":\"more.txt\",\"status\":"
                                     "\"added\",\"added\":1,\"removed\":0}],\"added\":1,"
                                     "\"removed\":0}"
                                   : "{\"files\":[{\"path\":\"made.txt\",\"status\":"
                                     "\"added\",\"added\":1,\"removed\":0}],\"added\":1,"
                                     "\"removed\":0}");
        free(got);
    }
    free(bkv);
    free(bh);
    free(kv);
    free(h);
}

/* An untracked file libgit2 will not add (a name git refuses to track,
 * "git~1") is left out, not the end of every turn's changes; a snapshot
 * that fails (its store cannot be made) makes the changes unknown with
 * the reason in the event, not only on a stderr a worker's may be. */
static void test_snapshot_failures(void **state)
{
    struct ctx *c = *state;
    repo_and_coder(c);
    free(sh(c, "printf x > 'p/git~1'"));
    edits(c, "printf x > made.txt\n");
    char *got = turn(c, "p", NULL, NULL);
    assert_string_equal(got, "{\"files\":[{\"path\":\"made.txt\",\"status\":\"added\","
                             "\"added\":1,\"removed\":0}],\"added\":1,\"removed\":0}");
    free(got);
    /* a bare repository: no changes, and no store made for it */
    free(sh(c, "git clone -q --bare p b.git"));
    char *b = path_in(c, "b.git");
    struct bt_test_result res;
    baton(c, &res, NULL, 0, "run", "--json", "-C", b, "Say hello banana", END);
    assert_int_equal(res.exit_code, 0);
    cJSON *last;
    assert_null(changes_of(res.out.data, &last));
    cJSON_Delete(last);
    bt_test_result_release(&res);
    free(b);
    char *stores = sh(c, "ls home/snapshots | wc -l");
    assert_string_equal(stores, "1\n");
    free(stores);
    free(sh(c, "rm -r home/snapshots && printf x > home/snapshots"));
    got = turn(c, "p", NULL, NULL);
    assert_non_null(
        strstr(got, "{\"unknown\":true,\"reason\":\"cannot make baton's snapshot store "));
    free(got);
}

/* Untracked files over a snapshot's bounds: the turn completes, its
 * changes say they are unknown and why (over at the end, then over at
 * the start), and `diff` says none were recorded. */
static void test_bounds(void **state)
{
    struct ctx *c = *state;
    repo_and_coder(c);
    edits(c, "truncate -s 9M huge.bin\n");
    char *conv = NULL;
    char *got = turn(c, "p", NULL, &conv);
    const char *want = "{\"unknown\":true,\"reason\":\"an untracked file is over the 8 MiB a "
                       "snapshot takes of one\"}";
    assert_string_equal(got, want);
    edits(c, "rm huge.bin\n");
    struct bt_test_result res;
    baton(c, &res, NULL, 0, "send", "--json", conv, "Again", END);
    assert_int_equal(res.exit_code, 0);
    cJSON *last;
    free(got);
    got = json_of(changes_of(res.out.data, &last));
    assert_string_equal(got, want); /* over before the turn: unknown too */
    cJSON_Delete(last);
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "diff", conv, END); /* diff says why */
    assert_int_equal(res.exit_code, 1);
    assert_non_null(strstr(res.err.data, "the changes of this conversation are unknown: an "
                                         "untracked file is over the 8 MiB a snapshot takes of "
                                         "one (docs/snapshots.md)"));
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "diff", "--turn", "1", conv, END);
    assert_int_equal(res.exit_code, 1);
    assert_non_null(strstr(res.err.data, "the changes of that turn are unknown: "));
    bt_test_result_release(&res);
    free(got);
    free(conv);
}

/* --no-snapshot and BATON_SNAPSHOTS=0: no changes, no store made. */
static void test_snapshots_off(void **state)
{
    struct ctx *c = *state;
    repo_and_coder(c);
    edits(c, "printf 'KEY=x\\n' > .env\n");
    char *got = turn(c, "p", "--no-snapshot", NULL);
    assert_string_equal(got, "null");
    free(got);
    setenv_kv(c, "BATON_SNAPSHOTS=0");
    got = turn(c, "p", NULL, NULL);
    assert_string_equal(got, "null");
    char *none = sh(c, "test ! -e home/snapshots && echo none");
    assert_string_equal(none, "none\n");
    free(none);
    free(got);
}

/* refs/baton/ an earlier baton made in the repository (a .env in its
 * tree): the first turn moves them into the store; the repository's
 * `git gc --prune=now` then drops the .env's blob there, the store keeps
 * it. */
static void test_old_refs_moved(void **state)
{
    struct ctx *c = *state;
    repo_and_coder(c);
    free(sh(c, "cd p && printf 'KEY=old\\n' > .env && t=$(export GIT_INDEX_FILE=.git/old && git "
               "add -A && git write-tree) && rm .git/old .env && git update-ref "
               "refs/baton/c0/r0/start $t && git update-ref refs/baton/c0/r0/end $t"));
    edits(c, "");
    free(turn(c, "p", NULL, NULL));
    char *left = sh(c, "cd p && git for-each-ref refs/baton && ls -A .git/refs");
    assert_string_equal(left, "heads\ntags\n");
    char *blob = sh(c, "printf 'KEY=old\\n' | git hash-object --stdin | tr -d '\\n'");
    char *cmd = bt_xasprintf(
        "cd p && git reflog expire --expire=now --all && git gc -q --prune=now && ! git cat-file "
        "-e %s 2>/dev/null && cd .. && git --git-dir=" STORE
        " for-each-ref --format='%%(refname)' refs/baton/c0 && git --git-dir=" STORE
        " cat-file -p %s",
        blob, blob);
    char *kept = sh(c, cmd);
    assert_string_equal(kept, "refs/baton/c0/r0/end\nrefs/baton/c0/r0/start\nKEY=old\n");
    free(kept);
    free(cmd);
    free(blob);
    free(left);
}

/* A prompt to `baton acp` (more: its options) in p, through a coprocess
 * speaking ACP lines; the session's id, which is the conversation's. */
static char *acp_prompt(struct ctx *c, const char *more)
{
    char *script = bt_xasprintf(
        "coproc A { exec '%s' acp -c codex %s 2>acp.err; }\n"
        "send() { printf '%%s\\n' \"$1\" >&\"${A[1]}\"; }\n"
        /* no command substitution: a subshell has no coprocess descriptors */
        "upto() { while read -r -t 60 got <&\"${A[0]}\"; do case $got in *'\"id\":'$1,*) "
        "return 0;; esac; done; return 1; }\n"
        "send '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
        "{\"protocolVersion\":1,\"clientCapabilities\":{}}}'; upto 1 || exit 1\n"
        "send '{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"session/new\",\"params\":{\"cwd\":\"'"
        "\"$PWD/p\"'\",\"mcpServers\":[]}}'; upto 2 || exit 1\n"
        "sid=${got#*\\\"sessionId\\\":\\\"}; sid=${sid%%%%\\\"*}\n"
        "send '{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"session/prompt\",\"params\":"
        "{\"sessionId\":\"'$sid'\",\"prompt\":[{\"type\":\"text\",\"text\":\"Say hello "
        "banana\"}]}}'; upto 3 || exit 1\n"
        "exec {A[1]}>&-; wait; printf %%s \"$sid\"\n",
        BATON, more);
    char *sid = sh(c, script);
    free(script);
    return sid;
}

/* baton acp --no-snapshot: its turns record no changes and make no
 * store; without it, they do. */
static void test_acp_no_snapshot(void **state)
{
    struct ctx *c = *state;
    repo_and_coder(c);
    edits(c, "printf 'KEY=x\\n' > .env\n");
    char *off = acp_prompt(c, "--no-snapshot");
    struct bt_test_result res;
    baton(c, &res, NULL, 0, "diff", off, END);
    assert_int_equal(res.exit_code, 1);
    assert_non_null(strstr(res.err.data, "no changes were recorded"));
    bt_test_result_release(&res);
    char *none = sh(c, "test ! -e home/snapshots && echo none");
    assert_string_equal(none, "none\n");
    /* when baton acp starts the coder (for its model list, at session/new,
     * for the turn) is its own business: nothing is edited this time, so
     * the turn's two snapshots are the same tree */
    edits(c, "");
    char *on = acp_prompt(c, "");
    baton(c, &res, NULL, 0, "diff", "--stat", on, END);
    assert_int_equal(res.exit_code, 0);
    assert_string_equal(res.out.data, ""); /* as git's, and said on stderr */
    assert_non_null(strstr(res.err.data, "baton: no changes in this conversation's turns"));
    char *cmd = bt_xasprintf("git --git-dir=" STORE " for-each-ref --format='%%(refname)' "
                             "refs/baton/%s | sed 's|/[^/]*/|/RUN/|2'",
                             on);
    char *refs = sh(c, cmd),
         *want = bt_xasprintf("refs/baton/%s/RUN/end\nrefs/baton/%s/RUN/start\n", on, on);
    assert_string_equal(refs, want);
    free(want);
    free(refs);
    free(cmd);
    bt_test_result_release(&res);
    free(on);
    free(none);
    free(off);
}

/* A worktree conversation's snapshots go with rm even when the worktree
 * directory was removed by hand first: the store is found through the
 * repository's git directory. */
static void test_rm_worktree_gone(void **state)
{
    struct ctx *c = *state;
    repo_and_coder(c);
    edits(c, "printf x > made.txt\n");
    char *conv = NULL;
    char *got = turn(c, "p", "--worktree", &conv);
    assert_string_equal(got, "{\"files\":[{\"path\":\"made.txt\",\"status\":\"added\",\"added\":"
                             "1,\"removed\":0}],\"added\":1,\"removed\":0}");
    free(sh(c, "rm -rf home/worktrees/*"));
    struct bt_test_result res;
    baton(c, &res, NULL, 0, "rm", "-y", "--force", conv, END);
    assert_int_equal(res.exit_code, 0);
    char *left = sh(c, "ls -A home/snapshots && git -C p for-each-ref refs/baton");
    assert_string_equal(left, "");
    free(left);
    bt_test_result_release(&res);
    free(got);
    free(conv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_secrets_stay_out, setup, teardown),
        cmocka_unit_test_setup_teardown(test_home_repository, setup, teardown),
        cmocka_unit_test_setup_teardown(test_untracked_not_wanted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_snapshot_failures, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bounds, setup, teardown),
        cmocka_unit_test_setup_teardown(test_snapshots_off, setup, teardown),
        cmocka_unit_test_setup_teardown(test_old_refs_moved, setup, teardown),
        cmocka_unit_test_setup_teardown(test_acp_no_snapshot, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rm_worktree_gone, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
