/* SPDX-License-Identifier: MIT */
/*
 * live gemini tests: the real Gemini CLI (pinned, from npm; path in
 * BATON_TEST_GEMINI_BIN) over ACP, driven by the real baton binary against
 * the stand-in's Gemini API (tests/live/gemini-env.sh). The scenarios are
 * the ACP coders' (live-acp.h); without a gemini the program exits 77
 * (ctest: Skipped).
 */
#include <stddef.h>

#include "live-acp.h"

static const char *const opts[] = {"--model", "baton-test", NULL};

static const char *const gemini_list[] = {"--list-sessions", NULL};

static const struct bt_live_acp gemini = {
    .coder = "gemini",
    .bin_var = "BATON_GEMINI_BIN",
    .test_bin_var = "BATON_TEST_GEMINI_BIN",
    .env_script = BT_SOURCE_DIR "/tests/live/gemini-env.sh",
    .home = "gemini-home",
    .opts = opts,
    .resumes = 0,               /* its session/load damages the session: refused (docs/acp.md) */
    .session_files = "/chats/", /* .gemini/tmp/<project>/chats/session-*-<id8>.jsonl */
    .http500_prompt = "[[http500]]",
    .http500_env_arg = "1",   /* general.maxAttempts 1: its default retries for minutes */
    .list_args = gemini_list, /* the sessions of the project (run in its directory) */
    /* gemini-cli answers a stream it found invalid with an empty end_turn */
    .stream_error = "without any answer",
    .handoff_flag = "--resume=",
};

int main(void)
{
    return bt_live_acp_main(&gemini);
}
