/* SPDX-License-Identifier: MIT */
/*
 * codex parser, errors: codex's error objects ({message, codexErrorInfo,
 * additionalDetails}, in `error` notifications and in a failed turn of
 * `turn/completed`) mapped to error kinds (docs/events.md). Internal to the codex
 * parser.
 */
#ifndef BT_PARSER_CODEX_ERROR_H
#define BT_PARSER_CODEX_ERROR_H

#include <cjson/cJSON.h>

#include "error-kind.h"

/* The error kind of err (may be NULL): an HTTP status codex names first
 * (401/403 auth_required, 429 rate_limited), then an unreachable endpoint
 * (network_error), then codexErrorInfo; model_error when nothing says
 * more. Never BT_ERROR_KIND_NONE. */
enum bt_error_kind bt_codex_error_kind(const cJSON *err);

/* 1 when a codex error message says the thread is gone: "no rollout found
 * for thread id <id>" (thread/resume, or turn/start on a thread that never
 * ran a turn: codex-cli 0.171.0, fixtures/codex/0.171.0/resume-unknown),
 * "thread not found: <id>" (turn/start on a thread the server does not
 * hold); any case. Whatever step reports it (a response to thread/resume
 * or turn/start, an `error` notification, a failed turn), the turn is
 * resume_failed. 0 for NULL. */
int bt_codex_thread_gone(const char *message);

#endif
