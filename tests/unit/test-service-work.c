/* SPDX-License-Identifier: MIT */
/* unit-service-work: what the fan-out takes and refuses before anything is
 * made (service-work.h): the coder list's words, and the checks of
 * bt_service_fanout, which touch no store when they refuse. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "service-work.h"
#include "util.h"

static void test_coder_list(void **state)
{
    (void)state;
    struct bt_strv v;
    assert_int_equal(bt_service_coder_list("codex,pi,claude", &v, 16), 0);
    assert_int_equal(v.n, 3);
    assert_string_equal(v.v[0], "codex");
    assert_string_equal(v.v[2], "claude");
    bt_strv_release(&v);
    assert_int_equal(bt_service_coder_list("codex", &v, 16), 0);
    assert_int_equal(v.n, 1);
    bt_strv_release(&v);
    /* an empty name anywhere, too many, one of 64 bytes or more */
    static const char *const bad[] = {"", ",", "codex,", ",codex", "codex,,pi", "a,b,c"};
    for (size_t i = 0; i < BT_ARRAY_SIZE(bad); i++) {
        assert_int_equal(bt_service_coder_list(bad[i], &v, i == 5 ? 2 : 16), -1);
        bt_strv_release(&v);
    }
    char long_name[80];
    memset(long_name, 'x', 64);
    long_name[64] = '\0';
    assert_int_equal(bt_service_coder_list(long_name, &v, 16), -1);
    bt_strv_release(&v);
    long_name[63] = '\0';
    assert_int_equal(bt_service_coder_list(long_name, &v, 16), 0);
    bt_strv_release(&v);
}

/* Refused with USAGE and a sentence, nothing made (no store is touched:
 * NULL would crash). */
static void refused(const struct bt_service_turn *t, const char *const *coders, size_t n,
                    const char *says)
{
    struct bt_service_fanout f;
    assert_int_not_equal(bt_service_fanout(NULL, t, coders, n, &f), 0);
    assert_int_equal(f.result, BT_SERVICE_USAGE);
    assert_non_null(f.message);
    assert_non_null(strstr(f.message, says));
    assert_string_equal(f.group, "");
    assert_int_equal(f.n, 0);
    bt_service_fanout_release(&f);
}

static void test_fanout_refusals(void **state)
{
    (void)state;
    struct bt_service_turn t = {.prompt = "p", .cwd = "/"};
    const char *const two[] = {"codex", "claude"};
    const char *const unknown[] = {"codex", "nosuch"};
    const char *const empty[] = {""};
    const char *many[BT_SERVICE_FANOUT_MAX + 1];
    for (size_t i = 0; i < BT_ARRAY_SIZE(many); i++)
        many[i] = "codex";
    refused(&t, two, 0, "1 to 16 coders, not 0");
    refused(&t, many, BT_ARRAY_SIZE(many), "1 to 16 coders, not 17");
    refused(&t, unknown, 2, "unknown coder 'nosuch'");
    refused(&t, empty, 1, "empty or too long");
    struct bt_service_turn branch = t;
    branch.branch = "mine";
    refused(&branch, two, 2, "each gets its own");
    struct bt_service_turn none = t;
    none.prompt = NULL;
    refused(&none, two, 2, "needs a prompt");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_coder_list),
        cmocka_unit_test(test_fanout_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
