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

#endif
