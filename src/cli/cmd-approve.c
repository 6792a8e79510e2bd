/* SPDX-License-Identifier: MIT */
/*
 * cmd-approve: a person answers a running turn's approval requests and
 * questions (--approval ask) from any terminal: `baton approve CONV [ID]
 * --allow|--always|--deny` (or `--list` what waits), and `baton answer
 * CONV [--id ID] ANSWER...` / `--decline`. The service stores the decision
 * and the run's owner gives it to the coder (service-ask.c); a late answer
 * is refused with the reason.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd-args.h"
#include "cmd-ask.h"
#include "cmd-common.h"
#include "cmd.h"
#include "error.h"
#include "json.h"
#include "service.h"
#include "store.h"

/* How long approve and answer wait for the run's owner to take the answer:
 * it is woken through its channel (within 1 s should the wake be lost), so
 * this is only reached when it is busy or gone (the answer then waits
 * stored). */
#define DECIDE_WAIT_MS 5000

/* One request as `--list` prints it: its id, kind and summary, then its
 * questions with their numbered options. */
static void print_request(const struct bt_service_request *r)
{
    /* the coder's words: they cannot drive the terminal (bt_term_printf) */
    bt_term_printf(stdout, "%s\t%s\t%s\n", r->request_id, r->kind, r->summary ? r->summary : "");
    cJSON *qs = r->questions_json ? cJSON_Parse(r->questions_json) : NULL;
    const cJSON *q;
    int i = 0;
    cJSON_ArrayForEach(q, qs)
    {
        const char *text = bt_json_str(q, "text");
        bt_term_printf(stdout, "  question %d: %s\n", ++i, text ? text : "");
        const cJSON *o;
        int k = 0;
        cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(q, "options"))
        {
            const char *label = bt_json_str(o, "label");
            const char *desc = bt_json_str(o, "description");
            bt_term_printf(stdout, "    %d. %s%s%s\n", ++k, label ? label : "", desc ? ": " : "",
                           desc ? desc : "");
        }
        if (!k)
            printf("    (free text)\n");
    }
    cJSON_Delete(qs);
}

/* `--list`: what waits, as lines or one JSON array of the events. */
static int list(struct bt_store *s, const char *conv, int json)
{
    struct bt_service_requests w;
    if (bt_service_pending(s, conv, &w) != 0)
        return bt_cmd_fail(BT_EXIT_FAILED, "cannot read the turn of %s: %s", conv,
                           bt_store_errmsg(s));
    if (json) {
        fputs("[", stdout);
        for (size_t i = 0; i < w.n; i++)
            printf("%s%s", i ? "," : "", w.v[i].event_json);
        fputs("]\n", stdout);
    }
    for (size_t i = 0; !json && i < w.n; i++)
        print_request(&w.v[i]);
    if (!json && !w.n)
        fprintf(stderr, "baton: nothing of %s waits for an answer\n", conv);
    bt_service_requests_release(&w);
    return 0;
}

/* Decide through the service and say what became of it. */
static int decide(struct bt_store *s, const char *conv, struct bt_service_decision *d,
                  const char *verb)
{
    struct bt_service_decided out;
    d->wait_ms = DECIDE_WAIT_MS;
    int rc = bt_service_decide(s, conv, d, &out);
    if (rc == 0 && out.taken)
        fprintf(stderr, "baton: %s request %s of %s\n", verb, out.request_id, conv);
    else if (rc == 0)
        fprintf(stderr,
                "baton: the answer to request %s of %s is stored; the turn's owner gives it to "
                "the coder when it reads its requests\n",
                out.request_id, conv);
    else
        rc = bt_cmd_fail(rc == -EINVAL ? BT_EXIT_USAGE : BT_EXIT_FAILED, "%s", out.message);
    free(out.message);
    return rc;
}

static int open_conv(const char *text, struct bt_store **s, char conv[BT_ID_SIZE])
{
    int rc = bt_cmd_open_store(s);
    if (rc)
        return rc;
    rc = bt_cmd_resolve(*s, text, conv);
    if (rc)
        bt_store_close(*s);
    return rc;
}

static const struct bt_opt approve_opts[] = {
    {.id = 'y', .name = "allow", .help = "allow the request once"},
    {.id = 'A',
     .name = "always",
     .help = "allow it, and requests of its kind (command,\nfile_change, ...) for the rest "
             "of the turn"},
    {.id = 'n', .name = "deny", .help = "deny the request"},
    {.id = 'l', .name = "list", .help = "list what waits for an answer, with the ids"},
    {.id = 'j',
     .name = "json",
     .help = "with --list: the approval.requested events as one\nJSON array"},
    {0}};

const struct bt_cmd bt_cmd_def_approve = {
    .name = "approve",
    .run = bt_cmd_approve,
    .operands = "CONV [ID]",
    .summary = "allow or deny a running turn's approval request (--approval ask)",
    .opts = approve_opts,
    .notes = "ID is the request_id of its approval.requested event (`--list` shows what\n"
             "waits); without it, the only request waiting. The answer is stored first,\n"
             "then the turn's owner gives it to the coder. A request that was answered,\n"
             "or declined when the idle timeout passed (by \"timeout\") or the turn was\n"
             "stopped, takes no late answer (exit 1).\n"};

int bt_cmd_approve(int argc, char **argv)
{
    struct bt_args a;
    struct bt_service_decision d = {0};
    int opt, verdicts = 0, want_list = 0, json = 0;
    const char *verb = "denied";
    bt_args_init(&a, &bt_cmd_def_approve, argc, argv);
    while ((opt = bt_args_next(&a)) > 0) {
        if (opt == 'y' || opt == 'A') {
            d.accept = 1;
            d.always = opt == 'A';
            verb = opt == 'A' ? "allowed (and its kind for the rest of the turn)" : "allowed";
        }
        verdicts += opt == 'y' || opt == 'A' || opt == 'n';
        want_list |= opt == 'l';
        json |= opt == 'j';
    }
    int rc = opt < 0 ? BT_EXIT_USAGE : bt_args_end(&a);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (want_list ? verdicts != 0 : verdicts != 1)
        return bt_args_fail(&a, "give one of --allow, --always and --deny, or --list");
    if (json && !want_list)
        return bt_args_fail(&a, "--json goes with --list");
    struct bt_store *s;
    char conv[BT_ID_SIZE];
    if ((rc = open_conv(a.operands[0], &s, conv)) != 0)
        return rc;
    d.request_id = a.n_operands > 1 ? a.operands[1] : NULL;
    rc = want_list ? list(s, conv, json) : decide(s, conv, &d, verb);
    bt_store_close(s);
    return rc;
}

/* The answers of operands [first, n) to the questions of request *id,
 * or, *id NULL, of the only question waiting (*id then names it, in
 * id_buf), as JSON text (owned); NULL with *rc: BT_EXIT_FAILED when the
 * store cannot be read, BT_EXIT_USAGE (said) when an answer names an
 * option its question has not. */
static char *answers_of(struct bt_store *s, const char *conv, const char **id, char *id_buf,
                        size_t id_size, const struct bt_args *a, int first, int *rc)
{
    struct bt_service_requests w;
    *rc = BT_EXIT_FAILED;
    if (bt_service_pending(s, conv, &w) != 0)
        return NULL;
    const struct bt_service_request *r = NULL;
    size_t questions = 0;
    for (size_t i = 0; i < w.n; i++) {
        int question = strcmp(w.v[i].kind, "user_input") == 0;
        if (*id ? strcmp(w.v[i].request_id, *id) == 0 : question)
            r = &w.v[i];
        questions += question;
    }
    if (!*id && questions != 1)
        r = NULL; /* the service says what waits */
    if (r && !*id) {
        snprintf(id_buf, id_size, "%s", r->request_id);
        *id = id_buf;
    }
    cJSON *qs = r && r->questions_json ? cJSON_Parse(r->questions_json) : NULL;
    cJSON *all = cJSON_CreateArray();
    int options = 0;
    for (int i = first; i < a->n_operands && !options; i++) {
        options = bt_cmd_answer_add(all, cJSON_GetArrayItem(qs, i - first), a->operands[i]);
        if (options)
            *rc = bt_args_fail(a, "answer %d, '%s', is no option of question %d: it has 1 to %d",
                               i - first + 1, a->operands[i], i - first + 1, options);
    }
    char *text = options ? NULL : cJSON_PrintUnformatted(all);
    cJSON_Delete(all);
    cJSON_Delete(qs);
    bt_service_requests_release(&w);
    return text;
}

static const struct bt_opt answer_opts[] = {
    {.id = 'I',
     .name = "id",
     .value = "ID",
     .help = "the question's request id (default: the only\nquestion waiting)"},
    {.id = 'n', .name = "decline", .help = "refuse to answer"},
    {0}};

const struct bt_cmd bt_cmd_def_answer = {
    .name = "answer",
    .run = bt_cmd_answer,
    .operands = "CONV [ANSWER]...",
    .summary = "answer a running turn's question (--approval ask)",
    .opts = answer_opts,
    .notes = "One ANSWER per question, in order: an option's number (`baton approve CONV\n"
             "--list` numbers them), several as 1,3 where the question takes several, or\n"
             "the answer's own words.\n"};

int bt_cmd_answer(int argc, char **argv)
{
    struct bt_args a;
    struct bt_service_decision d = {.accept = 1};
    int opt;
    bt_args_init(&a, &bt_cmd_def_answer, argc, argv);
    while ((opt = bt_args_next(&a)) > 0) {
        if (opt == 'I')
            d.request_id = a.value;
        else if (opt == 'n')
            d.accept = 0;
    }
    int rc = opt < 0 ? BT_EXIT_USAGE : bt_args_end(&a);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (d.accept == (a.n_operands < 2))
        return bt_args_fail(&a, "give the answers (one per question), or --decline");
    struct bt_store *s;
    char conv[BT_ID_SIZE];
    if ((rc = open_conv(a.operands[0], &s, conv)) != 0)
        return rc;
    char id[BT_EVENT_REQUEST_ID_MAX];
    char *answers =
        d.accept ? answers_of(s, conv, &d.request_id, id, sizeof(id), &a, 1, &rc) : NULL;
    if (d.accept && !answers && rc == BT_EXIT_FAILED) {
        rc =
            bt_cmd_fail(BT_EXIT_FAILED, "cannot read the turn of %s: %s", conv, bt_store_errmsg(s));
    } else if (!d.accept || answers) {
        d.answers_json = answers;
        rc = decide(s, conv, &d, d.accept ? "answered" : "declined");
    }
    free(answers);
    bt_store_close(s);
    return rc;
}
