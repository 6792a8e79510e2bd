/* SPDX-License-Identifier: MIT */
/*
 * cmd-group: a group's conversations side by side (`baton group`, and the
 * table `baton run -c a,b,c` ends with), as the service sums them
 * (service-work.h, bt_service_member_of).
 */
#ifndef BT_CMD_GROUP_H
#define BT_CMD_GROUP_H

#include <stdio.h>

#include "service-work.h"
#include "store.h"

/* The table of v[0..n) with their rows m on f: coder, conversation,
 * status, duration, tokens, cost, files, +/-, branch. */
void bt_cmd_members_table(FILE *f, const struct bt_store_conversation *v,
                          const struct bt_service_member *m, size_t n);

#endif
