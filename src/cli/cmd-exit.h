/* SPDX-License-Identifier: MIT */
/*
 * cmd-exit: the CLI's exit code for what the engine and the service report.
 * Only the CLI layer (cmd-*.c, main.c) knows exit codes (cmd.h); the turn
 * engine says how a turn ended (status, error kind) and the service what
 * became of a request (enum bt_service_result), and these map them.
 */
#ifndef BT_CMD_EXIT_H
#define BT_CMD_EXIT_H

#include "error-kind.h"
#include "event.h"

struct bt_service_outcome;

/* A finished turn's exit code: completed 0; cancelled 130; failed,
 * interrupted: 3 for not_installed, 4 for auth_required, else 1. */
int bt_cmd_exit_turn(enum bt_turn_status status, enum bt_error_kind kind);

/* The exit code of a service call: a turn that ran exits as
 * bt_cmd_exit_turn says; ok 0, usage 2, not installed 3, cancelled 130,
 * failed 1. */
int bt_cmd_exit_service(const struct bt_service_outcome *out);

#endif
