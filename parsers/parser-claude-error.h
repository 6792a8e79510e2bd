/* SPDX-License-Identifier: MIT */
/*
 * claude parser, errors: what a failed `result`, a `system` api_retry and
 * an early exit mean as error kinds (docs/events.md). Internal to the claude
 * parser; the shapes are those of claude 2.1.332's stream-json output
 * (fixtures/claude/2.1.332).
 */
#ifndef BT_PARSER_CLAUDE_ERROR_H
#define BT_PARSER_CLAUDE_ERROR_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "parser.h"

/* The error kind of a failed result res: its api_error_status (401/403
 * auth_required, 429 rate_limited) or the `error` of the assistant message
 * before it (api_error, may be NULL: "authentication_failed",
 * "rate_limit"), then what text (the result's text, may be NULL) says:
 * prompt too long, no conversation, a connection error. model_error when
 * nothing says more; never BT_ERROR_KIND_NONE. */
enum bt_error_kind bt_claude_error_kind(const char *api_error, const cJSON *res, const char *text);

/* A system api_retry message msg (attempt, max_retries, error_status,
 * error): a retry warning (with the raw line, len bytes) and a retry
 * signal naming the attempt and its cause. No HTTP status means no answer
 * at all from the endpoint (an unreachable ANTHROPIC_BASE_URL):
 * network_error, as for the other coders. */
void bt_claude_retry(const cJSON *msg, const char *line, size_t len,
                     const struct bt_parser_sink *sink);

/* A rate_limit_event (claude 2.1.45 and later, with a subscription login;
 * shape of the Agent SDK's SDKRateLimitEvent: rate_limit_info {status,
 * rateLimitType, resetsAt (seconds since the epoch), ...}). "allowed", sent
 * on every turn, says nothing; "allowed_warning", "rejected" and any other
 * status become a `coder` warning naming the limit and when it resets. The
 * turn's own result says whether it failed. */
void bt_claude_rate_limit(const cJSON *msg, const char *line, size_t len,
                          const struct bt_parser_sink *sink);

/* The parser's diagnose op (parser.h); st is unused. */
void bt_claude_diagnose(void *st, const char *tail, size_t tail_len, int64_t exit_code, int signal,
                        enum bt_error_kind *kind, struct bt_buf *msg);

#endif
