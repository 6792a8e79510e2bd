/* SPDX-License-Identifier: MIT */
/*
 * live opencode tests: the real opencode (pinned, from npm; path in
 * BATON_TEST_OPENCODE_BIN) over ACP, driven by the real baton binary against
 * the stand-in's Chat Completions (tests/live/opencode-env.sh). The scenarios are
 * the ACP coders' (live-acp.h). Without a opencode the program exits 77
 * (ctest: Skipped).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmocka.h>

#include "live-acp.h"
#include "live.h"

/* the model as its session config option (the env's default anyway) */
static const char *const opts[] = {"--model", "baton-standin/baton-test", NULL};

static const struct bt_live_acp opencode = {
    .coder = "opencode",
    .env_script = BT_SOURCE_DIR "/tests/live/opencode-env.sh",
    .home = "opencode-home",
    .opts = opts,
    .resumes = 1,
    /* opencode retries a 5xx 5 times, 2 s to 30 s apart (about 65 s), and
     * has no setting for it; it honours retry-after-ms */
    .http500_prompt = "[[http500]] [[retry-after-ms:10]]",
    .handoff_flag = "--session=",
};

static int setup(void **state)
{
    (void)state;
    bt_live_setup("live-opencode", opencode.env_script, opencode.home, "BATON_OPENCODE_BIN",
                  getenv("BATON_TEST_OPENCODE_BIN"));
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    bt_live_teardown();
    return 0;
}

static void test_text_turn(void **state)
{
    (void)state;
    bt_live_acp_text_turn(&opencode);
}

static void test_send_from_another_directory(void **state)
{
    (void)state;
    bt_live_acp_send_elsewhere(&opencode);
}

static void test_bash_denied(void **state)
{
    (void)state;
    bt_live_acp_bash(&opencode, 0);
}

static void test_bash_auto(void **state)
{
    (void)state;
    bt_live_acp_bash(&opencode, 1);
}

static void test_interrupt_is_quick(void **state)
{
    (void)state;
    bt_live_acp_interrupt(&opencode);
}

static void test_handoff_print(void **state)
{
    (void)state;
    bt_live_acp_handoff_print(&opencode);
}

static void test_http_500(void **state)
{
    (void)state;
    bt_live_acp_http500(&opencode);
}

int main(void)
{
    const char *bin = getenv("BATON_TEST_OPENCODE_BIN");
    if (!bin || !*bin || access(bin, X_OK) != 0) {
        printf("skipped: BATON_TEST_OPENCODE_BIN does not name a opencode executable "
               "(tests/scripts/test.sh installs the pinned one)\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text_turn),
        cmocka_unit_test(test_send_from_another_directory),
        cmocka_unit_test(test_bash_denied),
        cmocka_unit_test(test_bash_auto),
        cmocka_unit_test(test_interrupt_is_quick),
        cmocka_unit_test(test_handoff_print),
        cmocka_unit_test(test_http_500),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
