/* SPDX-License-Identifier: MIT */
/*
 * ACP runner: baton as the client of an Agent Client Protocol agent (ACP
 * protocol version 1: JSON-RPC 2.0, one message per line on the agent's
 * stdio). One generic write side for every ACP coder (gemini, opencode,
 * copilot); what is a coder's own is its struct bt_acp_profile and a few
 * ops of its struct bt_runner_ops (argv, handoff, version parse), in its
 * own runners/runner-<coder>.c; the profile struct is in parsers/parser-acp.h
 * (docs/architecture.md, "Adding a coder").
 *
 * Protocol source: the JSON schema of @agentclientprotocol/sdk 2.4.0
 * (schema/v1/schema.json: InitializeRequest/Response, AgentCapabilities,
 * SessionCapabilities.resume, NewSessionRequest, LoadSessionRequest,
 * ResumeSessionRequest, PromptRequest/Response, CancelNotification,
 * RequestPermissionRequest/Response) and
 * https://agentclientprotocol.com/protocol/v1/ (initialization,
 * session-setup, prompt-turn). Mapping and policy: docs/acp.md.
 *
 * Client requests, with fixed ids so recorded fixtures replay by id and the
 * parser (parsers/parser-acp.h) knows which response ends the turn:
 *   1 initialize {protocolVersion:1, clientInfo, clientCapabilities:
 *     {fs:{readTextFile:false, writeTextFile:false}, terminal:false}}
 *   2 session/new {cwd, mcpServers:[]} on a first turn; on a later turn
 *     session/resume {sessionId, cwd, mcpServers:[]} when the agent offers
 *     agentCapabilities.sessionCapabilities.resume (no replay), else
 *     session/load {sessionId, cwd, mcpServers:[]} when it offers
 *     agentCapabilities.loadSession (history replayed as session/update
 *     before the answer: the parser drops it), else resume_failed
 *   4 session/set_config_option {sessionId, configId, value: model} when
 *     a model is asked for and the profile picks it so (model_option)
 *   3 session/prompt {sessionId, prompt:[{type:"text", text}]}: its
 *     response {stopReason} ends the turn
 * Interrupt: the session/cancel {sessionId} notification (no id), then
 * the engine's TERM/KILL. Requests from the agent: session/request_permission
 * is answered by policy from the options it offers (deny: a reject_once
 * option, auto: allow_once, after a cancel: outcome cancelled); every other
 * method gets the JSON-RPC error -32601, since baton advertises no fs or
 * terminal capability.
 */
#ifndef BT_RUNNER_ACP_H
#define BT_RUNNER_ACP_H

#include "parser-acp.h"
#include "runner.h"

enum {
    BT_ACP_ID_INITIALIZE = 1,
    BT_ACP_ID_SESSION = 2, /* session/new, session/load or session/resume */
    BT_ACP_ID_PROMPT = 3,
    BT_ACP_ID_MODEL = 4, /* session/set_config_option, before the prompt */
};

/* The generic runner ops: a coder's bt_runner_ops names these, and its
 * own create, which calls bt_acp_runner_create with its profile. */
void *bt_acp_runner_create(const struct bt_runner_config *cfg, const struct bt_acp_profile *p);
void bt_acp_runner_destroy(void *st);
void bt_acp_runner_start(void *st, struct bt_buf *out);
void bt_acp_runner_on_signal(void *st, const struct bt_signal *sig, struct bt_buf *out,
                             const struct bt_parser_sink *sink);
int bt_acp_runner_interrupt(void *st, struct bt_buf *out);
void bt_acp_runner_answer(void *st, const struct bt_signal_request *rq,
                          const struct bt_runner_decision *d, struct bt_buf *out,
                          const struct bt_parser_sink *sink);
/* An elicitation form's answers checked (runner.h answer_problem). */
char *bt_acp_runner_answer_problem(const struct bt_signal_request *rq, const char *answers_json);

/* The members of an ACP coder's struct bt_runner_ops and struct
 * bt_parser_ops that are the family's, for their initializers; the coder
 * adds bin_name, bin_env, build_argv, handoff_argv and its two creates. */
#define BT_ACP_RUNNER_OPS                                                                          \
    .stdin_pipe = 1, .parse_version = bt_acp_parse_version, .destroy = bt_acp_runner_destroy,      \
    .start = bt_acp_runner_start, .on_signal = bt_acp_runner_on_signal,                            \
    .interrupt = bt_acp_runner_interrupt, .answer = bt_acp_runner_answer,                          \
    .answer_problem = bt_acp_runner_answer_problem
#define BT_ACP_PARSER_OPS                                                                          \
    .destroy = bt_acp_parser_destroy, .line = bt_acp_parser_line,                                  \
    .diagnose = bt_acp_parser_diagnose, .explain = bt_acp_parser_explain,                          \
    .finish = bt_acp_parser_finish

/* The argv every ACP coder's build_argv makes: fixed (NULL-terminated:
 * the ACP flag or subcommand), then "<model_flag>=<model>" when a model is
 * asked for and model_flag is not NULL. Returns 0, or -EINVAL for a
 * session id or model that could become a flag. */
int bt_acp_argv(const struct bt_runner_config *cfg, struct bt_strv *argv, const char *const *fixed,
                const char *model_flag);

/* The handoff argv of a terminal UI that resumes a session with
 * "<resume_flag>=<id>" and takes "--model=<model>". Returns 0; -ENOENT
 * without a session; -EINVAL for a session or model that could become a
 * flag. */
int bt_acp_handoff_argv(const struct bt_runner_config *cfg, struct bt_strv *argv,
                        const char *resume_flag);

/* A version in `<bin> --version` (the first dotted number: "0.61.0",
 * "GitHub Copilot CLI 1.0.102."): the parse_version op of every ACP
 * coder. Returns 0, or BT_EPROTO. */
int bt_acp_parse_version(const char *text, char **version);

#endif
