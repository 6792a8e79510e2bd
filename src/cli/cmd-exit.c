/* SPDX-License-Identifier: MIT */
/* cmd-exit: exit codes of turns and service calls (see cmd-exit.h). */
#include "cmd-exit.h"

#include "cmd.h"
#include "service.h"

int bt_cmd_exit_turn(enum bt_turn_status status, enum bt_error_kind kind)
{
    switch (status) {
    case BT_TURN_COMPLETED: return BT_EXIT_OK;
    case BT_TURN_CANCELLED: return BT_EXIT_CANCELLED;
    case BT_TURN_FAILED:
    case BT_TURN_INTERRUPTED: break;
    }
    if (kind == BT_ERROR_KIND_NOT_INSTALLED)
        return BT_EXIT_NOT_INSTALLED;
    if (kind == BT_ERROR_KIND_AUTH_REQUIRED)
        return BT_EXIT_AUTH;
    return BT_EXIT_FAILED;
}

int bt_cmd_exit_service(const struct bt_service_outcome *out)
{
    switch (out->result) {
    case BT_SERVICE_OK: return BT_EXIT_OK;
    case BT_SERVICE_TURN: return bt_cmd_exit_turn(out->status, out->error_kind);
    case BT_SERVICE_USAGE: return BT_EXIT_USAGE;
    case BT_SERVICE_NOT_INSTALLED: return BT_EXIT_NOT_INSTALLED;
    case BT_SERVICE_CANCELLED: return BT_EXIT_CANCELLED;
    case BT_SERVICE_FAILED: break;
    }
    return BT_EXIT_FAILED;
}
