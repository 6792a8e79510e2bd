/* SPDX-License-Identifier: MIT */
/*
 * cmd-ask: the inline ask of a foreground turn under --approval ask (see
 * cmd-ask.h). One request is asked at a time, oldest first; a question's
 * questions one after another, their answers given together.
 */
#include "cmd-ask.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json.h"
#include "service.h"
#include "util.h"

#define ASK_MAX 32     /* requests in line at once; more are left to `baton approve` */
#define LINE_MAX 65536 /* bytes of one typed line */

struct ask_req {
    char *id, *kind, *summary;
    cJSON *questions; /* user_input: the questions; NULL otherwise */
};

struct bt_cmd_ask {
    struct bt_store *s;
    int fd;
    FILE *err;
    char conv[BT_ID_SIZE];
    struct ask_req q[ASK_MAX]; /* in line, q[0] asked */
    size_t n;
    int asking;         /* q[0]'s prompt is shown */
    int question;       /* which question of q[0] is asked */
    cJSON *answers;     /* q[0]'s answers so far */
    struct bt_buf line; /* typed, not yet a whole line */
    int overlong;       /* a line past LINE_MAX is being dropped */
};

struct bt_cmd_ask *bt_cmd_ask_new(struct bt_store *s, int fd, FILE *err)
{
    struct bt_cmd_ask *k = bt_xcalloc(1, sizeof(*k));
    k->s = s;
    k->fd = fd;
    k->err = err;
    bt_buf_init(&k->line);
    return k;
}

static void req_release(struct ask_req *r)
{
    free(r->id);
    free(r->kind);
    free(r->summary);
    cJSON_Delete(r->questions);
}

/* Take request i out of the line. */
static void drop(struct bt_cmd_ask *k, size_t i)
{
    req_release(&k->q[i]);
    memmove(&k->q[i], &k->q[i + 1], (k->n - i - 1) * sizeof(k->q[0]));
    k->n--;
    if (i == 0) {
        k->asking = 0;
        k->question = 0;
        cJSON_Delete(k->answers);
        k->answers = NULL;
    }
}

void bt_cmd_ask_free(struct bt_cmd_ask *k)
{
    if (!k)
        return;
    while (k->n)
        drop(k, k->n - 1);
    bt_buf_release(&k->line);
    free(k);
}

static int is_question(const struct ask_req *r)
{
    return strcmp(r->kind, "user_input") == 0;
}

/* Put q[0] (its current question) to the person. */
static void ask(struct bt_cmd_ask *k)
{
    if (!k->n || k->asking)
        return;
    const struct ask_req *r = &k->q[0];
    k->asking = 1;
    if (!is_question(r)) {
        bt_term_printf(k->err,
                       "baton: the coder asks for approval (%s): %s\n"
                       "       [y] allow once, [a] allow %s requests for the rest of this turn, "
                       "[n] deny? ",
                       r->kind, r->summary ? r->summary : "", r->kind);
        fflush(k->err);
        return;
    }
    const cJSON *q = cJSON_GetArrayItem(r->questions, k->question);
    const char *text = bt_json_str(q, "text");
    bt_term_printf(k->err, "baton: the coder asks: %s\n",
                   text ? text : (r->summary ? r->summary : ""));
    const cJSON *o;
    int n = 0;
    cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(q, "options"))
    {
        const char *label = bt_json_str(o, "label"), *d = bt_json_str(o, "description");
        bt_term_printf(k->err, "       %d. %s%s%s\n", ++n, label ? label : "", d && *d ? ": " : "",
                       d && *d ? d : "");
    }
    fprintf(k->err, "       answer (%syour own words; an empty line declines): ",
            n ? "an option's number, 1,3 for several, or " : "");
    fflush(k->err);
}

void bt_cmd_ask_event(struct bt_cmd_ask *k, const struct bt_event *ev)
{
    if (!ev->request_id ||
        (ev->type != BT_EVENT_APPROVAL_REQUESTED && ev->type != BT_EVENT_APPROVAL_RESOLVED))
        return;
    char id[BT_EVENT_REQUEST_ID_MAX];
    bt_event_request_id(ev->request_id, id, sizeof(id));
    snprintf(k->conv, sizeof(k->conv), "%s", ev->conversation ? ev->conversation : "");
    if (ev->type == BT_EVENT_APPROVAL_RESOLVED) {
        for (size_t i = 0; i < k->n; i++) {
            if (strcmp(k->q[i].id, id) != 0)
                continue;
            if (i == 0 && k->asking) /* answered elsewhere, or its time ran out */
                bt_term_printf(k->err, "\nbaton: request %s was %s by %s\n", id,
                               ev->decision && strcmp(ev->decision, "accept") == 0 ? "allowed"
                                                                                   : "declined",
                               ev->by ? ev->by : "policy");
            drop(k, i);
            break;
        }
    } else if (k->n < ASK_MAX) {
        struct ask_req *r = &k->q[k->n++];
        *r = (struct ask_req){.id = bt_xstrdup(id),
                              .kind = bt_xstrdup(ev->approval_kind ? ev->approval_kind : "other"),
                              .summary = ev->summary ? bt_xstrdup(ev->summary) : NULL,
                              .questions =
                                  ev->questions_json ? cJSON_Parse(ev->questions_json) : NULL};
    }
    ask(k);
}

/* Give the decision on q[0] to the service; it goes out of the line. */
static void decide(struct bt_cmd_ask *k, int accept, int always)
{
    char *answers = k->answers && accept ? cJSON_PrintUnformatted(k->answers) : NULL;
    struct bt_service_decision d = {
        .request_id = k->q[0].id, .accept = accept, .always = always, .answers_json = answers};
    struct bt_service_decided out;
    /* no wait: the owner is this process, which delivers it on this tick */
    if (bt_service_decide(k->s, k->conv, &d, &out) != 0)
        bt_term_printf(k->err, "baton: %s\n", out.message);
    free(out.message);
    free(answers);
    drop(k, 0);
}

/* A whole line typed for q[0]. */
static void on_line(struct bt_cmd_ask *k, const char *text)
{
    struct ask_req *r = &k->q[0];
    if (!is_question(r)) {
        int c = (unsigned char)text[0];
        if (strchr("yYaAnNdD", c) && c &&
            (text[1] == '\0' || strcmp(text + 1, "es") == 0 || strcmp(text + 1, "lways") == 0 ||
             strcmp(text + 1, "o") == 0 || strcmp(text + 1, "eny") == 0))
            decide(k, c == 'y' || c == 'Y' || c == 'a' || c == 'A', c == 'a' || c == 'A');
        else {
            k->asking = 0; /* asked again */
            fprintf(k->err, "baton: type y, a or n\n");
        }
        return;
    }
    if (!*text) {
        decide(k, 0, 0);
        return;
    }
    if (!k->answers)
        k->answers = cJSON_CreateArray();
    int options =
        bt_cmd_answer_add(k->answers, cJSON_GetArrayItem(r->questions, k->question), text);
    k->asking = 0;
    if (options) { /* asked again */
        fprintf(k->err, "baton: type an option's number, 1 to %d, or words\n", options);
        return;
    }
    if (++k->question >= cJSON_GetArraySize(r->questions))
        decide(k, 1, 0);
}

/* Take the whole lines of k->line, each for q[0]. */
static void lines(struct bt_cmd_ask *k)
{
    char *nl;
    while ((nl = memchr(k->line.data, '\n', k->line.len)) != NULL) {
        *nl = '\0';
        if (nl > k->line.data && nl[-1] == '\r')
            nl[-1] = '\0';
        if (k->n)
            on_line(k, k->line.data);
        size_t used = (size_t)(nl + 1 - k->line.data);
        memmove(k->line.data, nl + 1, k->line.len - used);
        k->line.len -= used;
        k->line.data[k->line.len] = '\0';
    }
}

/* got bytes typed: to the line, or, past its bound, dropped up to the
 * line's end: a part of an over-long line is no answer, and the rest of
 * it must not become the start of the next. */
static void typed(struct bt_cmd_ask *k, const char *buf, size_t got)
{
    while (got) {
        const char *nl = memchr(buf, '\n', got);
        size_t take = nl ? (size_t)(nl + 1 - buf) : got;
        if (!k->overlong && k->line.len + take > LINE_MAX) {
            k->overlong = 1;
            bt_buf_reset(&k->line);
        }
        if (!k->overlong) {
            bt_buf_add(&k->line, buf, take);
            lines(k);
        } else if (nl) {
            k->overlong = 0;
            k->asking = 0; /* asked again */
            fprintf(k->err, "\nbaton: that line is longer than %d KiB: it answers nothing\n",
                    LINE_MAX >> 10);
        }
        buf += take;
        got -= take;
    }
}

void bt_cmd_ask_tick(struct bt_cmd_ask *k)
{
    struct pollfd p = {.fd = k->fd, .events = POLLIN};
    while (poll(&p, 1, 0) == 1 && (p.revents & POLLIN)) {
        char buf[4096];
        ssize_t got = read(k->fd, buf, sizeof(buf));
        if (got <= 0)
            break; /* the terminal went away: `baton approve` still answers */
        typed(k, buf, (size_t)got);
    }
    ask(k);
}

/* 1 if text is option numbers only: "2", "1,3" (digits and commas). */
static int numbers_only(const char *text)
{
    int digits = 0;
    for (const char *p = text;; p++) {
        if (*p >= '0' && *p <= '9') {
            digits++;
            continue;
        }
        if (!digits || (*p != ',' && *p != '\0'))
            return 0;
        if (*p == '\0')
            return 1;
        digits = 0;
    }
}

int bt_cmd_answer_add(cJSON *all, const cJSON *q, const char *text)
{
    const cJSON *opts = cJSON_GetObjectItemCaseSensitive(q, "options");
    int n = cJSON_GetArraySize(opts);
    cJSON *labels = cJSON_CreateArray();
    int ok = n > 0 && numbers_only(text);
    for (const char *p = text; ok && *p;) {
        char *end;
        long k = strtol(p, &end, 10);
        const char *label =
            k >= 1 && k <= n ? bt_json_str(cJSON_GetArrayItem(opts, (int)k - 1), "label") : NULL;
        if (!label) { /* numbers, but not of its options */
            cJSON_Delete(labels);
            return n;
        }
        cJSON_AddItemToArray(labels, cJSON_CreateString(label));
        p = *end == ',' ? end + 1 : end;
    }
    if (!ok) /* the person's own words */
        cJSON_AddItemToArray(labels, cJSON_CreateString(text));
    cJSON_AddItemToArray(all, labels);
    return 0;
}
