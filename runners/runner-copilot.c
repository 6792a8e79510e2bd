/* SPDX-License-Identifier: MIT */
/*
 * copilot: an ACP coder (runners/runner-acp.h, docs/acp.md). What is its own:
 * the ACP command `copilot --acp --no-auto-update [--model=M]`, the
 * terminal UI resuming a session (`copilot --resume=ID`), its login
 * messages, and where its sessions are for `baton rm`: the directory
 * $COPILOT_HOME/session-state/<id>/. Checked against @github/copilot
 * 1.0.102 (`copilot --help`, `copilot help environment`, its session files).
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>

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

/* copilot's home: $COPILOT_HOME, else ~/.copilot (`copilot help
 * environment`); copilot takes a relative one relative to its working
 * directory (seen: COPILOT_HOME=~/x made ./~/x), which baton refuses. */
static int copilot_session_root(char **root, char **why)
{
    return bt_runner_home_dir("COPILOT_HOME", "", "/.copilot", root, why);
}

/* copilot 1.0.102 keeps a session as the directory
 * session-state/<session id>/ (events.jsonl, workspace.yaml, checkpoints/,
 * files/, research/), for ACP sessions as for its own; its own
 * `/session delete ID --yes` removes that directory and nothing else (it
 * leaves the empty session-state/.session-operation-locks/<id>.lock and
 * the rows of session-store.db, copilot's index of sessions, which only
 * its own modes write and baton never does). Its ids are UUIDs. */
static int copilot_session_files(const struct bt_runner_config *cfg, const char *root,
                                 struct bt_strv *files, char **why)
{
    const char *id = cfg->native_session_id;
    *why = NULL;
    if (!id)
        return 0;
    if (!bt_runner_uuid_ok(id)) {
        *why = bt_xstrdup("it is not a copilot session id (a UUID)");
        return -EINVAL;
    }
    char *dir = bt_xasprintf("%s/session-state/%s", root, id);
    struct stat st;
    if (lstat(dir, &st) == 0)
        bt_strv_pushf(files, "%s/", dir); /* of any type: bt_runner_session_file judges */
    else if (errno != ENOENT && errno != ENOTDIR) {
        free(dir);
        return -errno;
    }
    free(dir);
    return 0;
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
    .session_root = copilot_session_root,
    .session_files = copilot_session_files,
    .create = copilot_create,
};

static const struct bt_parser_ops copilot_parser = {
    BT_ACP_PARSER_OPS,
    .create = copilot_parser_create,
};

/* Where baton finds copilot's sessions (copilot_session_root). */
static const char *const copilot_env_doc[] = {
    "COPILOT_HOME",
    "copilot's home (default ~/.copilot), where `baton rm` finds the copilot session it deletes",
    NULL,
};

/* The coder's one registration: src/coders.def lists it. */
const struct bt_coder bt_coder_copilot = {
    .name = "copilot",
    .runner = &copilot_runner,
    .parser = &copilot_parser,
    .env_doc = copilot_env_doc,
};
