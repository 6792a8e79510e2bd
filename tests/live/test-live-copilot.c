/* SPDX-License-Identifier: MIT */
/*
 * live copilot tests: the real GitHub Copilot CLI (pinned, from npm; path
 * in BATON_TEST_COPILOT_BIN) over ACP with a bring-your-own-key provider,
 * driven by the real baton binary against the stand-in's Chat Completions
 * (tests/live/copilot-env.sh). The scenarios are the ACP coders'
 * (live-acp.h); without a copilot the program exits 77 (ctest: Skipped).
 */
#include <stddef.h>

#include "live-acp.h"

static const char *const copilot_find[] = {"-p", "Say hi", "--no-auto-update", NULL};

static const struct bt_live_acp copilot = {
    .coder = "copilot",
    .bin_var = "BATON_COPILOT_BIN",
    .test_bin_var = "BATON_TEST_COPILOT_BIN",
    .env_script = BT_SOURCE_DIR "/tests/live/copilot-env.sh",
    .home = "copilot-home",
    .opts = NULL, /* COPILOT_MODEL of the env */
    .resumes = 1,
    .http500_prompt = "[[http500]]", /* its own 5 retries: about 16 s, no setting */
    .find_args = copilot_find,       /* no listing: --resume of a session it has not fails */
    .find_flag = "--resume=",
    /* its own /session delete leaves session-state/.session-operation-locks/<id>.lock */
    .rm_leaves = "/.session-operation-locks/",
    .stream_error = "server_error", /* "Error: … Last error: …" after 5 retries */
    .handoff_flag = "--resume=",
};

int main(void)
{
    return bt_live_acp_main(&copilot);
}
