/* SPDX-License-Identifier: MIT */
/*
 * cmd-turn: what the commands that run turns share (cmd-turn.c, used by
 * cmd-run.c and cmd-worker.c, which do not call each other): the turn
 * options and their values, and starting a detached worker.
 */
#ifndef BT_CMD_TURN_H
#define BT_CMD_TURN_H

#include <stdint.h>

#include "service-conv.h"

/* Default --idle-timeout: a coder silent this long is stalled. */
#define BT_CMD_IDLE_TIMEOUT_MS BT_SERVICE_IDLE_TIMEOUT_MS

/* Seconds as a decimal number into ms, 0 meaning "no limit"; anything else
 * below a millisecond becomes one. -1 if s is not such a number. */
int bt_cmd_parse_seconds(const char *s, uint64_t *ms);
/* deny (or decline), auto, never; -1 otherwise. */
int bt_cmd_parse_approval(const char *s, enum bt_approval *a);
/* Apply turn option id (value in a->value) to t: 0 when id was one, 1
 * when it was not, or an exit code after printing why its value is wrong. */
struct bt_args;
int bt_cmd_turn_option(const struct bt_args *a, int id, struct bt_service_turn *t);

/* bt_service_worker_start, for the commands (service-conv.h). */
int bt_cmd_worker_start(const char *mode, const char *conv, const struct bt_service_turn *t,
                        int *notify_fd);

/* bt_service_worker_report as the commands say it: 0 with run set once
 * its turn started, or an exit code with *why (owned) saying why no turn
 * started. */
int bt_cmd_worker_report(int fd, char run[BT_ID_SIZE], char **why);

/* Start a worker and wait until its run exists; print the conversation id
 * (with json, one JSON object) and return 0, or print why the worker could
 * not start the turn and return its exit code. queued (> 0) is the message
 * the worker was to send: when no turn started, it is taken back, so a
 * failed detach leaves nothing queued. */
struct bt_store;
int bt_cmd_worker_detach(struct bt_store *s, const char *mode, const char *conv, int64_t queued,
                         const struct bt_service_turn *t, int json);

#endif
