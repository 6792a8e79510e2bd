/* SPDX-License-Identifier: MIT */
/*
 * acp-models: the coders' own model lists for `baton acp`'s model select
 * (acp-int.h). A coder is asked once per agent, in a thread, the first
 * time a session of it is announced: the session/new answer goes out at
 * once with what baton knows (the default, the models used before), and
 * the list follows as a config_option_update (ACP's ConfigOptionUpdate,
 * schema/v1 of @agentclientprotocol/sdk) to every session of that coder.
 * A session's config options (the coder, model and worktree selects) are
 * built here too: the model select is the list's, and the update sends
 * them again.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "acp-int.h"
#include "error.h"
#include "input.h"
#include "json.h"

#define BT_ACP_MODELS_SEEN 500  /* newest conversations whose models are offered */
#define BT_ACP_MODEL_CHOICES 20 /* at most this many model choices */

static struct bt_acp_models *models_of(struct bt_acp *a, const char *coder)
{
    for (size_t i = 0; bt_coders[i]; i++)
        if (strcmp(bt_coders[i]->name, coder) == 0)
            return &a->models[i];
    return NULL;
}

void bt_acp_models_init(struct bt_acp *a)
{
    size_t n = 0;
    while (bt_coders[n])
        n++;
    a->models = bt_xcalloc(n, sizeof(*a->models));
    for (size_t i = 0; i < n; i++) {
        a->models[i].a = a;
        a->models[i].coder = bt_coders[i];
        if (!bt_coders[i]->runner->models_line || a->opts->no_model_list)
            a->models[i].state = BT_ACP_MODELS_NONE;
    }
}

/* Every announced, open session of md's coder gets its options again.
 * With the lock held. */
static void update_sessions(struct bt_acp *a, struct bt_acp_models *md, struct bt_store *s)
{
    for (struct bt_acp_session *se = a->sessions; se; se = se->next) {
        if (!se->announced || se->closed || strcmp(se->coder, md->coder->name) != 0)
            continue;
        cJSON *u = cJSON_CreateObject();
        cJSON_AddStringToObject(u, "sessionUpdate", "config_option_update");
        cJSON_AddItemToObject(u, "configOptions", bt_acp_session_options(a, s, se));
        bt_acp_update_optional(a, se->id, u, 1);
    }
}

static void *list_main(void *arg)
{
    struct bt_acp_models *md = arg;
    struct bt_acp *a = md->a;
    struct bt_runner_models list;
    char *why = NULL;
    int rc = bt_coder_models(md->coder, md->cwd, &a->stopping, &list, &why);
    /* the options hold the models used before too: this thread's own
     * handle on the store (without one they are left out) */
    struct bt_store *s = NULL;
    char *home = rc == 0 ? bt_store_default_home() : NULL, *err = NULL;
    if (home && bt_store_open(home, &s, &err) != 0)
        s = NULL;
    if (rc && rc != -ECANCELED && !atomic_load(&a->stopping))
        fprintf(stderr, "baton acp: %s; the model select offers the models used before\n", why);
    pthread_mutex_lock(&a->lock);
    md->state = rc ? BT_ACP_MODELS_NONE : BT_ACP_MODELS_LISTED;
    if (rc == 0) {
        md->list = list;
        if ((list.n || list.current) && !atomic_load(&a->stopping))
            update_sessions(a, md, s);
    }
    pthread_mutex_unlock(&a->lock);
    bt_store_close(s);
    free(home);
    free(err);
    free(why);
    return NULL;
}

void bt_acp_models_want(struct bt_acp *a, const char *coder, const char *cwd)
{
    struct bt_acp_models *md = models_of(a, coder);
    if (!md)
        return;
    pthread_mutex_lock(&a->lock);
    int start = md->state == BT_ACP_MODELS_UNASKED && !atomic_load(&a->stopping);
    if (start) {
        md->state = BT_ACP_MODELS_LISTING;
        /* a stored conversation's directory may be gone: the coder then
         * lists in baton's own, rather than not at all */
        struct stat st;
        md->cwd = stat(cwd, &st) == 0 && S_ISDIR(st.st_mode) ? bt_xstrdup(cwd) : NULL;
    }
    pthread_mutex_unlock(&a->lock);
    if (!start)
        return;
    if (pthread_create(&md->thread, NULL, list_main, md) == 0) {
        md->joinable = 1;
    } else {
        pthread_mutex_lock(&a->lock);
        md->state = BT_ACP_MODELS_NONE;
        pthread_mutex_unlock(&a->lock);
    }
}

const struct bt_runner_models *bt_acp_models_listed(struct bt_acp *a, const char *coder)
{
    struct bt_acp_models *md = models_of(a, coder);
    return md && md->state == BT_ACP_MODELS_LISTED ? &md->list : NULL;
}

void bt_acp_models_stop(struct bt_acp *a)
{
    if (!a->models)
        return;
    for (size_t i = 0; bt_coders[i]; i++) {
        struct bt_acp_models *md = &a->models[i];
        if (md->joinable)
            pthread_join(md->thread, NULL);
        bt_runner_models_release(&md->list);
        free(md->cwd);
    }
    free(a->models);
    a->models = NULL;
}

/* --- a session's config options ----------------------------------------- */

/* A select option list entry {value, name}. */
static void add_choice(cJSON *options, const char *value, const char *name)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "value", value);
    cJSON_AddStringToObject(o, "name", name);
    cJSON_AddItemToArray(options, o);
}

/* category NULL: none (the schema reserves names without '_' for its own:
 * mode, model, model_config, thought_level) */
static cJSON *select_option(const char *id, const char *name, const char *category,
                            const char *current, cJSON **options)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "id", id);
    cJSON_AddStringToObject(o, "name", name);
    if (category)
        cJSON_AddStringToObject(o, "category", category);
    cJSON_AddStringToObject(o, "type", "select");
    cJSON_AddStringToObject(o, "currentValue", current);
    *options = cJSON_AddArrayToObject(o, "options");
    return o;
}

/* 1 if options (a select's choices) has value. */
static int has_choice(const cJSON *options, const char *value)
{
    const cJSON *o;
    cJSON_ArrayForEach(o, options)
    {
        const char *v = bt_json_str(o, "value");
        if (v && value && strcmp(v, value) == 0)
            return 1;
    }
    return 0;
}

/* The models coder ran with in the newest conversations of store s
 * (NULL: none), as choices: a user may pick one the coder does not list
 * (`baton run -m`, an editor's select). */
static void add_used_models(struct bt_store *s, cJSON *options, const char *coder)
{
    struct bt_store_conversation *v = NULL;
    size_t n = 0, added = 0;
    if (!s || bt_store_conversation_list(s, BT_ACP_MODELS_SEEN, &v, &n) != 0)
        return;
    for (size_t i = 0; i < n && added < BT_ACP_MODEL_CHOICES; i++)
        if (v[i].model && coder && strcmp(v[i].coder, coder) == 0 &&
            !has_choice(options, v[i].model) && !bt_input_model_problem(v[i].model)) {
            add_choice(options, v[i].model, v[i].model);
            added++;
        }
    bt_store_conversation_list_free(v, n);
}

/* The name of the model list's choice value, or NULL. */
static const char *listed_name(const struct bt_runner_models *m, const char *value)
{
    for (size_t i = 0; m && value && i < m->n; i++)
        if (strcmp(m->v[i].value, value) == 0)
            return m->v[i].name;
    return NULL;
}

cJSON *bt_acp_session_options(struct bt_acp *a, struct bt_store *s, const struct bt_acp_session *se)
{
    cJSON *all = cJSON_CreateArray(), *options;
    cJSON *coder = select_option("coder", "Coder", NULL, se->coder, &options);
    for (size_t i = 0; bt_coders[i]; i++)
        add_choice(options, bt_coders[i]->name, bt_coders[i]->name);
    cJSON_AddItemToArray(all, coder);
    /* the default, the one asked for, those the coder lists, and those
     * used before */
    const struct bt_runner_models *listed = bt_acp_models_listed(a, se->coder);
    cJSON *model =
        select_option("model", "Model", "model", se->model ? se->model : "default", &options);
    const char *current = listed ? listed->current : NULL;
    const char *current_name = listed_name(listed, current);
    char *dflt =
        current ? bt_xasprintf("the coder's default (%s)", current_name ? current_name : current)
                : bt_xstrdup("the coder's default");
    add_choice(options, "default", dflt);
    free(dflt);
    if (se->model && !listed_name(listed, se->model))
        add_choice(options, se->model, se->model);
    for (size_t i = 0; listed && i < listed->n; i++)
        if (!has_choice(options, listed->v[i].value)) /* one named "default" */
            add_choice(options, listed->v[i].value, listed->v[i].name);
    add_used_models(s, options, se->coder);
    cJSON_AddItemToArray(all, model);
    /* `baton run --worktree`: made with the first prompt, so fixed then */
    cJSON *wt = select_option("worktree", "Worktree", NULL, se->worktree ? "on" : "off", &options);
    add_choice(options, "off", "in the session's directory");
    add_choice(options, "on", "in a git worktree of its own (baton keep brings the work back)");
    cJSON_AddItemToArray(all, wt);
    return all;
}
