/* SPDX-License-Identifier: MIT */
/*
 * pi parser, errors: what pi's error texts and early exits mean as error
 * kinds (docs/events.md). Internal to the pi parser; the texts are those
 * of pi 0.73.1 and 1.x in `--mode rpc` (fixtures/pi, docs/pi.md).
 */
#ifndef BT_PARSER_PI_ERROR_H
#define BT_PARSER_PI_ERROR_H

#include <stdint.h>

#include "parser.h"

/* The error kind of pi's error text msg (an assistant message's
 * errorMessage, may be NULL): context_exceeded, network_error (an
 * unreachable endpoint, checked before any HTTP status so that a port
 * does not read as one), rate_limited (429), auth_required (401, 403, no
 * API key); model_error otherwise. Never BT_ERROR_KIND_NONE. */
enum bt_error_kind bt_pi_error_kind(const char *msg);

/* Why pi exited before the turn ended: its stderr tail (may be NULL), its
 * exit code or the signal that ended it, and the last error message the
 * parser saw (may be NULL). Sets *kind and appends a sentence for the user
 * to msg. */
void bt_pi_diagnose(const char *tail, int64_t exit_code, int signal, const char *error_message,
                    enum bt_error_kind *kind, struct bt_buf *msg);

#endif
