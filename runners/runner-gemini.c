/* SPDX-License-Identifier: MIT */
/*
 * gemini: an ACP coder (runners/runner-acp.h, docs/acp.md). What is its own:
 * the ACP command `gemini --acp [--model=M]`, the terminal UI resuming a session
 * (`gemini --resume=ID`: a session id of the current project, gemini-cli
 * 0.61.0 `--help` and its sessionUtils), and its login messages. Checked
 * against @google/gemini-cli 0.61.0.
 */
#include "coder.h"
#include "runner-acp.h"

static const char *const gemini_auth[] = {
    "Please set an Auth method",
    "Invalid auth method",
    "GEMINI_API_KEY",
    NULL,
};

static const struct bt_acp_profile gemini_profile = {
    .name = "gemini",
    .auth_patterns = gemini_auth,
    .auth_message = "gemini is not logged in: run `gemini` and sign in, or set GEMINI_API_KEY",
    /* gemini-cli 0.61.0's session/load resets the session it loads when
     * run in the minute the session file was opened, and otherwise leaves
     * a second file with the same id that gemini's session cleanup, at its
     * next start, deletes together with the good one (fixtures/gemini/
     * 0.61.0 resume*.files.txt; docs/acp.md "gemini and resume"). */
    .resume_refusal = "cannot continue a session over ACP without damaging it (gemini-cli's "
                      "session/load resets or later deletes the stored session): continue it "
                      "in gemini's own terminal UI with `baton handoff`",
};

static int gemini_build_argv(const struct bt_runner_config *cfg, struct bt_strv *argv)
{
    static const char *const fixed[] = {"--acp", NULL};
    return bt_acp_argv(cfg, argv, fixed, "--model");
}

static int gemini_handoff_argv(const struct bt_runner_config *cfg, struct bt_strv *argv)
{
    return bt_acp_handoff_argv(cfg, argv, "--resume");
}

static void *gemini_create(const struct bt_runner_config *cfg)
{
    return bt_acp_runner_create(cfg, &gemini_profile);
}

static void *gemini_parser_create(void)
{
    return bt_acp_parser_create(&gemini_profile);
}

static const struct bt_runner_ops gemini_runner = {
    BT_ACP_RUNNER_OPS, /* version: `gemini --version`: "0.61.0" */
    .bin_name = "gemini",
    .bin_env = "BATON_GEMINI_BIN",
    .build_argv = gemini_build_argv,
    .handoff_argv = gemini_handoff_argv,
    .create = gemini_create,
};

static const struct bt_parser_ops gemini_parser = {
    BT_ACP_PARSER_OPS,
    .create = gemini_parser_create,
};

/* The coder's one registration: src/coders.def lists it. No session_root:
 * gemini keeps a session as files named by a prefix of its id under a
 * per-project directory, with artifacts beside it, and offers deletion
 * only by list index (`--delete-session N`): `baton rm` leaves gemini's
 * session alone (docs/acp.md). */
const struct bt_coder bt_coder_gemini = {
    .name = "gemini",
    .runner = &gemini_runner,
    .parser = &gemini_parser,
};
