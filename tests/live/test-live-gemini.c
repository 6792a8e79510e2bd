/* SPDX-License-Identifier: MIT */
/*
 * live gemini tests: the real Gemini CLI (pinned, from npm; path in
 * BATON_TEST_GEMINI_BIN) over ACP, driven by the real baton binary against
 * the stand-in's Gemini API (tests/live/gemini-env.sh). The scenarios are
 * the ACP coders' (live-acp.h). Without a gemini the program exits 77
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

static const char *const opts[] = {"--model", "baton-test", NULL};

static const struct bt_live_acp gemini = {
    .coder = "gemini",
    .env_script = BT_SOURCE_DIR "/tests/live/gemini-env.sh",
    .home = "gemini-home",
    .opts = opts,
    .resumes = 0,               /* its session/load damages the session: refused (docs/acp.md) */
    .session_files = "/chats/", /* .gemini/tmp/<project>/chats/session-*.jsonl */
    .http500_prompt = "[[http500]]",
    .http500_env_arg = "1", /* general.maxAttempts 1: its default retries for minutes */
    .handoff_flag = "--resume=",
};

static int setup(void **state)
{
    (void)state;
    bt_live_setup("live-gemini", gemini.env_script, gemini.home, "BATON_GEMINI_BIN",
                  getenv("BATON_TEST_GEMINI_BIN"));
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
    bt_live_acp_text_turn(&gemini);
}

static void test_send_refused_session_kept(void **state)
{
    (void)state;
    bt_live_acp_send_elsewhere(&gemini);
}

static void test_bash_denied(void **state)
{
    (void)state;
    bt_live_acp_bash(&gemini, 0);
}

static void test_bash_auto(void **state)
{
    (void)state;
    bt_live_acp_bash(&gemini, 1);
}

static void test_interrupt_is_quick(void **state)
{
    (void)state;
    bt_live_acp_interrupt(&gemini);
}

static void test_handoff_print(void **state)
{
    (void)state;
    bt_live_acp_handoff_print(&gemini);
}

static void test_http_500(void **state)
{
    (void)state;
    bt_live_acp_http500(&gemini);
}

int main(void)
{
    const char *bin = getenv("BATON_TEST_GEMINI_BIN");
    if (!bin || !*bin || access(bin, X_OK) != 0) {
        printf("skipped: BATON_TEST_GEMINI_BIN does not name a gemini executable "
               "(tests/scripts/test.sh installs the pinned one)\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text_turn),          cmocka_unit_test(test_send_refused_session_kept),
        cmocka_unit_test(test_bash_denied),        cmocka_unit_test(test_bash_auto),
        cmocka_unit_test(test_interrupt_is_quick), cmocka_unit_test(test_handoff_print),
        cmocka_unit_test(test_http_500),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
