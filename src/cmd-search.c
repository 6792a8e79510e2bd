/* SPDX-License-Identifier: MIT */
/*
 * cmd-search: `baton search WORD...` finds the conversations whose title or
 * one of whose messages holds every word (bt_store_search: full-text, the
 * words taken literally), newest activity first, each with an excerpt of
 * its best-matching message. Exits like grep: 0 when something matched, 1
 * when nothing did.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "error.h"
#include "store.h"

#define DEFAULT_LIMIT 50
#define MAX_LIMIT 1000000

static void print_json(const struct bt_store_search_hit *h)
{
    const struct bt_store_conversation *c = &h->conv;
    struct bt_buf b = BT_BUF_INIT;
    char ts[32];
    bt_buf_addc(&b, '{');
    bt_json_member(&b, "id", c->id);
    bt_json_member(&b, "title", c->title);
    bt_json_member(&b, "coder", c->coder);
    bt_json_member(&b, "status", bt_store_conv_status_name(c->status));
    bt_json_member(&b, "last_run_state",
                   c->last_run[0] ? bt_store_run_state_name(c->last_run_state) : NULL);
    bt_time_rfc3339(c->updated_ms, ts);
    bt_json_member(&b, "updated", ts);
    bt_json_member(&b, "snippet", h->snippet);
    bt_buf_adds(&b, "}\n");
    fputs(b.data, stdout);
    bt_buf_release(&b);
}

/* The line `baton ls` prints, then the snippet indented on the next line. */
static void print_human(const struct bt_store_search_hit *h)
{
    bt_cmd_print_conversation(&h->conv);
    if (h->snippet && *h->snippet) {
        fputs("    ", stdout);
        bt_term_write(stdout, h->snippet, strlen(h->snippet));
        putchar('\n');
    }
}

/* A positive integer up to MAX_LIMIT, or 0. */
static size_t parse_limit(const char *text)
{
    size_t v = 0;
    if (!text || !*text)
        return 0;
    for (const char *p = text; *p; p++) {
        if (*p < '0' || *p > '9' || v > MAX_LIMIT)
            return 0;
        v = v * 10 + (size_t)(*p - '0');
    }
    return v <= MAX_LIMIT ? v : 0;
}

int bt_cmd_search(int argc, char **argv)
{
    static const struct option opts[] = {{"json", no_argument, NULL, 'j'},
                                         {"limit", required_argument, NULL, 'n'},
                                         {"help", no_argument, NULL, 'h'},
                                         {0}};
    int json = 0, c;
    size_t limit = DEFAULT_LIMIT;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c == 'j') {
            json = 1;
        } else if (c == 'n') {
            if ((limit = parse_limit(optarg)) == 0) {
                bt_fail(BT_EXIT_USAGE, "--limit takes a number from 1 to %d, not '%s'", MAX_LIMIT,
                        optarg);
                return bt_usage(argv[0]);
            }
        } else {
            return c == 'h' ? bt_help(argv[0]) : bt_bad_option(argv);
        }
    }
    if (optind == argc)
        return bt_usage(argv[0]);
    struct bt_buf text = BT_BUF_INIT;
    for (int i = optind; i < argc; i++) {
        if (i > optind)
            bt_buf_addc(&text, ' ');
        bt_buf_adds(&text, argv[i]);
    }
    /* the store checks these too; here they are usage errors before the
     * store is opened */
    const char *bad = NULL;
    if (bt_utf8_invalid_at(text.data, text.len) != text.len)
        bad = "the search text is not valid UTF-8";
    else if (text.data[strspn(text.data, " \t\n\r\v\f")] == '\0')
        bad = "nothing to search for";
    struct bt_store *s = NULL;
    int rc = bad ? bt_fail(BT_EXIT_USAGE, "%s", bad) : bt_cmd_open_store(&s);
    if (rc) {
        bt_buf_release(&text);
        return rc;
    }
    struct bt_store_search_hit *v = NULL;
    size_t n = 0;
    int more = 0;
    int err = bt_store_search(s, text.data, limit, &v, &n, &more);
    if (err == -EINVAL) {
        rc = bt_fail(BT_EXIT_USAGE, "%s", bt_store_errmsg(s));
    } else if (err) {
        rc = bt_fail(BT_EXIT_FAILED, "cannot search: %s", bt_store_errmsg(s));
    } else if (n == 0) {
        rc = bt_fail(BT_EXIT_FAILED, "no conversation matches");
    } else {
        for (size_t i = 0; i < n; i++)
            json ? print_json(&v[i]) : print_human(&v[i]);
        if (more)
            fprintf(stderr,
                    "baton: showing the newest %zu; more conversations match (--limit N "
                    "shows more)\n",
                    limit);
    }
    bt_store_search_free(v, n);
    bt_store_close(s);
    bt_buf_release(&text);
    return rc;
}
