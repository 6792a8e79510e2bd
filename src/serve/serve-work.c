/* SPDX-License-Identifier: MIT */
/*
 * serve-work: what conversations changed, and keeping it, over HTTP
 * (docs/api.md), each a call of the service (service-work.h) as the CLI's
 * diff, keep and group make: a turn's or the whole conversation's changes
 * (the files and the patch), keep, and groups.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "json.h"
#include "serve.h"
#include "service-work.h"
#include "view.h"

/* The patch a reply carries at most: a larger one is left out, said by
 * "patch_truncated" (the files and their counts are all there). */
#define PATCH_MAX ((size_t)8 << 20)

/* A turn number as the path names it: digits, 1 or more. */
static int turn_of(const char *text, int64_t *turn)
{
    size_t n = strspn(text, "0123456789");
    if (n == 0 || n > 12 || text[n] || text[0] == '0')
        return -1;
    *turn = strtoll(text, NULL, 10);
    return 0;
}

/* The diff of turn (0: every turn) of r's conversation. */
static enum MHD_Result diff(struct bt_serve_req *r, int64_t turn)
{
    const char *conv = r->conv;
    struct bt_service_diff d;
    int rc = bt_service_diff(r->srv->store, conv, turn,
                             BT_SERVICE_DIFF_CHANGES | BT_SERVICE_DIFF_PATCH, 0, &d);
    enum MHD_Result ret;
    if (rc == BT_ENOTFOUND && d.result == BT_SERVICE_USAGE) {
        ret = bt_serve_fail(r, MHD_HTTP_NOT_FOUND, "not_found", "%s", d.message);
    } else if (rc == BT_ENOTFOUND) { /* unknown, or not recorded: no changes to give */
        ret = bt_serve_fail(r, MHD_HTTP_CONFLICT, "conflict", "%s", d.message);
    } else if (rc) {
        ret = bt_serve_fail(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal", "%s", d.message);
    } else {
        struct bt_buf b = BT_BUF_INIT;
        int cut = d.patch.len > PATCH_MAX;
        bt_buf_addc(&b, '{');
        bt_json_member(&b, "conversation", conv);
        if (turn)
            bt_buf_addf(&b, ",\"turn\":%lld", (long long)turn);
        else
            bt_buf_adds(&b, ",\"turn\":null");
        bt_json_member(&b, "from", d.from);
        bt_json_member(&b, "to", d.to);
        bt_json_member(&b, "shared_dir", d.shared_dir);
        bt_buf_adds(&b, ",\"changes\":");
        bt_buf_adds(&b, d.changes);
        bt_buf_adds(&b, ",\"patch\":");
        if (cut)
            bt_buf_adds(&b, "null");
        else /* user data: a JSON string, never markup (the page shows it as text) */
            bt_json_quote(&b, d.patch.data, d.patch.len);
        bt_buf_addf(&b, ",\"patch_truncated\":%s}\n", cut ? "true" : "false");
        ret = bt_serve_reply(r, MHD_HTTP_OK, &b);
    }
    bt_service_diff_release(&d);
    return ret;
}

enum MHD_Result bt_serve_work_diff(struct bt_serve_req *r)
{
    return diff(r, 0);
}

enum MHD_Result bt_serve_work_turn_diff(struct bt_serve_req *r)
{
    int64_t turn = 0;
    if (turn_of(r->arg, &turn) != 0)
        return bt_serve_fail(r, MHD_HTTP_NOT_FOUND, "not_found",
                             "a turn is named by its number, 1 or more");
    return diff(r, turn);
}

static void kept_json(struct bt_buf *b, const struct bt_service_kept *k)
{
    bt_buf_addc(b, '{');
    bt_json_member(b, "conversation", k->conversation);
    bt_json_member(b, "branch", k->branch);
    bt_json_member(b, "base", k->base);
    bt_json_member(b, "how", bt_service_kept_how(k->kept.how));
    bt_json_member(b, "commit", k->kept.commit);
    bt_buf_addf(b, ",\"committed\":%s", k->kept.committed ? "true" : "false");
    bt_json_member(b, "checkout", k->kept.checkout);
    bt_buf_addf(b, ",\"pruned\":%s,\"pruned_others\":[", k->pruned ? "true" : "false");
    for (size_t i = 1; i < k->pruned_n; i++) { /* [0]: its own */
        if (i > 1)
            bt_buf_addc(b, ',');
        bt_json_quote(b, k->pruned_v[i].conversation, strlen(k->pruned_v[i].conversation));
    }
    bt_buf_adds(b, "],\"notes\":[");
    for (size_t i = 0; i < k->notes.n; i++) {
        if (i)
            bt_buf_addc(b, ',');
        bt_json_quote(b, k->notes.v[i], strlen(k->notes.v[i]));
    }
    bt_buf_adds(b, "]}\n");
}

enum MHD_Result bt_serve_work_keep(struct bt_serve_req *r)
{
    const char *conv = r->conv;
    int prune = 0;
    enum MHD_Result ret;
    if (bt_serve_body_keep(r, &prune, &ret) != 0)
        return ret;
    struct bt_service_kept k;
    int rc = bt_service_keep(r->srv->store, conv, prune, &k);
    if (rc == BT_EBUSY) {
        ret = bt_serve_fail(r, MHD_HTTP_CONFLICT, "busy", "%s", k.message);
    } else if (rc && k.result == BT_SERVICE_USAGE) {
        ret = bt_serve_fail(r, MHD_HTTP_CONFLICT, "conflict", "%s", k.message);
    } else if (rc) {
        ret = bt_serve_fail(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal", "%s", k.message);
    } else {
        struct bt_buf b = BT_BUF_INIT;
        kept_json(&b, &k);
        ret = bt_serve_reply(r, MHD_HTTP_OK, &b);
    }
    bt_service_kept_release(&k);
    return ret;
}

enum MHD_Result bt_serve_work_groups(struct bt_serve_req *r)
{
    struct bt_buf b = BT_BUF_INIT;
    if (bt_view_groups(r->srv->store, 0, &b) != 0) {
        bt_buf_release(&b);
        return bt_serve_fail(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal", "%s",
                             bt_store_errmsg(r->srv->store));
    }
    return bt_serve_reply(r, MHD_HTTP_OK, &b);
}

enum MHD_Result bt_serve_work_group(struct bt_serve_req *r)
{
    const char *id = r->arg;
    struct bt_service_group g = {0};
    int rc = bt_id_valid(id) ? bt_service_group_show(r->srv->store, id, &g) : BT_ENOTFOUND;
    enum MHD_Result ret;
    if (rc == BT_ENOTFOUND) {
        ret = bt_serve_fail(r, MHD_HTTP_NOT_FOUND, "not_found", "no group '%s'", id);
    } else if (rc) {
        ret = bt_serve_fail(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal", "%s",
                            bt_store_errmsg(r->srv->store));
    } else {
        struct bt_buf b = BT_BUF_INIT;
        bt_view_group(&b, &g);
        bt_buf_addc(&b, '\n');
        ret = bt_serve_reply(r, MHD_HTTP_OK, &b);
    }
    bt_service_group_release(&g);
    return ret;
}
