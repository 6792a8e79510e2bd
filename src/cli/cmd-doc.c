/* SPDX-License-Identifier: MIT */
/*
 * cmd-doc: the generated documentation. `baton __man` prints the man page
 * baton(1) in roff, `baton completion bash|zsh` a completion script
 * (cmd-doc-complete.c), and `baton __ids` the conversation ids those scripts
 * offer where a command takes CONV. Page and scripts are built from the
 * command table (cmd-table.c, which holds the two commands that print
 * them and hands the table down), so they say what `--help` says; the
 * build runs the built baton to write them (CMakeLists.txt).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd-args.h"
#include "cmd-common.h"
#include "coder.h"
#include "doc.h"
#include "store.h"
#include "util.h"

/* "start a conversation" as "Start a conversation." */
static void roff_sentence(struct bt_buf *b, const char *s)
{
    char *t = bt_xasprintf("%s.", s);
    t[0] = (char)toupper((unsigned char)t[0]);
    bt_doc_roff_text(b, t);
    free(t);
}

static void man_command(struct bt_buf *b, const struct bt_cmd_table *t, const struct bt_cmd *cmd)
{
    struct bt_doc_cmd d;
    bt_doc_parse(t, cmd, &d);
    bt_buf_addf(b, ".SS %s\n.nh\n.ad l\n\\fBbaton %s\\fR ", cmd->name, cmd->name);
    struct bt_buf usage = BT_BUF_INIT;
    bt_args_usage(cmd, &usage);
    bt_doc_roff_usage(b, usage.data ? usage.data : "");
    bt_buf_release(&usage);
    bt_buf_adds(b, "\n.ad\n.hy\n.PP\n");
    roff_sentence(b, cmd->summary);
    bt_buf_addc(b, '\n');
    for (size_t i = 0; i < d.nitems; i++) {
        const struct bt_doc_item *it = &d.items[i];
        if (!it->is_opt) {
            bt_buf_adds(b, ".PP\n");
            bt_doc_roff_text(b, it->text);
            bt_buf_addc(b, '\n');
            continue;
        }
        bt_buf_adds(b, ".TP\n");
        if (it->shrt) {
            bt_doc_roff_font(b, 'B', it->shrt, strlen(it->shrt));
            bt_buf_adds(b, it->lng ? ", " : "");
        }
        if (it->lng)
            bt_doc_roff_font(b, 'B', it->lng, strlen(it->lng));
        if (it->arg) {
            bt_buf_addc(b, ' ');
            bt_doc_roff_font(b, 'I', it->arg, strlen(it->arg));
        }
        bt_buf_addc(b, '\n');
        bt_doc_roff_text(b, it->text);
        bt_buf_addc(b, '\n');
    }
    bt_doc_release(&d);
}

/* Paragraphs of fixed text: each element one paragraph. */
static void man_paras(struct bt_buf *b, const char *const *paras)
{
    for (size_t i = 0; paras[i]; i++) {
        if (i > 0)
            bt_buf_adds(b, ".PP\n");
        bt_doc_roff_text(b, paras[i]);
        bt_buf_addc(b, '\n');
    }
}

/* Tagged paragraphs: tag, text, tag, text, ..., NULL; tags bold. */
static void man_tagged(struct bt_buf *b, const char *const *v)
{
    for (size_t i = 0; v[i]; i += 2) {
        bt_buf_adds(b, ".TP\n");
        bt_doc_roff_font(b, 'B', v[i], strlen(v[i]));
        bt_buf_addc(b, '\n');
        bt_doc_roff_text(b, v[i + 1]);
        bt_buf_addc(b, '\n');
    }
}

static const char *const description[] = {
    "baton drives the coding-agent CLIs installed on this machine (see `baton coders`) "
    "behind one interface. It starts the coder's own CLI as a child process group, "
    "speaks its machine interface (codex app-server JSON-RPC over stdio, pi --mode rpc), "
    "turns its output into one normalized event stream, stores the conversation in "
    "SQLite and resumes the coder's native session by id on the next turn. It never "
    "talks to a model itself.",
    "A conversation runs one turn at a time, whichever terminal sends: a send while a "
    "turn runs queues its prompt. Human output streams the answer as it arrives and "
    "shows tool activity as one-line summaries; with --json, stdout carries only the "
    "events, one JSON object per line, and messages go to stderr.",
    "CONV is a conversation id or any unique prefix of one. Options may come before or "
    "after the arguments; put -- before a prompt that starts with -. Every command takes "
    "-h or --help, which prints its usage and options.",
    NULL,
};

static const char *const files[] = {
    "$BATON_HOME/baton.db",
    "the store (SQLite, WAL mode): conversations, messages, runs "
    "and every event",
    "$BATON_HOME/runs/RUN.out.zst, $BATON_HOME/runs/RUN.err.zst",
    "each run's raw stdout and stderr, zstd-compressed as they stream "
    "(`baton show --raw` prints the last run's stdout)",
    "$BATON_HOME/worker.log",
    "errors of detached workers (--detach, queued turns)",
    "$BATON_HOME/turns/",
    "the lock files of turn slots (BATON_MAX_TURNS)",
    "$BATON_HOME/snapshots/KEY/",
    "the working-tree snapshots of one git repository (a bare repository of baton's "
    "that reads the repository's objects through alternates): nothing is written into "
    "the repository itself",
    NULL,
};

static const char *const examples[] = {
    "baton run \"Explain this repository\"",
    "a new conversation with one turn",
    "baton run -c pi -C ~/src/app \"Fix the failing test\"",
    "a turn of pi in another directory",
    "baton send CONV \"And now add a test\"",
    "the next turn, resuming the coder's native session",
    "baton run --json \"Say hello\" > events.jsonl",
    "the event stream only, as JSON lines",
    "baton run --detach \"Refactor the parser\"; baton attach CONV",
    "a turn in a detached worker, followed from another terminal",
    "baton handoff CONV",
    "go on in the coder's own terminal UI",
    "source <(baton completion bash)",
    "completion in the current bash",
    NULL,
};

/* The date of the page: SOURCE_DATE_EPOCH when set (reproducible builds),
 * else today, in UTC. */
static void man_date(char out[16])
{
    const char *e = getenv("SOURCE_DATE_EPOCH");
    time_t t = e && *e ? (time_t)strtoll(e, NULL, 10) : time(NULL);
    struct tm tm;
    if (!gmtime_r(&t, &tm) || strftime(out, 16, "%Y-%m-%d", &tm) == 0)
        snprintf(out, 16, "1970-01-01");
}

static void man_environment(struct bt_buf *b)
{
    static const char *const env[] = {
        "BATON_HOME",
        "where baton keeps its store; default $XDG_STATE_HOME/baton, "
        "else ~/.local/state/baton",
        "XDG_STATE_HOME",
        "the default store is under it when it is an absolute path",
        "HOME",
        "the default store, codex's sessions (~/.codex) and pi's (~/.pi/agent)",
        "PATH",
        "where the coders' executables are looked up",
        "BATON_MAX_TURNS",
        "how many detached workers (--detach, fan-out, baton serve) run their coders at "
        "once, 1 to 4096; the others wait, in order. Default: two per core, at most one "
        "per 256 MiB of memory, at least two",
        NULL,
    };
    man_tagged(b, env);
    for (size_t i = 0; bt_coders[i]; i++) {
        const struct bt_runner_ops *r = bt_coders[i]->runner;
        char *text = bt_xasprintf("the %s executable to run, instead of `%s` on PATH",
                                  bt_coders[i]->name, r->bin_name);
        const char *pair[] = {r->bin_env, text, NULL};
        man_tagged(b, pair);
        free(text);
    }
    for (size_t i = 0; bt_coders[i]; i++)
        if (bt_coders[i]->env_doc)
            man_tagged(b, bt_coders[i]->env_doc);
    static const char *const more[] = {
        "NO_COLOR",
        "when set (to anything), no colour even on a terminal",
        "BATON_TRACE_PERF",
        "when set, print the time of each step of a command on stderr",
        "BATON_SNAPSHOTS",
        "0, no, off or false: no snapshots of the git working tree, so turns record no "
        "changes (as --no-snapshot; for baton serve and baton acp too)",
        NULL,
    };
    man_tagged(b, more);
    bt_buf_adds(b, ".PP\n");
    bt_doc_roff_text(b, "The coder runs with baton's environment, so a coder configured through "
                        "environment variables finds the same configuration.");
    bt_buf_addc(b, '\n');
}

char *bt_doc_man(const struct bt_cmd_table *t)
{
    struct bt_buf b = BT_BUF_INIT;
    char date[16];
    man_date(date);
    bt_buf_addf(&b,
                ".\\\" generated by `baton __man` from baton's help text: edit each command's in "
                "src/cli/cmd-*.c, the rest in src/cli/cmd-doc.c and src/cli/main.c\n"
                ".TH BATON 1 %s \"baton %s\" \"User Commands\"\n.SH NAME\n",
                date, BATON_VERSION);
    bt_doc_roff_text(&b, "baton - drive installed coding-agent CLIs behind one interface");
    bt_buf_adds(&b, "\n.SH SYNOPSIS\n\\fBbaton\\fR \\fICOMMAND\\fR [\\fIOPTIONS\\fR] "
                    "[\\fIARGUMENTS\\fR]\n.br\n\\fBbaton\\fR \\fICOMMAND\\fR \\fB\\-\\-help\\fR\n"
                    ".br\n\\fBbaton\\fR \\fB\\-\\-help\\fR | \\fB\\-\\-version\\fR\n"
                    ".SH DESCRIPTION\n");
    man_paras(&b, description);
    bt_buf_adds(&b, ".SH COMMANDS\n");
    for (size_t i = 0; i < t->n; i++)
        if (bt_doc_public(t->cmds[i]))
            man_command(&b, t, t->cmds[i]);
    bt_buf_adds(&b, ".SH \"EXIT STATUS\"\n");
    for (const struct bt_exit_doc *e = t->exits; e->name; e++) {
        bt_buf_addf(&b, ".TP\n\\fB%d\\fR\n", e->code);
        bt_doc_roff_text(&b, e->text);
        bt_buf_addc(&b, '\n');
    }
    bt_buf_adds(&b, ".SH ENVIRONMENT\n");
    man_environment(&b);
    bt_buf_adds(&b, ".SH FILES\n");
    man_tagged(&b, files);
    bt_buf_adds(&b, ".PP\n");
    bt_doc_roff_text(&b,
                     "Directories are 0700, files 0600. The coder's own session stays where the "
                     "coder keeps it.");
    bt_buf_adds(&b, "\n.SH EXAMPLES\n");
    man_tagged(&b, examples);
    bt_buf_adds(&b, ".SH \"SEE ALSO\"\n");
    bt_doc_roff_text(&b,
                     "The README and docs/ of baton's source: docs/events.md (the event stream), "
                     "docs/store.md (the schema).");
    bt_buf_adds(&b, "\n.PP\n\\fBsqlite3\\fR(1), \\fBzstdcat\\fR(1), \\fBtmux\\fR(1)\n");
    return bt_buf_detach(&b, NULL);
}

/* --- the commands ------------------------------------------------------- */

/* A title on one line for a completion menu: control characters as
 * spaces, at most 60 bytes (whole UTF-8 characters). */
static void print_title(const char *t)
{
    size_t n = bt_utf8_cut(t, strlen(t), 60);
    for (size_t i = 0; i < n; i++)
        putchar((unsigned char)t[i] < 0x20 || t[i] == 0x7f ? ' ' : t[i]);
}

const struct bt_cmd bt_cmd_def_ids = {.name = "__ids",
                                      .run = bt_cmd_ids,
                                      .operands = "[PREFIX]",
                                      .summary = "conversation ids and titles, for completion",
                                      .notes = ""};

/* `baton __ids [--] [PREFIX]`: "ID<TAB>TITLE" of every conversation whose
 * id starts with PREFIX, newest first. It runs on a Tab key: it creates no
 * store and recovers no runs, and prints nothing when there is no store. */
int bt_cmd_ids(int argc, char **argv)
{
    struct bt_args a;
    int rc = bt_args_parse_plain(&a, &bt_cmd_def_ids, argc, argv);
    if (rc)
        return rc < 0 ? 0 : rc;
    const char *prefix = a.n_operands ? a.operands[0] : "";
    char *home = bt_store_default_home();
    char *db = home ? bt_xasprintf("%s/baton.db", home) : NULL;
    struct bt_store *s = NULL;
    if (db && access(db, F_OK) == 0) {
        char *err = NULL;
        if (bt_store_open(home, &s, &err) != 0)
            rc = bt_cmd_fail(BT_EXIT_FAILED, "cannot open the store in %s: %s", home,
                             err ? err : "?");
        free(err);
    }
    struct bt_store_conversation *v = NULL;
    size_t n = 0;
    if (s && bt_store_conversation_list(s, 0, &v, &n) != 0)
        rc = bt_cmd_fail(BT_EXIT_FAILED, "cannot list conversations: %s", bt_store_errmsg(s));
    for (size_t i = 0; i < n; i++) {
        if (strncmp(v[i].id, prefix, strlen(prefix)) != 0)
            continue;
        printf("%s\t", v[i].id);
        print_title(v[i].title);
        putchar('\n');
    }
    bt_store_conversation_list_free(v, n);
    bt_store_close(s);
    free(db);
    free(home);
    return rc;
}
