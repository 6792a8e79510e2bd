/* SPDX-License-Identifier: MIT */
/*
 * live opencode tests: the real opencode (pinned, from npm; path in
 * BATON_TEST_OPENCODE_BIN) over ACP, driven by the real baton binary
 * against the stand-in's Chat Completions (tests/live/opencode-env.sh).
 * The scenarios are the ACP coders' (live-acp.h); without an opencode the
 * program exits 77 (ctest: Skipped).
 */
#include <stddef.h>

#include "live-acp.h"

/* the model as its session config option (the env's default anyway) */
static const char *const opts[] = {"--model", "baton-standin/baton-test", NULL};

static const char *const opencode_list[] = {"session", "list", NULL};

static const struct bt_live_acp opencode = {
    .coder = "opencode",
    .bin_var = "BATON_OPENCODE_BIN",
    .test_bin_var = "BATON_TEST_OPENCODE_BIN",
    .env_script = BT_SOURCE_DIR "/tests/live/opencode-env.sh",
    .home = "opencode-home",
    .opts = opts,
    .resumes = 1,
    /* opencode retries a 5xx 5 times, 2 s to 30 s apart (about 65 s), and
     * has no setting for it; it honours retry-after-ms */
    .http500_prompt = "[[http500]] [[retry-after-ms:10]]",
    .list_args = opencode_list,
    /* retried for about 65 s, 2 s to 30 s apart: a 200 response carries
     * no retry-after-ms to cut it (recording stream-error, 68 s) */
    .stream_error_skip = "its own retries of a failed stream take about 65 s",
    .handoff_flag = "--session=",
};

int main(void)
{
    return bt_live_acp_main(&opencode);
}
