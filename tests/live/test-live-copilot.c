/* SPDX-License-Identifier: MIT */
/*
 * live copilot tests: the real GitHub Copilot CLI (pinned, from npm; path in
 * BATON_TEST_COPILOT_BIN) over ACP, driven by the real baton binary against
 * the stand-in's Chat Completions (tests/live/copilot-env.sh). The scenarios are
 * the ACP coders' (live-acp.h). Without a copilot the program exits 77
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

static const char *const *const opts = NULL; /* COPILOT_MODEL of the env */

static const struct bt_live_acp copilot = {
    .coder = "copilot",
    .env_script = BT_SOURCE_DIR "/tests/live/copilot-env.sh",
    .home = "copilot-home",
    .opts = opts,
    .resumes = 1,
    .http500_prompt = "[[http500]]", /* its own 5 retries: about 16 s, no setting */
    .handoff_flag = "--resume=",
};

static int setup(void **state)
{
    (void)state;
    bt_live_setup("live-copilot", copilot.env_script, copilot.home, "BATON_COPILOT_BIN",
                  getenv("BATON_TEST_COPILOT_BIN"));
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
    bt_live_acp_text_turn(&copilot);
}

static void test_send_from_another_directory(void **state)
{
    (void)state;
    bt_live_acp_send_elsewhere(&copilot);
}

static void test_bash_denied(void **state)
{
    (void)state;
    bt_live_acp_bash(&copilot, 0);
}

static void test_bash_auto(void **state)
{
    (void)state;
    bt_live_acp_bash(&copilot, 1);
}

static void test_interrupt_is_quick(void **state)
{
    (void)state;
    bt_live_acp_interrupt(&copilot);
}

static void test_handoff_print(void **state)
{
    (void)state;
    bt_live_acp_handoff_print(&copilot);
}

static void test_http_500(void **state)
{
    (void)state;
    bt_live_acp_http500(&copilot);
}

int main(void)
{
    const char *bin = getenv("BATON_TEST_COPILOT_BIN");
    if (!bin || !*bin || access(bin, X_OK) != 0) {
        printf("skipped: BATON_TEST_COPILOT_BIN does not name a copilot executable "
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
