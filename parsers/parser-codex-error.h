/* SPDX-License-Identifier: MIT */
/*
 * codex parser, errors: codex's error objects ({message, codexErrorInfo,
 * additionalDetails}, in `error` notifications and in a failed turn of
 * `turn/completed`) mapped to DESIGN.md error kinds. Internal to the codex
 * parser.
 */
#ifndef BT_PARSER_CODEX_ERROR_H
#define BT_PARSER_CODEX_ERROR_H

#include <cjson/cJSON.h>

/* The error kind of err (may be NULL): an HTTP status codex names first
 * (401/403 auth_required, 429 rate_limited), then an unreachable endpoint
 * (network_error), then codexErrorInfo; model_error when nothing says
 * more. Returns a static string. */
const char *bt_codex_error_kind(const cJSON *err);

#endif
