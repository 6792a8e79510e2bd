/* SPDX-License-Identifier: MIT */
/*
 * runner: the write side of a coder's protocol. A runner knows how to find
 * and version its CLI, builds the argv and environment (pure functions, so
 * they are golden-testable), writes the handshake/prompt/interrupt/approval
 * lines into a buffer the turn engine sends to the child's stdin, and reacts
 * to protocol signals from its parser. It knows nothing of libuv or SQLite.
 * Each coder's runner is one const struct bt_runner_ops, which its coder's
 * struct bt_coder names (src/coder.h).
 */
#ifndef BT_RUNNER_H
#define BT_RUNNER_H

#include "event.h"
#include "parser.h"
#include "util.h"

/* What baton answers when a coder asks for approval. */
enum bt_approval {
    BT_APPROVAL_DENY,  /* decline every request (default); the turn goes on */
    BT_APPROVAL_AUTO,  /* accept every request */
    BT_APPROVAL_NEVER, /* ask the coder not to request approvals at all */
    BT_APPROVAL_ASK,   /* a person answers each request and question while the turn
                          goes on (bt_turn_decide, src/turn.h); unanswered within the
                          turn's idle timeout it is declined, by "timeout" */
};

/* A decision on one approval request or question, as a runner's answer op
 * writes it in its protocol. Strings borrowed for the call. */
struct bt_runner_decision {
    int accept;               /* 1: allow (a question: answered); 0: decline */
    const char *by;           /* who decided, as approval.resolved says it: "policy",
                                 "user", "timeout" or "cancel" (a runner answers
                                 "cancel" in its protocol's cancelling form) */
    const char *answers_json; /* a question accepted: the answers as JSON array
                                 text, one element per question of the request in
                                 its order, each an array of strings (the labels
                                 chosen, or one free text): [["Blue"],["a, b"]];
                                 NULL otherwise */
};

/* One turn's settings. Strings borrowed for the life of the runner. */
struct bt_runner_config {
    const char *prompt;              /* user text of this turn */
    const char *model;               /* NULL: the coder's default */
    const char *cwd;                 /* absolute working directory */
    enum bt_approval approval;       /* approval policy */
    const char *native_session_id;   /* resume this session; NULL: new */
    const char *native_session_path; /* coders whose session is a file */
    int no_retry;                    /* ask the coder not to retry failed requests */
    /* Under BT_APPROVAL_ASK (src/turn-ask.c): */
    enum bt_approval ask_fallback; /* what decides a request nobody answered within the
                                      idle timeout, by "timeout": DENY (0, the default)
                                      declines, AUTO or NEVER accepts (never a question) */
    int ask_no_questions;          /* 1: questions are not put to the person (an ACP
                                      editor cannot answer one): the policy declines them */
};

/* A coder's models as it lists them (models_line below), while they are
 * read: value is what -m takes, name what a person is shown. */
struct bt_runner_model {
    char *value; /* owned: "gpt-5.5"; pi "provider/id" */
    char *name;  /* owned */
};
struct bt_runner_models {
    struct bt_runner_model *v; /* owned, n of them, in the coder's order */
    size_t n;
    char *current;     /* owned: the model the coder runs given none; NULL unknown */
    unsigned answered; /* the runner's record of the answers read so far */
};

struct bt_runner_ops {
    const char *bin_name; /* executable looked up on PATH */
    const char *bin_env;  /* env var overriding the path, "BATON_CODEX_BIN" */
    int stdin_pipe;       /* 1 if the protocol uses stdin */
    /* 1 if the coder names its version in its protocol on every run (its
     * parser then signals BT_SIGNAL_CODER_VERSION), so no `--version` probe
     * is needed to learn it. */
    int reports_version;

    /* Parse the output of `<bin> --version` into an owned version string
     * ("0.171.0"). Returns 0, or BT_EPROTO if unrecognised. */
    int (*parse_version)(const char *text, char **version);
    /* Optional, for coders installed behind a launcher (a script that only
     * finds and starts the real program): given the located executable
     * (an absolute realpath), set *native to the program the launcher would
     * start (owned realpath) and append to env the changes to the
     * environment it would make: "NAME=VALUE" sets, a bare "NAME" unsets;
     * later entries win. Returns 0; -ENOENT when path is not such a launcher
     * or its program cannot be found (baton then runs path itself), with
     * nothing set. File-system reads only, never a process. */
    int (*resolve_launcher)(const char *path, char **native, struct bt_strv *env);
    /* Append the arguments after argv[0] for one turn. Returns 0 or -EINVAL
     * for an unusable config (e.g. a session id that could become a flag). */
    int (*build_argv)(const struct bt_runner_config *cfg, struct bt_strv *argv);

    /* Optional: the arguments after argv[0] of the coder's own interactive
     * terminal UI resuming cfg's native session (cfg->native_session_id or
     * native_session_path, with cfg->model), run in cfg->cwd by
     * `baton handoff`. Returns 0; -ENOENT when cfg names no session yet;
     * -EINVAL for a session or model that could become a flag. A coder
     * without this op cannot be handed off. */
    int (*handoff_argv)(const struct bt_runner_config *cfg, struct bt_strv *argv);

    /* Optional, for coders that keep their sessions on disk: the directory
     * they are kept in, as this process's environment names it (pi: its
     * sessions directory; codex: $CODEX_HOME), an owned absolute path, not
     * resolved. Returns 0; -ENOENT when the environment names none, or
     * -EINVAL when it names one that is not an absolute path, with *why
     * (owned) naming the variables ("neither PI_CODING_AGENT_DIR nor HOME
     * is set"). Reads the environment only. */
    int (*session_root)(char **root, char **why);

    /* Optional, for coders whose native session is a file: the path a new
     * conversation's session file gets (owned), where the coder's own
     * terminal UI finds it. Returns 0, or an error of session_root (*why
     * owned, as there). */
    int (*new_session_path)(const struct bt_runner_config *cfg, char **path, char **why);

    /* Optional, with session_root, for `baton rm`: append to *files the
     * paths of what makes up the session cfg->native_session_id and
     * cfg->native_session_path name (the other fields are not used) under
     * root (from session_root): a path that ends in '/' names a directory
     * of the session, removed with all it holds; any other a file. What
     * the coder stored is input: these paths are candidates, which
     * bt_runner_session_file checks before anything is removed. Never
     * removes anything. A session that is not on disk is not an error: 0
     * with nothing appended. Returns 0; -EINVAL when the stored session
     * cannot name a file of the coder (an id that could form a path, a
     * path that is not the coder's kind of file), *why (owned) saying so;
     * or the negated errno of a directory that could not be read (the
     * paths found before it are appended). */
    int (*session_files)(const struct bt_runner_config *cfg, const char *root,
                         struct bt_strv *files, char **why);

    /* Optional, for coders that keep their sessions where baton must not
     * write (opencode: a database of its own) and delete one with a
     * command of their own, for `baton rm`: append the arguments after
     * argv[0] of that command deleting the session cfg->native_session_id
     * names. rm runs it as the coder's executable (bt_coder_resolve) with
     * the coder's environment, stdin /dev/null, in cfg->cwd when that is
     * still a directory (else in baton's own), for at most
     * BT_CODER_COMMAND_MS, and reads its end with delete_session_status.
     * A coder has this op or session_root and session_files, not both.
     * Returns 0; -ENOENT when cfg names no session; -EINVAL when the
     * stored id is not one of the coder's (it could become a flag, or name
     * something else), *why (owned) saying so. Builds argv only. */
    int (*delete_session_argv)(const struct bt_runner_config *cfg, struct bt_strv *argv,
                               char **why);
    /* Optional, with delete_session_argv: what the command's end says.
     * status: its exit status, or 128 + the signal that ended it; output:
     * the start of its stdout and stderr as they came (at most
     * BT_CODER_COMMAND_OUTPUT bytes, ANSI escapes kept, NUL-terminated).
     * Returns 0 when the session was deleted, -ENOENT when the coder had
     * no such session (already gone: not a failure), any other value when
     * the deletion failed. NULL: exit status 0 is deleted, anything else
     * failed. */
    int (*delete_session_status)(int status, const char *output);

    void *(*create)(const struct bt_runner_config *cfg);
    void (*destroy)(void *st);
    /* Lines to write once the child is started (handshake, or the prompt). */
    void (*start)(void *st, struct bt_buf *out);
    /* React to a parser signal: append lines to write to out; may emit events
     * (approval.resolved, session.started) through sink. A request with an
     * approval_kind is decided by policy (bt_runner_policy) and answered
     * through the answer op; under BT_APPROVAL_ASK the engine keeps such a
     * request for a person instead and never passes it here. */
    void (*on_signal)(void *st, const struct bt_signal *sig, struct bt_buf *out,
                      const struct bt_parser_sink *sink);
    /* Answer the coder's request rq (one with an approval_kind) as d says:
     * append the protocol's reply to out and emit approval.resolved
     * through sink. rq may be a copy the engine kept while a person
     * thought (strings as the signal had them); the runner keeps no
     * pointer into it. A question accepted without usable answers (none,
     * or fewer than its questions) is answered with what there is: an
     * absent answer is the empty text. Pure: no I/O. */
    void (*answer)(void *st, const struct bt_signal_request *rq, const struct bt_runner_decision *d,
                   struct bt_buf *out, const struct bt_parser_sink *sink);
    /* Optional: why answers_json (as bt_runner_decision's) cannot answer
     * the question rq (owned text, free), or NULL when it can. The engine
     * asks before it accepts a person's answers, so a misfit writes
     * nothing and rq keeps waiting (an elicitation form's field that
     * wants an integer, a choice, a required value: parser-form.h). NULL
     * op: every answer fits. Pure. */
    char *(*answer_problem)(const struct bt_signal_request *rq, const char *answers_json);
    /* Append a protocol interrupt for the running turn. Returns 0, or
     * -ENOTSUP when the coder has none (or it cannot be sent yet): the engine
     * then goes straight to signals. */
    int (*interrupt)(void *st, struct bt_buf *out);

    /* Optional: append the lines that put text into the running turn, on
     * the coder's own protocol (a steer; docs/events.md turn.steered).
     * key is the engine's name for it, echoed in the BT_SIGNAL_STEER a
     * runner sends through sink when the coder takes or refuses it (the
     * sink may be called during this call). Returns:
     *   BT_RUNNER_STEER_CONFIRM  written; the coder's answer or a
     *       USER_TEXT signal (pi) will say whether it was taken;
     *   BT_RUNNER_STEER_TAKEN_END written and taken: the coder answers it
     *       with a turn end of its own, which the turn waits for (claude
     *       2.1.332 runs a user message that comes mid-turn once the
     *       current one ends, with a `result` each);
     *   -EBUSY when the coder has not begun the turn yet (codex before
     *       turn/start named it): nothing written; the engine asks again
     *       after the coder's next answer;
     *   -EAGAIN when the turn can take nothing more (it is being
     *       stopped): nothing written.
     * NULL: the coder cannot steer (ACP v1 agents); the caller queues the
     * text as the next turn's message. */
    int (*steer)(void *st, int64_t key, const char *text, struct bt_buf *out,
                 const struct bt_parser_sink *sink);

    /* Optional: how the coder lists its models through its machine
     * interface, for `baton acp`'s model select (bt_coder_models runs it
     * in a short-lived process). models_argv appends the arguments after
     * argv[0]; models_start the lines written first (stdin then stays
     * open: codex app-server 0.171.0 exits at EOF without answering).
     * models_line reads one line of stdout: it adds the models listed to
     * *m (bt_runner_models_add) and may append a further request (the
     * next page) to out. Returns 1 once the list is complete, 0 to read
     * on, or BT_EPROTO when the coder answered with an error, *why (owned)
     * its words. Pure functions. */
    void (*models_argv)(struct bt_strv *argv);
    void (*models_start)(struct bt_buf *out);
    int (*models_line)(const char *line, size_t len, struct bt_runner_models *m, struct bt_buf *out,
                       char **why);
};

/* What a runner's steer op returns when it wrote the steer. */
enum {
    BT_RUNNER_STEER_CONFIRM = 0,
    BT_RUNNER_STEER_TAKEN_END = 1,
};

/* Shared helpers (runners/runner-util.c; the form's runners/runner-form.c). */

struct cJSON;

/* An elicitation form (ACP elicitation/create, codex
 * mcpServer/elicitation/request: their parsers keep its requestedSchema
 * as rq->params_json, NULL when baton cannot fill it) answered in place
 * into result: {action: "accept", content: {...}} with the answers typed
 * to the form (bt_form_content), {action: "decline"}, or {action:
 * "cancel"} when d->by is "cancel". Returns 1 if accepted. An accept
 * whose answers do not fit (the engine checked them first: only by
 * mistake) is declined with a warning through sink. */
int bt_runner_form_answer(const struct bt_signal_request *rq, const struct bt_runner_decision *d,
                          struct cJSON *result, const struct bt_parser_sink *sink);
/* answer_problem of an elicitation form (bt_runner_form_answer): why
 * answers_json does not fit rq's form (owned), or NULL. */
char *bt_runner_form_problem(const struct bt_signal_request *rq, const char *answers_json);

/* Add a model to m: value and name copied (name NULL or empty: value).
 * A value -m could not take (bt_input_model_problem), one already in m,
 * or a name that is not one line of UTF-8 text is left out: what a coder
 * lists is input. */
void bt_runner_models_add(struct bt_runner_models *m, const char *value, const char *name);
void bt_runner_models_release(struct bt_runner_models *m);

/* Whether to accept approval request rq by policy. A request that came
 * after baton began stopping the turn (rq->stopping) is declined, *by
 * "cancel", whatever the policy; a question (kind user_input) is never
 * accepted, *by "policy": only a person's words answer it (under
 * BT_APPROVAL_ASK the engine puts it to one instead, src/turn-ask.c).
 * Else auto accepts; deny, never and ask decline. *by is "policy" or
 * "cancel", as approval.resolved names who decided; a runner answers
 * "cancel" in its protocol's cancelling form. */
int bt_runner_accepts(const struct bt_runner_config *cfg, const struct bt_signal_request *rq,
                      const char **by);

/* The decision of bt_runner_accepts as a struct bt_runner_decision
 * (answers_json NULL): what on_signal passes to the runner's answer op. */
void bt_runner_policy(const struct bt_runner_config *cfg, const struct bt_signal_request *rq,
                      struct bt_runner_decision *d);

/* The answer to question number i (from 0) of d, as one text: the
 * strings of d->answers_json's element i joined by ", " (owned), or NULL
 * when d gives none (not accepted, no such element, not strings). */
char *bt_runner_answer_text(const struct bt_runner_decision *d, size_t i);

/* Emit approval.resolved for rq through sink: d's decision (accept as
 * given: a runner that could not do what d says passes what it did) and
 * who decided, and a question's answers when it was answered. */
void bt_runner_resolved(const struct bt_parser_sink *sink, const struct bt_signal_request *rq,
                        int accept, const struct bt_runner_decision *d);

/* 1 if rq is a question the coder asks the user (kind user_input). */
int bt_runner_is_question(const struct bt_signal_request *rq);

/* What every coder is told when it asks the user a question during a turn:
 * nobody can answer before the turn ends, the user may answer with the
 * next message. */
#define BT_RUNNER_NO_ANSWER                                                                        \
    "Nobody can answer this question during this turn: baton runs it without a person at "         \
    "the keyboard. Do not wait for an answer; finish the turn (say what you would need to "        \
    "know), and the user can answer with their next message."

struct cJSON;
/* Append msg as one JSON line to out, and free msg. */
void bt_runner_put_json(struct bt_buf *out, struct cJSON *msg);
/* Add to params the member key: an array holding one text block,
 * {"type":"text","text":text} (text NULL: ""), the shape both codex
 * app-server's turn/start input and ACP's session/prompt prompt take. */
void bt_runner_add_text_input(struct cJSON *params, const char *key, const char *text);
/* Add to params the clientInfo object that names baton: {name, title,
 * version}, as codex app-server's and ACP's initialize take it. */
void bt_runner_add_client_info(struct cJSON *params);
/* Tell the engine the turn failed: a TURN_END signal through sink with an
 * error kind and a curated message. */
void bt_runner_fail(const struct bt_parser_sink *sink, enum bt_error_kind kind,
                    const char *message);

/* Append the JSON-RPC answer to the coder's request rq (its id echoed as
 * it came): with result (taken), or with the error {code, message}.
 * jsonrpc: the "jsonrpc" member's value ("2.0", ACP), NULL for none
 * (codex app-server omits it). */
void bt_runner_answer(const struct bt_signal_request *rq, const char *jsonrpc, struct cJSON *result,
                      struct bt_buf *out);
void bt_runner_answer_error(const struct bt_signal_request *rq, const char *jsonrpc, int code,
                            const char *message, struct bt_buf *out);

/* Which of a runner's numbered requests (ids lo..hi, below 32) were
 * written and answered: one bit per id. */
struct bt_runner_ids {
    unsigned sent;     /* bit per request id written */
    unsigned answered; /* bit per request id whose response was handled */
};

/* Note request id as written. */
void bt_runner_ids_sent(struct bt_runner_ids *ids, int id);
/* 1 the first time a response to a written request lo..hi arrives (and
 * note it); 0 for a repeated or unsolicited one, which must not drive the
 * handshake. */
int bt_runner_ids_first_response(struct bt_runner_ids *ids, int64_t id, int lo, int hi);

/* 1 if id is safe to pass as a CLI value: non-empty, at most 256 bytes, only
 * [A-Za-z0-9._:-], and not starting with '-'. */
int bt_runner_id_ok(const char *id);

/* 1 if s is a UUID in its text form (8-4-4-4-12 hex digits, either case). */
int bt_runner_uuid_ok(const char *s);

/* A coder's directory as the environment names it: $var + var_tail when
 * var is set and not empty, else $HOME + home_tail (codex: "CODEX_HOME",
 * "", "/.codex"). *dir: an owned absolute path, not resolved. Returns 0;
 * -ENOENT when neither is set, or -EINVAL when the one used is not an
 * absolute path (a coder would take it relative to its working
 * directory), with *why (owned) naming the variables ("neither
 * COPILOT_HOME nor HOME is set", "COPILOT_HOME is not an absolute path").
 * Reads the environment only. */
int bt_runner_home_dir(const char *var, const char *var_tail, const char *home_tail, char **dir,
                       char **why);

#define BT_RUNNER_TREE_DEPTH 64 /* directories below a session directory, at most */

/* Whether path names a coder's file or directory that baton may remove:
 * an absolute path without "." or ".." components whose directory,
 * resolved (realpath), lies inside root, resolved, and which is there a
 * regular file, or, when path ends in '/', a directory holding no mount
 * point and at most BT_RUNNER_TREE_DEPTH levels of subdirectories. The
 * last component is never followed: a symbolic link is neither a session
 * file nor a session directory, and neither it nor its target is
 * removed. With remove, the file is then unlinked, or the directory
 * emptied depth-first and removed, all through directory descriptors
 * opened as checked (O_NOFOLLOW): a link inside goes as a link, its
 * target untouched; a hard link inside loses only that name. Returns 0
 * with *resolved (owned) the real directory + the name (+ '/');
 * -ENOENT when there is no such file or directory; -EPERM when it is not
 * the coder's to remove, *why (owned) saying why ("it is not inside
 * ROOT", "it holds a mount point (NAME)"); or the negated errno of what
 * could not be done (a directory may then be partly emptied). */
int bt_runner_session_file(const char *root, const char *path, int remove, char **resolved,
                           char **why);

#endif
