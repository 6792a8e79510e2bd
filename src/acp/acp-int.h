/* SPDX-License-Identifier: MIT */
/*
 * acp-int: what the parts of `baton acp` share (acp-agent.h): the agent's
 * state, the writer of its messages (acp-rpc.c), the session methods
 * (acp-session.c) and the prompt turns run in threads (acp-prompt.c).
 */
#ifndef BT_ACP_INT_H
#define BT_ACP_INT_H

#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdatomic.h>
#include <uv.h>

#include "acp-agent.h"
#include "coder.h"
#include "id.h"
#include "store.h"

/* JSON-RPC 2.0 error codes, as ACP's schema (ErrorCode) names them. */
#define BT_ACP_PARSE_ERROR (-32700)
#define BT_ACP_INVALID_REQUEST (-32600)
#define BT_ACP_METHOD_NOT_FOUND (-32601)
#define BT_ACP_INVALID_PARAMS (-32602)
#define BT_ACP_INTERNAL_ERROR (-32603)
#define BT_ACP_AUTH_REQUIRED (-32000)
#define BT_ACP_NOT_FOUND (-32002)

/* A prompt that waits queued behind its session's running turn: its
 * request, answered when the turn that sends it ends. */
struct bt_acp_waiting {
    struct bt_acp_waiting *next;
    cJSON *id;   /* the request's id (owned) */
    int64_t msg; /* its queued message (bt_store_message_discard) */
};

/* A session/request_permission baton sent for a request a session's
 * turn keeps for a person (src/turn-ask.c), until the editor answers. */
struct bt_acp_ask {
    struct bt_acp_ask *next;
    int64_t id;                            /* its JSON-RPC id */
    char conv[BT_ID_SIZE];                 /* the session: its conversation */
    char request[BT_EVENT_REQUEST_ID_MAX]; /* the coder's request, as approval.requested
                                              shows it */
    unsigned kind_bit;                     /* its approval kind's allow_always bit */
};

/* One session: a conversation, stored or not yet. Fields below `lock`
 * are the agent's lock's. */
struct bt_acp_session {
    struct bt_acp_session *next;
    char id[BT_ID_SIZE];            /* the sessionId: the conversation's id */
    char *cwd;                      /* absolute */
    char *coder;                    /* its coder */
    char *model;                    /* NULL: the coder's default */
    int stored;                     /* the conversation is in the store */
    int worktree;                   /* in a git worktree of its own (config option
                                       "worktree", made with the first prompt) */
    int running;                    /* a prompt thread runs its turns */
    int queueing;                   /* prompts the main thread is queueing now */
    pthread_t thread;               /* that thread, joined by the next or at the end */
    int joinable;                   /* thread has been started and not joined */
    atomic_int cancel;              /* session/cancel: stop the running turn */
    int closed;                     /* session/close: no prompts until opened again */
    unsigned allow_always;          /* per approval kind (acp-permission.c): the editor
                                       answered allow_always to one: no more asking */
    int announced;                  /* the client knows it: its options may be updated */
    struct bt_acp_waiting *waiting; /* queued prompts, oldest first */
};

/* A coder's models, listed once per agent (acp-models.c). Its fields are
 * the agent's lock's. */
struct bt_acp_models {
    enum {
        BT_ACP_MODELS_UNASKED,
        BT_ACP_MODELS_LISTING,
        BT_ACP_MODELS_LISTED,
        BT_ACP_MODELS_NONE
    } state;
    struct bt_runner_models list; /* when LISTED */
    char *cwd;                    /* where it is listed (the first session's) */
    pthread_t thread;             /* the listing's */
    int joinable;
    struct bt_acp *a;
    const struct bt_coder *coder;
};

struct bt_acp {
    const struct bt_acp_opts *opts;
    int out_fd;
    atomic_int out_gone; /* a write to out_fd failed: the client reads no more */
    int out_errno;       /* why (with the lock) */
    atomic_int stopping; /* the agent ends: every turn stops, nothing more goes out */
    atomic_int signo;    /* the stop signal that came, 0 none */
    int stop_pipe[2];    /* readable once signo or out_gone is set (acp-watch.c) */
    struct bt_acp_watch *watch;
    struct bt_store *store;  /* the main thread's; each prompt thread opens its own */
    pthread_mutex_t lock;    /* sessions, and each whole message written */
    pthread_cond_t queued;   /* a session's queueing went down */
    struct bt_acp_ask *asks; /* permission requests waiting for their answer */
    int64_t last_ask;        /* the last permission request's id */
    struct bt_acp_session *sessions;
    struct bt_acp_models *models; /* one per coder, in bt_coders order */
    int initialized;              /* initialize was answered */
};

/* 1 if se's running turn must stop: cancelled, or the agent ends. */
static inline int bt_acp_must_stop(struct bt_acp *a, struct bt_acp_session *se)
{
    return atomic_load(&se->cancel) || atomic_load(&a->stopping);
}

/* --- acp-watch.c: stop signals ---------------------------------------- */

/* Watch SIGINT, SIGTERM and SIGHUP from a thread of their own: the first
 * sets a->signo; each makes a->stop_pipe[0] readable. 0, or a negative
 * errno (pipe, thread) or libuv error. */
int bt_acp_watch_start(struct bt_acp *a);
/* Stop watching and close the pipe (signals go back to their defaults). */
void bt_acp_watch_stop(struct bt_acp *a);
/* Make a->stop_pipe[0] readable (async-signal-safe, lock-free). */
void bt_acp_wake(struct bt_acp *a);
/* What the service says (bt_service_say_fn: what recovery did): "baton:
 * LINE" on stderr, which the editor keeps as the agent's log. */
void bt_acp_say(void *data, const char *line);

/* --- acp-rpc.c: messages out ------------------------------------------ */

/* Write msg as one line (and free it), under the agent's lock unless the
 * caller holds it (locked). Once a write fails (the client closed its
 * end) nothing more is written and the main thread is woken to stop the
 * agent: turns must not run on for nobody. A write waiting for a client
 * that reads nothing gives up a second after a stop signal, and nothing
 * more is written then either. */
void bt_acp_send(struct bt_acp *a, cJSON *msg, int locked);
/* The response {jsonrpc, id, result} to request id (copied; an integer id
 * is written as the integer it is, never in exponent form); result taken. */
void bt_acp_result(struct bt_acp *a, const cJSON *id, cJSON *result, int locked);
/* The error response {jsonrpc, id, error: {code, message}} (id NULL: null,
 * for a request that could not be read). */
void bt_acp_error(struct bt_acp *a, const cJSON *id, int code, const char *message, int locked);
/* A session/update notification for session sid; update taken. */
void bt_acp_update(struct bt_acp *a, const char *sid, cJSON *update, int locked);
/* The same for an update that is a courtesy, not part of an answer (a
 * coder's model list): a client gone meanwhile (it may have said all it
 * had to and closed) loses nothing, so a failed write does not end the
 * agent as "output lost". */
void bt_acp_update_optional(struct bt_acp *a, const char *sid, cJSON *update, int locked);

/* --- acp-lookup.c: sessions by id ------------------------------------- */

/* A session by id, or NULL; with the lock held. */
struct bt_acp_session *bt_acp_session_find(struct bt_acp *a, const char *id);
/* params.sessionId's session, or NULL with the error answered to id. */
struct bt_acp_session *bt_acp_session_of(struct bt_acp *a, const cJSON *id, const cJSON *params);

/* --- acp-session.c: session methods (main thread) --------------------- */

/* session/new, session/load, session/resume, session/list,
 * session/set_config_option, session/close: answer request id with
 * params. */
void bt_acp_session_new(struct bt_acp *a, const cJSON *id, const cJSON *params);
void bt_acp_session_load(struct bt_acp *a, const cJSON *id, const cJSON *params);
void bt_acp_session_resume(struct bt_acp *a, const cJSON *id, const cJSON *params);
void bt_acp_session_list(struct bt_acp *a, const cJSON *id, const cJSON *params);
void bt_acp_session_set_option(struct bt_acp *a, const cJSON *id, const cJSON *params);
void bt_acp_session_close(struct bt_acp *a, const cJSON *id, const cJSON *params);
void bt_acp_session_free(struct bt_acp_session *se);

/* --- acp-models.c: the coders' model lists ---------------------------- */

/* Set up a->models (each coder unasked). */
void bt_acp_models_init(struct bt_acp *a);
/* A session of coder in cwd was announced with its options: list the
 * coder's models in a thread of their own unless they are listed or
 * being listed (or --no-model-list). Once listed, every announced
 * session of that coder gets a config_option_update with them. Main
 * thread, without the lock. */
void bt_acp_models_want(struct bt_acp *a, const char *coder, const char *cwd);
/* The models coder listed, or NULL (not listed, not yet, or it could
 * not). With the lock held. */
const struct bt_runner_models *bt_acp_models_listed(struct bt_acp *a, const char *coder);
/* At the end, once a->stopping is set: stop and join every listing,
 * free the lists. */
void bt_acp_models_stop(struct bt_acp *a);

/* The session's config options (coder, model, worktree) as ACP's
 * configOptions: the coders baton knows; the coder's default, the
 * session's model, the models the coder listed and those
 * the newest conversations of that coder in store s used; off or on. With
 * the lock held. */
cJSON *bt_acp_session_options(struct bt_acp *a, struct bt_store *s,
                              const struct bt_acp_session *se);

/* --- acp-prompt.c: turns ---------------------------------------------- */

/* session/prompt: start the session's turn in a thread, or queue the
 * prompt behind the running one; errors are answered at once. */
void bt_acp_prompt(struct bt_acp *a, const cJSON *id, const cJSON *params);
/* session/cancel (a notification): stop the session's running turn and
 * take back the prompts it queued (each answered cancelled). */
void bt_acp_cancel(struct bt_acp *a, const cJSON *params);
/* --- acp-follow.c: a conversation another baton process runs ----------- */

/* The prompts w (queued in the store, their requests owned) wait behind a
 * turn another process runs, or went out in one. Follow the store on se's
 * thread, with its store handle s: each prompt's turn, once it goes out
 * there, is streamed as session/update and the prompt answered with its
 * end (one taken from the queue by `baton rm-queued` with an error); a
 * session cancel takes back what is still queued and asks that turn to
 * stop.
 * Returns what still waits queued once nothing runs (the caller sends
 * it), or at the agent's end; NULL when every prompt was answered. */
struct bt_acp_waiting *bt_acp_follow(struct bt_acp *a, struct bt_acp_session *se,
                                     struct bt_store *s, struct bt_acp_waiting *w);

/* --- acp-permission.c: approvals asked of the editor ------------------- */

/* On se's turn's thread, for its approval.requested ev (not a question)
 * under the turn's BT_APPROVAL_ASK: ask the editor with
 * session/request_permission and return; the turn's loop goes on, and the
 * editor's answer is a decision through the service (bt_acp_answered).
 * After an allow_always the session's requests of that kind (a command, a
 * file change, ...) are allowed at once (bt_service_decide through s, the
 * turn's store), the editor not asked. Nothing while the turn stops. */
void bt_acp_ask(struct bt_acp *a, struct bt_acp_session *se, struct bt_store *s,
                const struct bt_event *ev);
/* A response of the client (no method): the answer to a permission
 * request, given as the person's decision (bt_service_decide, by "user",
 * through the main thread's store); an error or an answer of another
 * shape decides nothing (the turn's idle timeout does, by "timeout"). A
 * late answer changes nothing. */
void bt_acp_answered(struct bt_acp *a, const cJSON *msg);
/* Free the permission requests never answered (at the agent's end). */
void bt_acp_asks_free(struct bt_acp *a);
/* At the end: cancel every running turn and join every thread. */
void bt_acp_prompt_stop_all(struct bt_acp *a);

#endif
