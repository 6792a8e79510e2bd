/* SPDX-License-Identifier: MIT */
/*
 * integration-changes: what each turn changed in its git working tree,
 * through the baton binary: turn.completed's changes (src/repo.h,
 * docs/events.md) with a coder that edits files (the fake coder behind a
 * script that makes the test's edits first), the user's index and files
 * left as they were, the snapshots' references (in baton's store) removed
 * with the conversation, and no changes outside git. What the store keeps
 * out of the user's repository: test-snapshots.c.
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

static void test_turn_changes(void **state)
{
    struct ctx *c = *state;
    repo_and_coder(c);
    char *before = sh(c, "cd p && git status --porcelain && git diff --cached");
    edits(c, "printf 'three\\n' >> a.txt; rm gone.txt; printf 'n1\\nn2\\n' > new.txt; "
             "touch x.log\n");
    char *p = path_in(c, "p");
    struct bt_test_result res;
    baton(c, &res, NULL, 0, "run", "--json", "-C", p, "Say hello banana", END);
    assert_int_equal(res.exit_code, 0);
    cJSON *last;
    char *got = json_of(changes_of(res.out.data, &last));
    /* the ignored x.log is not there; the staged s.txt was there before */
    assert_string_equal(got,
                        "{\"files\":["
                        "{\"path\":\"a.txt\",\"status\":\"modified\",\"added\":1,\"removed\":0},"
                        "{\"path\":\"gone.txt\",\"status\":\"deleted\",\"added\":0,"
                        "\"removed\":1},"
                        "{\"path\":\"new.txt\",\"status\":\"added\",\"added\":2,\"removed\":0}"
                        "],\"added\":3,\"removed\":1}");
    /* the user's index as it was (s.txt staged, nothing else) */
    char *after = sh(c, "cd p && git diff --cached --name-only");
    assert_string_equal(after, "s.txt\n");
    (void)before;
    char *conv = conversation_of(res.out.data);
    /* kept in baton's store (docs/snapshots.md), none in the repository */
    char *cmd = bt_xasprintf("git --git-dir=\"$(echo home/snapshots/*)\" for-each-ref "
                             "--format='%%(refname)' refs/baton/%s && cd p && git for-each-ref "
                             "refs/baton",
                             conv);
    char *refs = sh(c, cmd);
    assert_int_equal(strlen(refs) > 0, 1);
    assert_non_null(strstr(refs, "/start\n"));
    assert_non_null(strstr(refs, "/end\n"));

    /* the next turn: its own changes only */
    edits(c, "printf 'n3\\n' >> new.txt\n");
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "send", "--json", conv, "And again", END);
    assert_int_equal(res.exit_code, 0);
    cJSON_Delete(last);
    free(got);
    got = json_of(changes_of(res.out.data, &last));
    assert_string_equal(got, "{\"files\":[{\"path\":\"new.txt\",\"status\":\"modified\","
                             "\"added\":1,\"removed\":0}],\"added\":1,\"removed\":0}");
    /* baton diff: the whole conversation, as git prints the same trees */
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "diff", "--json", conv, END);
    assert_int_equal(res.exit_code, 0);
    cJSON *d = cJSON_Parse(res.out.data);
    assert_non_null(d);
    char *gitdiff = bt_xasprintf("git --git-dir=\"$(echo home/snapshots/*)\" diff %s %s",
                                 bt_test_jstr(d, "from"), bt_test_jstr(d, "to"));
    char *want = sh(c, gitdiff);
    assert_non_null(strstr(res.out.data, "\"changes\":{\"files\":[{\"path\":\"a.txt\""));
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "diff", conv, END);
    assert_int_equal(res.exit_code, 0);
    assert_string_equal(res.out.data, want);
    assert_non_null(strstr(res.err.data, "edits of your own")); /* said, on stderr */
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "diff", "--turn", "2", "--stat", conv, END);
    assert_int_equal(res.exit_code, 0);
    assert_string_equal(res.out.data, " new.txt | 1 +\n 1 file changed, 1 insertion(+)\n");
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "diff", "--turn", "3", conv, END);
    assert_int_equal(res.exit_code, 2);
    assert_non_null(strstr(res.err.data, "has no turn 3"));
    free(want);
    free(gitdiff);
    cJSON_Delete(d);
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "rm", "-y", conv, END);
    assert_int_equal(res.exit_code, 0);
    free(refs);
    refs = sh(c, "ls -A home/snapshots && cd p && git for-each-ref refs/baton");
    assert_string_equal(refs, ""); /* gone with the conversation: the store with its last */
    char *status = sh(c, "cd p && git status --porcelain");
    assert_non_null(strstr(status, "?? new.txt")); /* the files stay */
    free(status);
    free(refs);
    free(cmd);
    free(conv);
    free(after);
    free(before);
    free(got);
    cJSON_Delete(last);
    free(p);
    bt_test_result_release(&res);
}

/* A turn that changed nothing: diff says so on stderr (its stdout stays
 * empty, as git diff's), exit 0, for a turn, --stat and the whole
 * conversation; --json has no files. */
static void test_no_changes(void **state)
{
    struct ctx *c = *state;
    repo_and_coder(c);
    edits(c, ":\n");
    char *p = path_in(c, "p");
    struct bt_test_result res;
    baton(c, &res, NULL, 0, "run", "--json", "-C", p, "Say hello banana", END);
    assert_int_equal(res.exit_code, 0);
    char *conv = conversation_of(res.out.data);
    bt_test_result_release(&res);
    static const char turn[] = "baton: no changes in turn 1\n",
                      all[] = "baton: no changes in this conversation's turns\n";
    for (int i = 0; i < 4; i++) {
        if (i == 0)
            baton(c, &res, NULL, 0, "diff", "--turn", "1", conv, END);
        else if (i == 1)
            baton(c, &res, NULL, 0, "diff", "--turn", "1", "--stat", conv, END);
        else if (i == 2)
            baton(c, &res, NULL, 0, "diff", "--stat", conv, END);
        else
            baton(c, &res, NULL, 0, "diff", conv, END);
        assert_int_equal(res.exit_code, 0);
        assert_string_equal(res.out.data, "");
        assert_string_equal(res.err.data, i < 2 ? turn : all);
        bt_test_result_release(&res);
    }
    baton(c, &res, NULL, 0, "diff", "--json", "--turn", "1", conv, END);
    assert_int_equal(res.exit_code, 0);
    assert_non_null(strstr(res.out.data, "\"changes\":{\"files\":[]"));
    assert_string_equal(res.err.data, "");
    bt_test_result_release(&res);
    free(conv);
    free(p);
}

/* A file name that is not UTF-8 and holds a newline: JSON text with
 * U+FFFD in the event and in `diff --json`, quoted as git quotes it in
 * `diff --stat`. */
static void test_odd_names(void **state)
{
    struct ctx *c = *state;
    repo_and_coder(c);
    edits(c, "printf 'z\\n' > \"$(printf 'we\\377ird\\nname')\"\n");
    char *p = path_in(c, "p");
    struct bt_test_result res;
    baton(c, &res, NULL, 0, "run", "--json", "-C", p, "Say hello banana", END);
    assert_int_equal(res.exit_code, 0);
    assert_int_equal(bt_utf8_invalid_at(res.out.data, res.out.len), res.out.len);
    cJSON *last;
    char *got = json_of(changes_of(res.out.data, &last));
    assert_string_equal(got, "{\"files\":[{\"path\":\"we\xef\xbf\xbdird\\nname\",\"status\":"
                             "\"added\",\"added\":1,\"removed\":0}],\"added\":1,\"removed\":0}");
    char *conv = conversation_of(res.out.data);
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "diff", "--stat", conv, END);
    assert_string_equal(res.out.data,
                        " \"we\\377ird\\nname\" | 1 +\n 1 file changed, 1 insertion(+)\n");
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "diff", "--json", conv, END);
    assert_int_equal(res.exit_code, 0);
    assert_int_equal(bt_utf8_invalid_at(res.out.data, res.out.len), res.out.len);
    free(conv);
    free(got);
    cJSON_Delete(last);
    free(p);
    bt_test_result_release(&res);
}

/* Outside git, and in a bare-free plain directory: no changes member. */
static void test_no_repository(void **state)
{
    struct ctx *c = *state;
    repo_and_coder(c);
    free(sh(c, "mkdir plain"));
    edits(c, "touch made.txt\n");
    char *plain = path_in(c, "plain");
    struct bt_test_result res;
    baton(c, &res, NULL, 0, "run", "--json", "-C", plain, "Say hello banana", END);
    assert_int_equal(res.exit_code, 0);
    cJSON *last;
    assert_null(changes_of(res.out.data, &last));
    cJSON_Delete(last);
    char *conv = conversation_of(res.out.data);
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "diff", conv, END);
    assert_int_equal(res.exit_code, 1);
    assert_non_null(strstr(res.err.data, "is not in a git repository"));
    free(conv);
    free(plain);
    bt_test_result_release(&res);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_turn_changes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_changes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_repository, setup, teardown),
        cmocka_unit_test_setup_teardown(test_odd_names, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
