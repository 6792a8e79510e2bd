/* SPDX-License-Identifier: MIT */
/*
 * opencode: an ACP coder (runners/runner-acp.h, docs/acp.md). What is its own:
 * the ACP command `opencode acp` (it takes no model flag: the model is the
 * session config option "model", "provider/model"), the terminal UI
 * resuming a session (`opencode --session=ID`), its login messages, and
 * the deletion of a session for `baton rm` by opencode's own `opencode
 * session delete ID` (opencode keeps its sessions in its SQLite database,
 * $XDG_DATA_HOME/opencode/opencode.db, which baton never writes). Checked
 * against opencode-ai 1.18.33 (`opencode --help`, `opencode acp --help`,
 * `opencode session delete --help`).
 */
#include <ctype.h>
#include <errno.h>
#include <string.h>

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

/* 1 if id is an opencode session id: "ses_" and letters and digits
 * (opencode 1.18.33 names them so, e.g. ses_dca8e5215ffexw7mD4DSwpRuO0). */
static int session_id_ok(const char *id)
{
    if (!bt_runner_id_ok(id) || strncmp(id, "ses_", 4) != 0 || !id[4])
        return 0;
    for (const char *c = id + 4; *c; c++)
        if (!isalnum((unsigned char)*c))
            return 0;
    return 1;
}

/* `opencode session delete ID` (positional: yargs takes no `--` before
 * it, so the id is checked instead). It finds the session from any
 * directory, whatever project it is of. */
static int opencode_delete_session_argv(const struct bt_runner_config *cfg, struct bt_strv *argv,
                                        char **why)
{
    const char *id = cfg->native_session_id;
    *why = NULL;
    if (!id)
        return -ENOENT;
    if (!session_id_ok(id)) {
        *why = bt_xstrdup("it is not an opencode session id (ses_…)");
        return -EINVAL;
    }
    bt_strv_push(argv, "session");
    bt_strv_push(argv, "delete");
    bt_strv_push(argv, id);
    return 0;
}

/* Its end (1.18.33): exit 0 and "Session ID deleted"; exit 1 and
 * "Error: Session not found: ID" for a session it does not have. */
static int opencode_delete_session_status(int status, const char *output)
{
    if (status == 0)
        return 0;
    return status == 1 && strstr(output, "Session not found") ? -ENOENT : -EIO;
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
    .delete_session_argv = opencode_delete_session_argv,
    .delete_session_status = opencode_delete_session_status,
    .create = opencode_create,
};

static const struct bt_parser_ops opencode_parser = {
    BT_ACP_PARSER_OPS,
    .create = opencode_parser_create,
};

/* The coder's one registration: src/coders.def lists it. */
const struct bt_coder bt_coder_opencode = {
    .name = "opencode",
    .runner = &opencode_runner,
    .parser = &opencode_parser,
};
