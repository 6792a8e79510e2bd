/* SPDX-License-Identifier: MIT */
/*
 * integration-fanout: one prompt to several coders at once (`baton run -c
 * a,b --worktree`) through the baton binary: one conversation per coder,
 * each in its own worktree, run in parallel in detached workers, all in
 * one group; --json streams every member's events, each naming its
 * conversation; the group's table and `baton group ls|show`; keep --prune
 * brings one result home and drops the others; a coder that is unknown or
 * not installed.
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

/* The distinct conversation ids of a --json stream, in order of first
 * appearance (at most 8; *n of them, each owned). */
static void conversations_of(const char *out, char *ids[8], size_t *n)
{
    cJSON **lines = NULL;
    size_t k = bt_test_json_lines(out, &lines);
    *n = 0;
    for (size_t i = 0; i < k; i++) {
        const char *c = bt_test_jstr(lines[i], "conversation");
        assert_non_null(c); /* every event names its conversation */
        size_t j = 0;
        while (j < *n && strcmp(ids[j], c) != 0)
            j++;
        if (j == *n && *n < 8)
            ids[(*n)++] = bt_xstrdup(c);
    }
    bt_test_lines_free(lines, k);
}

static void test_two_in_worktrees(void **state)
{
    struct ctx *c = *state;
    repo_and_coder(c);
    edits(c, "printf 'w\\n' > w.txt\n");
    char *p = path_in(c, "p");
    struct bt_test_result res;
    baton(c, &res, NULL, 0, "run", "-c", "codex,codex", "--worktree", "--json", "-C", p,
          "Say hello banana", END);
    assert_int_equal(res.exit_code, 0);
    char *ids[8] = {NULL};
    size_t n;
    conversations_of(res.out.data, ids, &n);
    assert_int_equal(n, 2);
    assert_non_null(ids[0]);
    assert_non_null(ids[1]);
    /* two turn.completed, each with its own worktree's w.txt */
    const char *at = res.out.data;
    int completed = 0;
    while ((at = strstr(at, "\"type\":\"turn.completed\"")) != NULL) {
        completed++;
        at++;
    }
    assert_int_equal(completed, 2);
    assert_non_null(strstr(res.out.data, "{\"path\":\"w.txt\",\"status\":\"added\",\"added\":1"));
    bt_test_result_release(&res);

    /* the group: both, side by side */
    baton(c, &res, NULL, 0, "group", "ls", "--json", END);
    cJSON *g = cJSON_Parse(res.out.data);
    assert_non_null(g);
    assert_string_equal(bt_test_jstr(g, "name"), "Say hello banana");
    char *group = bt_xstrdup(bt_test_jstr(g, "id"));
    cJSON_Delete(g);
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "group", "show", "--json", group, END);
    assert_int_equal(res.exit_code, 0);
    g = cJSON_Parse(res.out.data);
    cJSON *members = cJSON_GetObjectItemCaseSensitive(g, "members");
    assert_int_equal(cJSON_GetArraySize(members), 2);
    for (int i = 0; i < 2; i++) {
        cJSON *m = cJSON_GetArrayItem(members, i);
        assert_string_equal(bt_test_jstr(m, "status"), "completed");
        assert_int_equal(cJSON_GetObjectItemCaseSensitive(m, "files")->valueint, 1);
        assert_int_equal(cJSON_GetObjectItemCaseSensitive(m, "added")->valueint, 1);
        assert_non_null(cJSON_GetObjectItemCaseSensitive(m, "worktree"));
    }
    cJSON_Delete(g);
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "group", "show", group, END);
    assert_non_null(strstr(res.out.data, "CODER"));
    assert_non_null(strstr(res.out.data, "+1 -0"));
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "show", "--json", ids[0], END);
    char *in_group = bt_xasprintf("\"group\":\"%s\"", group);
    assert_non_null(strstr(res.out.data, in_group));
    bt_test_result_release(&res);

    /* keep the first with --prune: w.txt in main, both worktrees gone */
    baton(c, &res, NULL, 0, "keep", "--prune", "--json", ids[0], END);
    assert_int_equal(res.exit_code, 0);
    cJSON *k = cJSON_Parse(res.out.data);
    assert_non_null(k);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(k, "pruned")));
    cJSON *others = cJSON_GetObjectItemCaseSensitive(k, "pruned_others");
    assert_int_equal(cJSON_GetArraySize(others), 1);
    assert_string_equal(cJSON_GetArrayItem(others, 0)->valuestring, ids[1]);
    cJSON_Delete(k);
    bt_test_result_release(&res);
    char *got = sh(c, "cd p && git show main:w.txt && cat w.txt && git worktree list | wc -l && "
                      "git branch | wc -l");
    assert_string_equal(got, "w\nw\n1\n1\n");
    free(got);
    baton(c, &res, NULL, 0, "rm", "-y", ids[1], END); /* nothing of it left to lose */
    assert_int_equal(res.exit_code, 0);
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "rm", "-y", ids[0], END);
    assert_int_equal(res.exit_code, 0);
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "group", "ls", END); /* gone with its last conversation */
    assert_string_equal(res.out.data, "");
    bt_test_result_release(&res);
    free(in_group);
    for (size_t i = 0; i < n; i++)
        free(ids[i]);
    free(group);
    free(p);
}

/* Not on a terminal: a line per coder as it ends, then the table; in a
 * shared directory, a word that they share it. */
static void test_human_and_shared(void **state)
{
    struct ctx *c = *state;
    replay(c, "text");
    struct bt_test_result res;
    baton(c, &res, NULL, 0, "run", "-c", "codex,codex", "-C", c->dir, "Say hello banana", END);
    assert_int_equal(res.exit_code, 0);
    assert_non_null(strstr(res.out.data, "codex completed "));
    assert_non_null(strstr(res.out.data, "CODER     CONVERSATION STATUS"));
    assert_non_null(strstr(res.err.data, "the 2 coders share"));
    assert_non_null(strstr(res.err.data, "baton group show"));
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "ls", END);
    size_t lines = 0;
    for (const char *q = res.out.data; *q; q++)
        lines += *q == '\n';
    assert_int_equal(lines, 2);
    bt_test_result_release(&res);
}

/* An unknown coder or an empty name: exit 2, nothing made. One that is
 * not installed: the others run; its exit code, its reason on stderr. */
static void test_bad_coders(void **state)
{
    struct ctx *c = *state;
    replay(c, "text");
    const char *bad[] = {"codex,nope", "codex,,codex", "codex,", ",codex"};
    struct bt_test_result res;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        baton(c, &res, NULL, 0, "run", "-c", bad[i], "-C", c->dir, "hi", END);
        assert_int_equal(res.exit_code, 2);
        bt_test_result_release(&res);
    }
    baton(c, &res, NULL, 0, "ls", END);
    assert_string_equal(res.out.data, "");
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "group", "ls", END);
    assert_string_equal(res.out.data, "");
    bt_test_result_release(&res);

    baton(c, &res, NULL, 0, "run", "-c", "codex,codex", "--worktree", "--branch", "b", "-C", c->dir,
          "hi", END);
    assert_int_equal(res.exit_code, 2);
    assert_non_null(strstr(res.err.data, "--branch names one branch"));
    bt_test_result_release(&res);

    setenv_kv(c, "BATON_PI_BIN=/nonexistent/pi");
    baton(c, &res, NULL, 0, "run", "-c", "pi,pi", "-C", c->dir, "Say hello banana", END);
    assert_int_equal(res.exit_code, 3);
    assert_null(strstr(res.err.data, "group ")); /* none started: no group */
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "group", "ls", "--json", END);
    assert_string_equal(res.out.data, "");
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "run", "-c", "codex,pi", "-C", c->dir, "Say hello banana", END);
    assert_int_equal(res.exit_code, 3);
    assert_non_null(strstr(res.err.data, "baton: pi: "));
    assert_non_null(strstr(res.out.data, "codex completed"));
    bt_test_result_release(&res);
}

/* keep --prune drops the other results, but not a worktree the user moved
 * or locked: those are kept and said. */
static void test_prune_spares_the_users(void **state)
{
    struct ctx *c = *state;
    repo_and_coder(c);
    edits(c, "echo w > w.txt\n");
    char *p = path_in(c, "p");
    struct bt_test_result res;
    baton(c, &res, NULL, 0, "run", "-c", "codex,codex,codex", "--worktree", "--json", "-C", p,
          "Say hello banana", END);
    assert_int_equal(res.exit_code, 0);
    char *ids[8] = {NULL};
    size_t n;
    conversations_of(res.out.data, ids, &n);
    assert_int_equal(n, 3);
    assert_non_null(ids[2]);
    bt_test_result_release(&res);
    char *cmd = bt_xasprintf("git -C p worktree move home/worktrees/%.12s moved && git -C p "
                             "worktree lock home/worktrees/%.12s",
                             ids[1], ids[2]);
    free(sh(c, cmd));
    baton(c, &res, NULL, 0, "keep", "--prune", "--json", ids[0], END);
    assert_int_equal(res.exit_code, 0);
    assert_non_null(strstr(res.out.data, "\"pruned_others\":[]"));
    assert_non_null(strstr(res.err.data, "it was moved to"));
    assert_non_null(strstr(res.err.data, "is locked"));
    bt_test_result_release(&res);
    char *left = sh(c, "test -f p/moved/w.txt && echo kept && git -C p worktree list | wc -l");
    assert_string_equal(left, "kept\n3\n");
    free(left);
    free(cmd);
    for (size_t i = 0; i < n; i++)
        free(ids[i]);
    free(p);
}

/* --detach: the members as started, then followed by attach. */
static void test_detach(void **state)
{
    struct ctx *c = *state;
    replay(c, "text");
    struct bt_test_result res;
    baton(c, &res, NULL, 0, "run", "-c", "codex,codex", "--detach", "--json", "-C", c->dir,
          "Say hello banana", END);
    assert_int_equal(res.exit_code, 0);
    cJSON **lines = NULL;
    size_t n = bt_test_json_lines(res.out.data, &lines);
    assert_int_equal(n, 2);
    for (size_t i = 0; i < n; i++) {
        assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(lines[i], "detached")));
        struct bt_test_result a;
        baton(c, &a, NULL, 0, "attach", bt_test_jstr(lines[i], "conversation"), END);
        assert_int_equal(a.exit_code, 0);
        bt_test_result_release(&a);
    }
    bt_test_lines_free(lines, n);
    bt_test_result_release(&res);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_two_in_worktrees, setup, teardown),
        cmocka_unit_test_setup_teardown(test_human_and_shared, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_coders, setup, teardown),
        cmocka_unit_test_setup_teardown(test_detach, setup, teardown),
        cmocka_unit_test_setup_teardown(test_prune_spares_the_users, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
