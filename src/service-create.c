/* SPDX-License-Identifier: MIT */
/*
 * service-create: a conversation stored before its first turn
 * (service-conv.h): `baton acp` hands a session id out at session/new and
 * stores the conversation with its first prompt. (`baton run` and POST
 * /v1/conversations store theirs with the turn: bt_service_run.)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "error.h"
#include "service-conv.h"

int bt_service_create(struct bt_store *s, const struct bt_store_conversation_new *c,
                      struct bt_service_outcome *out)
{
    const struct bt_coder *coder = bt_coder_find(c->coder);
    char *bin = coder ? bt_coder_locate(coder) : NULL;
    if (!coder) {
        out->result = BT_SERVICE_USAGE;
        out->message = bt_xasprintf("no coder '%s'", c->coder);
        return -EINVAL;
    }
    if (!bin) {
        out->result = BT_SERVICE_NOT_INSTALLED;
        out->message = bt_coder_not_installed(coder);
        return BT_ENOTINSTALLED;
    }
    free(bin);
    int rc = bt_store_conversation_create(s, c, out->conversation);
    if (rc) {
        out->result = BT_SERVICE_FAILED;
        out->message = bt_xstrdup(bt_store_errmsg(s));
        return rc;
    }
    out->result = BT_SERVICE_OK;
    return 0;
}
