/* SPDX-License-Identifier: MIT */
/*
 * ACP parser: the read side of an Agent Client Protocol agent (protocol
 * version 1), shared by every ACP coder; each coder's struct
 * bt_parser_ops names these functions and its own create, which calls
 * bt_acp_parser_create with its profile.
 *
 * Protocol source: @agentclientprotocol/sdk 2.4.0, schema/v1/schema.json
 * (SessionNotification, SessionUpdate and its kinds, ContentChunk,
 * ToolCall, ToolCallUpdate, ToolKind, ToolCallStatus, Plan, UsageUpdate,
 * PromptResponse.stopReason, StopReason, RequestPermissionRequest,
 * ErrorCode) and schema/v1/schema.unstable.json (PromptResponse.usage);
 * https://agentclientprotocol.com/protocol/v1/prompt-turn. The mapping
 * to events: docs/acp.md.
 *
 * Lines are JSON-RPC 2.0 messages: "method" and "id" is a request from
 * the agent, "method" alone a notification, "id" alone a response to one
 * of the runner's requests (fixed ids, runners/runner-acp.h). Routed by
 * "method", never by id: the agent's request ids can equal baton's.
 * - Responses 1 (initialize), 2 (session setup) and 4 (the model's
 *   config option) become RESPONSE signals with result_json; session updates that come before
 * response 2 are dropped (session/load replays the history as updates before it answers; it is not
 * new output).
 * - Response 3 (session/prompt) ends the turn: a TURN_END from its
 *   stopReason, or failed with an error kind from its error.
 * - session/request_permission becomes approval.requested and a REQUEST
 *   signal (approval_kind set); any other request a REQUEST without one,
 *   which the runner answers with an error.
 */
#ifndef BT_PARSER_ACP_H
#define BT_PARSER_ACP_H

#include "parser.h"

/* What is an ACP coder's own, beside its argv (its bt_runner_ops): read by
 * the generic runner and parser. Static data of the coder's file. */
struct bt_acp_profile {
    const char *name; /* "gemini": names the coder in messages */
    /* Substrings of the agent's stderr that mean it is not logged in (no
     * credentials, no auth method chosen), NULL-terminated; NULL: none. */
    const char *const *auth_patterns;
    /* The sentence of an auth_required failure: what to do about it. */
    const char *auth_message;
    /* The session config option that picks the model (session/
     * set_config_option {sessionId, configId, value}, schema.json
     * SetSessionConfigOptionRequest), for an agent whose ACP command
     * takes no model flag (opencode: "model"); NULL: the model is in the
     * argv the coder's build_argv makes. */
    const char *model_option;
    /* 1: the agent reports a failed model request only as message text
     * (copilot 1.0.102: "Info: … Retrying..." chunks per retry, then one
     * chunk "Error: …" and stopReason end_turn without usage; see
     * docs/acp.md "Failures told as text"). */
    int prose_errors;
    /* Non-NULL: a later turn is refused with this resume_failed sentence
     * before any session request, because the agent's session/load damages
     * the stored session (gemini 0.61.0, docs/acp.md). Read by the runner. */
    const char *resume_refusal;
};

void *bt_acp_parser_create(const struct bt_acp_profile *p);
void bt_acp_parser_destroy(void *st);
void bt_acp_parser_line(void *st, char *line, size_t len, const struct bt_parser_sink *sink);
/* The parser's finish op: the output ended. A chunk still held (profile
 * prose_errors) is emitted as it would be before anything else, the
 * message being streamed completed. */
void bt_acp_parser_finish(void *st, const struct bt_parser_sink *sink);
void bt_acp_parser_diagnose(void *st, const char *stderr_tail, size_t stderr_len, int64_t exit_code,
                            int signal, enum bt_error_kind *kind, struct bt_buf *msg);
/* The parser's explain op (parser.h): the last line of stderr_tail that
 * reads as an error (it names a known kind, or says "error" or
 * "failed"), cut to 300 bytes, and its kind when it names one. */
void bt_acp_parser_explain(void *st, const char *stderr_tail, size_t stderr_len,
                           enum bt_error_kind *kind, struct bt_buf *msg);

/* parser-acp-error.c: the error kind of a JSON-RPC error object an agent
 * answered with (ErrorCode -32000 is auth_required; the rest by its
 * message and data: rate limits, context, network), or of a line of its
 * stderr; BT_ERROR_KIND_MODEL_ERROR when nothing says more. err may be
 * NULL. */
struct cJSON;
enum bt_error_kind bt_acp_error_kind(const struct bt_acp_profile *p, const struct cJSON *err);
/* The same for text (an error message, a stderr tail): NONE when it says
 * nothing known. */
enum bt_error_kind bt_acp_text_kind(const struct bt_acp_profile *p, const char *text);

#endif
