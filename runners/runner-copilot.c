/* SPDX-License-Identifier: MIT */
/*
 * copilot: an ACP coder (runners/runner-acp.h, docs/acp.md). What is its own:
 * the ACP command `copilot --acp --no-auto-update [--model=M]`, the
 * terminal UI resuming a session (`copilot --resume=ID`), and its login
 * messages. Checked against @github/copilot 1.0.102 (`copilot --help`).
 */
#include "coder.h"
#include "runner-acp.h"

static const char *const copilot_auth[] = {
    "Offline mode requires a local model provider",
    "not logged in",
    "/login",
    NULL,
};

static const struct bt_acp_profile copilot_profile = {
    .name = "copilot",
    .auth_patterns = copilot_auth,
    .auth_message = "copilot is not logged in: run `copilot` and /login, or configure a model "
                    "provider (COPILOT_PROVIDER_BASE_URL)",
    .prose_errors = 1, /* fixtures/copilot/1.0.102 http500, http401, … */
};

static int copilot_build_argv(const struct bt_runner_config *cfg, struct bt_strv *argv)
{
    static const char *const fixed[] = {"--acp", "--no-auto-update", NULL};
    return bt_acp_argv(cfg, argv, fixed, "--model");
}

static int copilot_handoff_argv(const struct bt_runner_config *cfg, struct bt_strv *argv)
{
    return bt_acp_handoff_argv(cfg, argv, "--resume");
}

static void *copilot_create(const struct bt_runner_config *cfg)
{
    return bt_acp_runner_create(cfg, &copilot_profile);
}

static void *copilot_parser_create(void)
{
    return bt_acp_parser_create(&copilot_profile);
}

static const struct bt_runner_ops copilot_runner = {
    BT_ACP_RUNNER_OPS, /* version: "GitHub Copilot CLI 1.0.102." */
    .bin_name = "copilot",
    .bin_env = "BATON_COPILOT_BIN",
    .build_argv = copilot_build_argv,
    .handoff_argv = copilot_handoff_argv,
    .create = copilot_create,
};

static const struct bt_parser_ops copilot_parser = {
    BT_ACP_PARSER_OPS,
    .create = copilot_parser_create,
};

/* The coder's one registration: src/coders.def lists it. No session_root:
 * baton has not verified which files under COPILOT_HOME make one session,
 * so `baton rm` leaves copilot's session alone (docs/acp.md). */
const struct bt_coder bt_coder_copilot = {
    .name = "copilot",
    .runner = &copilot_runner,
    .parser = &copilot_parser,
};
