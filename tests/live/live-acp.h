/* SPDX-License-Identifier: MIT */
/*
 * live-acp: the live acceptance shared by the ACP coders (gemini, opencode,
 * copilot; docs/acp.md): each tests/live/test-live-<coder>.c describes its
 * coder in a struct bt_live_acp and runs these scenarios on the harness of
 * live.h (bt_live_setup first).
 */
#ifndef BT_LIVE_ACP_H
#define BT_LIVE_ACP_H

struct bt_live_acp {
    const char *coder;        /* "gemini" */
    const char *bin_var;      /* baton's override of its binary: "BATON_GEMINI_BIN" */
    const char *test_bin_var; /* where the test finds it: "BATON_TEST_GEMINI_BIN" */
    const char *env_script;   /* tests/live/<coder>-env.sh */
    const char *home;         /* its DIR under bt_live.dir */
    /* run options after "-c CODER" (e.g. the model), NULL-terminated */
    const char *const *opts;
    int resumes; /* 0: a later turn is refused (resume_failed), the session kept */
    /* a substring of the paths under home that hold the coder's sessions:
     * those with the first 8 of the session id in their path are compared
     * before and after a refused resume */
    const char *session_files;
    /* the 500 prompt (e.g. with [[retry-after-ms:N]] for a coder that
     * honours the header) and the env script's extra argument that makes
     * it fail at once (NULL: none) */
    const char *http500_prompt;
    const char *http500_env_arg;
    /* what the error of a model stream that fails after it began
     * ([[failed:server_error]], with http500_env_arg) holds; NULL: the
     * scenario is skipped, stream_error_skip saying why */
    const char *stream_error;
    const char *stream_error_skip;
    const char *handoff_flag; /* the resume flag of its terminal UI: "--resume=" */
    /* `baton rm`'s check by the coder's own CLI, run in bt_live.work: the
     * arguments (after the binary) of its command listing the sessions it
     * has (gemini --list-sessions: those of the project), whose output
     * must name a kept session's id and not a removed one's; NULL: by
     * find_args */
    const char *const *list_args;
    /* for a coder without a listing (copilot): the arguments resuming a
     * session for one prompt, find_flag + the id appended: exit 0 for a
     * session it has, else another status */
    const char *const *find_args;
    const char *find_flag;
    /* a substring of the paths named by a session id that rm leaves, as
     * the coder's own deletion does (copilot: its empty lock file); NULL:
     * none */
    const char *rm_leaves;
};

/* The whole live program of coder a: exits 77 (ctest: Skipped) without
 * its binary, else runs every scenario below on one harness. */
int bt_live_acp_main(const struct bt_live_acp *a);

/* A text turn: deltas, the echoed answer as final text, a session id. */
void bt_live_acp_text_turn(const struct bt_live_acp *a);
/* A second turn by `send` in a new process from another directory: resumed
 * with the first turn in the model's history; for a coder that refuses,
 * resume_failed (exit 1) and its session files unchanged. */
void bt_live_acp_send_elsewhere(const struct bt_live_acp *a);
/* A shell command under deny (declined, not run) and auto (run). */
void bt_live_acp_bash(const struct bt_live_acp *a, int allow);
/* Ctrl-C: bt_live_interrupt_scenario. */
void bt_live_acp_interrupt(const struct bt_live_acp *a);
/* HTTP 500 from the model: failed, exit 1, model_error. */
void bt_live_acp_http500(const struct bt_live_acp *a);
/* A model stream that fails after it began: failed, exit 1, model_error,
 * whether the agent answers an error, tells it as text or says nothing
 * (gemini's empty end_turn). */
void bt_live_acp_stream_error(const struct bt_live_acp *a);
/* handoff --print: the coder's command resuming the turn's session id. */
void bt_live_acp_handoff_print(const struct bt_live_acp *a);
/* Two conversations in one home; `baton rm -y` of one: the coder's own
 * CLI no longer has its session and still has the other's, and no file
 * under the coder's home has the removed session's id in its path (but
 * rm_leaves). */
void bt_live_acp_rm(const struct bt_live_acp *a);

#endif
