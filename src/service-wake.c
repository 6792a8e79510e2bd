/* SPDX-License-Identifier: MIT */
/*
 * service-wake: wake the owner of a run when a control request of it was
 * stored (service.h, bt_service_control_wake). Its own file below the
 * control handlers: the kinds' service functions (service-steer.c,
 * service-ask.c, service-cancel.c) call it, and service-control.c's table
 * calls those, so here it closes no circle.
 */
#include "channel.h"
#include "service-int.h"

int bt_service_control_wake(struct bt_store *s, const char *run)
{
    return bt_channel_wake(bt_store_home(s), run);
}
