/* SPDX-License-Identifier: MIT */
/* progress: what the idle watchdog counts (see progress.h). */
#include "progress.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

/* Bytes of a retry reason kept: a sentence or two, never a dump. */
#define REASON_MAX 400

void bt_progress_init(struct bt_progress *p)
{
    memset(p, 0, sizeof(*p));
    bt_usage_init(&p->usage);
}

static void forget_retry(struct bt_progress *p)
{
    free(p->retry_message);
    p->retry_message = NULL;
    p->retry_kind = BT_ERROR_KIND_NONE;
}

void bt_progress_release(struct bt_progress *p)
{
    forget_retry(p);
}

static int64_t count(int64_t v)
{
    return v == BT_UNKNOWN ? 0 : v;
}

/* A usage event repeats the turn's sums: only a change means a request
 * completed (pi reports the same zeros after every failed attempt). */
static int usage_changed(struct bt_progress *p, const struct bt_usage *u)
{
    const struct bt_usage *o = &p->usage;
    int changed = count(u->input_tokens) != count(o->input_tokens) ||
                  count(u->cached_input_tokens) != count(o->cached_input_tokens) ||
                  count(u->output_tokens) != count(o->output_tokens) ||
                  count(u->reasoning_tokens) != count(o->reasoning_tokens) ||
                  count(u->context_tokens) != count(o->context_tokens) ||
                  (u->cost_usd > 0 ? u->cost_usd : 0) != (o->cost_usd > 0 ? o->cost_usd : 0);
    p->usage = *u;
    return changed;
}

int bt_progress_event(struct bt_progress *p, const struct bt_event *ev)
{
    int yes;
    switch (ev->type) {
    case BT_EVENT_ITEM_STARTED:
    case BT_EVENT_ITEM_DELTA:
    case BT_EVENT_ITEM_COMPLETED:
    case BT_EVENT_APPROVAL_REQUESTED:
    case BT_EVENT_APPROVAL_RESOLVED:
    case BT_EVENT_SESSION_STARTED: yes = 1; break;
    case BT_EVENT_USAGE: yes = usage_changed(p, &ev->usage); break;
    default: yes = 0; break;
    }
    if (yes)
        forget_retry(p);
    return yes;
}

int bt_progress_signal(struct bt_progress *p, const struct bt_signal *sig)
{
    switch (sig->type) {
    case BT_SIGNAL_RESPONSE:
    case BT_SIGNAL_REQUEST:
    case BT_SIGNAL_PROGRESS: forget_retry(p); return 1;
    case BT_SIGNAL_RETRY:
        forget_retry(p);
        p->retry_kind = sig->retry.error_kind != BT_ERROR_KIND_NONE ? sig->retry.error_kind
                                                                    : BT_ERROR_KIND_MODEL_ERROR;
        p->retry_message = bt_progress_curate(
            sig->retry.message ? sig->retry.message : "the request failed", REASON_MAX);
        return 0;
    default: return 0;
    }
}

/* Where the user:password@ of a URL at s (just after "://") ends, or NULL
 * when the authority holds none. */
static const char *userinfo_end(const char *s)
{
    for (; *s && !strchr("/?# \t\r\n\"'<>", *s); s++)
        if (*s == '@')
            return s;
    return NULL;
}

char *bt_progress_curate(const char *s, size_t max)
{
    struct bt_buf b = BT_BUF_INIT;
    while (*s) {
        const char *at = strncmp(s, "://", 3) == 0 ? userinfo_end(s + 3) : NULL;
        if (at) {
            bt_buf_adds(&b, "://***");
            s = at;
            continue;
        }
        char c = *s++;
        if ((unsigned char)c < 0x20 || c == 0x7f)
            c = ' ';
        bt_buf_addc(&b, c);
    }
    size_t n = bt_utf8_cut(b.data, b.len, max);
    char *out = bt_xstrndup(b.data, n);
    bt_buf_release(&b);
    return out;
}
