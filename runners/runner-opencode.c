/* SPDX-License-Identifier: MIT */
/*
 * opencode: an ACP coder (runners/runner-acp.h, docs/acp.md). What is its own:
 * the ACP command `opencode acp` (it takes no model flag: the model is the
 * session config option "model", "provider/model"), the terminal UI
 * resuming a session (`opencode --session=ID`), and its login messages.
 * Checked against opencode-ai 1.18.33 (`opencode --help`, `opencode acp
 * --help`).
 */
#include "coder.h"
#include "runner-acp.h"

static const char *const opencode_auth[] = {
    "opencode auth login",
    "ProviderAuthError",
    NULL,
};

static const struct bt_acp_profile opencode_profile = {
    .name = "opencode",
    .auth_patterns = opencode_auth,
    .auth_message = "opencode has no credentials for its provider: run `opencode auth login`",
    .model_option = "model",
};

static int opencode_build_argv(const struct bt_runner_config *cfg, struct bt_strv *argv)
{
    static const char *const fixed[] = {"acp", NULL};
    return bt_acp_argv(cfg, argv, fixed, NULL);
}

static int opencode_handoff_argv(const struct bt_runner_config *cfg, struct bt_strv *argv)
{
    return bt_acp_handoff_argv(cfg, argv, "--session");
}

static void *opencode_create(const struct bt_runner_config *cfg)
{
    return bt_acp_runner_create(cfg, &opencode_profile);
}

static void *opencode_parser_create(void)
{
    return bt_acp_parser_create(&opencode_profile);
}

static const struct bt_runner_ops opencode_runner = {
    BT_ACP_RUNNER_OPS, /* version: `opencode --version`: "1.18.33" */
    .bin_name = "opencode",
    .bin_env = "BATON_OPENCODE_BIN",
    .build_argv = opencode_build_argv,
    .handoff_argv = opencode_handoff_argv,
    .create = opencode_create,
};

static const struct bt_parser_ops opencode_parser = {
    BT_ACP_PARSER_OPS,
    .create = opencode_parser_create,
};

/* The coder's one registration: src/coders.def lists it. No session_root:
 * opencode keeps its sessions in its own database, not as files baton
 * could remove alone: `baton rm` leaves opencode's session alone
 * (docs/acp.md). */
const struct bt_coder bt_coder_opencode = {
    .name = "opencode",
    .runner = &opencode_runner,
    .parser = &opencode_parser,
};
