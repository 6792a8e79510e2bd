/* SPDX-License-Identifier: MIT */
/*
 * gemini: an ACP coder (runners/runner-acp.h, docs/acp.md). What is its own:
 * the ACP command `gemini --acp [--model=M]`, the terminal UI resuming a session
 * (`gemini --resume=ID`: a session id of the current project, gemini-cli
 * 0.61.0 `--help` and its sessionUtils), its login messages, and what
 * makes up a session for `baton rm` (below). Checked against
 * @google/gemini-cli 0.61.0.
 */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "coder.h"
#include "json.h"
#include "runner-acp.h"

static const char *const gemini_auth[] = {
    "Please set an Auth method",
    "Invalid auth method",
    "GEMINI_API_KEY",
    NULL,
};

static const struct bt_acp_profile gemini_profile = {
    .name = "gemini",
    .auth_patterns = gemini_auth,
    .auth_message = "gemini is not logged in: run `gemini` and sign in, or set GEMINI_API_KEY",
    /* gemini-cli 0.61.0's session/load resets the session it loads when
     * run in the minute the session file was opened, and otherwise leaves
     * a second file with the same id that gemini's session cleanup, at its
     * next start, deletes together with the good one (fixtures/gemini/
     * 0.61.0 resume*.files.txt; docs/acp.md "gemini and resume"). */
    .resume_refusal = "cannot continue a session over ACP without damaging it (gemini-cli's "
                      "session/load resets or later deletes the stored session): continue it "
                      "in gemini's own terminal UI with `baton handoff`",
};

static int gemini_build_argv(const struct bt_runner_config *cfg, struct bt_strv *argv)
{
    static const char *const fixed[] = {"--acp", NULL};
    return bt_acp_argv(cfg, argv, fixed, "--model");
}

static int gemini_handoff_argv(const struct bt_runner_config *cfg, struct bt_strv *argv)
{
    return bt_acp_handoff_argv(cfg, argv, "--resume");
}

/* gemini's temporary directory, which holds one directory per project:
 * <home>/.gemini/tmp, home being $GEMINI_CLI_HOME, else $HOME (gemini-cli
 * 0.61.0 Storage.getGlobalTempDir and homedir(), which takes the variable
 * as it is: a relative one would be relative to gemini's working
 * directory, which baton refuses). */
static int gemini_session_root(char **root, char **why)
{
    return bt_runner_home_dir("GEMINI_CLI_HOME", "/.gemini/tmp", "/.gemini/tmp", root, why);
}

#define GEMINI_CHAT_MAX ((size_t)256 * 1024 * 1024) /* bytes of a chat file read, at most */

/* The session a record of a chat file names: its "sessionId", or that of
 * its "$set" (gemini rewrites metadata so); NULL for none. */
static const char *record_session(const cJSON *rec)
{
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(rec, "sessionId");
    if (!id) {
        const cJSON *set = cJSON_GetObjectItemCaseSensitive(rec, "$set");
        id = cJSON_GetObjectItemCaseSensitive(set, "sessionId");
    }
    return cJSON_IsString(id) ? id->valuestring : NULL;
}

/* The whole regular file name in dir (not a link, at most GEMINI_CHAT_MAX
 * bytes), NUL-terminated, its length in *len; NULL if it is none. */
static char *read_chat(int dir, const char *name, size_t *len)
{
    int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return NULL;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > GEMINI_CHAT_MAX) {
        close(fd);
        return NULL;
    }
    struct bt_buf b = BT_BUF_INIT;
    char chunk[65536];
    ssize_t n = 0;
    while (b.len <= GEMINI_CHAT_MAX && (n = read(fd, chunk, sizeof chunk)) > 0)
        bt_buf_add(&b, chunk, (size_t)n);
    close(fd);
    if (n < 0 || b.len > GEMINI_CHAT_MAX) {
        bt_buf_release(&b);
        return NULL;
    }
    return bt_buf_detach(&b, len); /* NUL-terminated, as every bt_buf */
}

/* 1 if the chat file name in dir is session id's, by what it holds (its
 * name carries only the first 8 characters of the id, which two sessions
 * can share): gemini 0.61.0 writes a session as JSON lines whose first is
 * the header {"sessionId", "projectHash", "startTime", …}
 * (chatRecordingService initialize); an older release wrote one JSON
 * document (.json) with a top-level sessionId. The file is the session's
 * when its first record names id and no record names another session. */
static int chat_is_session(int dir, const char *name, const char *id)
{
    size_t len;
    char *text = read_chat(dir, name, &len);
    if (!text || strlen(text) != len) { /* none, or not text */
        free(text);
        return 0;
    }
    int ok = 0;
    /* one document: a .json file, or a session of nothing but its header
     * (the length counts the NUL: cJSON wants it inside to see the end) */
    cJSON *whole = cJSON_ParseWithLengthOpts(text, len + 1, NULL, 1);
    if (whole) {
        const char *sid = record_session(whole);
        ok = sid && strcmp(sid, id) == 0;
        cJSON_Delete(whole);
        free(text);
        return ok;
    }
    int more = 1;
    for (char *line = text; more && line < text + len;) {
        char *end = memchr(line, '\n', (size_t)(text + len - line));
        size_t n = end ? (size_t)(end - line) : (size_t)(text + len - line);
        cJSON *rec = n ? bt_json_parse(line, n, NULL) : NULL;
        const char *sid = record_session(rec);
        if (line == text) /* the header decides, */
            more = ok = sid && strcmp(sid, id) == 0;
        else if (sid && strcmp(sid, id) != 0) /* unless a record names another */
            more = ok = 0;
        cJSON_Delete(rec);
        line += n + 1;
    }
    free(text);
    return ok;
}

struct gemini_search {
    const char *id;        /* the session's whole id */
    struct bt_strv *files; /* the candidates found */
    int err;               /* first error, 0 if none */
};

/* Append dir/rel (+ '/' when is_dir) if there is such an entry, of any
 * type: bt_runner_session_file judges it. */
static void push_if_there(struct gemini_search *gs, int dir, const char *path, const char *rel,
                          int is_dir)
{
    struct stat st;
    if (fstatat(dir, rel, &st, AT_SYMLINK_NOFOLLOW) == 0)
        bt_strv_pushf(gs->files, "%s/%s%s", path, rel, is_dir ? "/" : "");
    else if (errno != ENOENT && errno != ENOTDIR && !gs->err)
        gs->err = -errno;
}

/* What gemini 0.61.0 keeps of a session id in a project's directory
 * besides its chat file (sessionOperations deleteSessionArtifactsAsync):
 * logs/session-<id>.jsonl, tool-outputs/session-<id>/ and <id>/ (the
 * session's plans, tracker, tasks). All named by the whole id. */
static void push_artifacts(struct gemini_search *gs, int dir, const char *path, const char *id)
{
    char *rel = bt_xasprintf("logs/session-%s.jsonl", id);
    push_if_there(gs, dir, path, rel, 0);
    free(rel);
    rel = bt_xasprintf("tool-outputs/session-%s", id);
    push_if_there(gs, dir, path, rel, 1);
    free(rel);
    push_if_there(gs, dir, path, id, 1);
}

/* The sub-agents of the session: gemini records each as
 * chats/<session id>/<agent id>.jsonl (its agent ids are UUIDs too), with
 * artifacts of its own named by the agent id
 * (deleteSubagentSessionDirAndArtifactsAsync). The directory itself is
 * a candidate of its own. */
static void push_subagents(struct gemini_search *gs, int project, const char *path)
{
    char *rel = bt_xasprintf("chats/%s", gs->id);
    push_if_there(gs, project, path, rel, 1);
    int fd = openat(project, rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    free(rel);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return;
    }
    for (struct dirent *e; (e = readdir(d));) {
        char agent[37];
        size_t n = strlen(e->d_name);
        int named = n >= 36 + 5 &&
                    (strcmp(e->d_name + 36, ".json") == 0 || strcmp(e->d_name + 36, ".jsonl") == 0);
        if (!named)
            continue;
        memcpy(agent, e->d_name, 36);
        agent[36] = '\0';
        if (bt_runner_uuid_ok(agent) && strcmp(agent, gs->id) != 0)
            push_artifacts(gs, project, path, agent);
    }
    closedir(d);
}

/* The chat files of the session in project/chats: those named
 * session-<time>-<first 8 of the id>.json[l] that hold it. */
static void push_chats(struct gemini_search *gs, int project, const char *path)
{
    int fd = openat(project, "chats", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        else if (errno != ENOENT && errno != ENOTDIR && errno != ELOOP && !gs->err)
            gs->err = -errno;
        return;
    }
    char tail[16], tail_l[16];
    snprintf(tail, sizeof tail, "-%.8s.json", gs->id);
    snprintf(tail_l, sizeof tail_l, "-%.8s.jsonl", gs->id);
    for (struct dirent *e; (e = readdir(d));) {
        const char *name = e->d_name;
        size_t n = strlen(name), t = strlen(tail), tl = strlen(tail_l);
        int named = strncmp(name, "session-", 8) == 0 &&
                    ((n > t + 8 && strcmp(name + n - t, tail) == 0) ||
                     (n > tl + 8 && strcmp(name + n - tl, tail_l) == 0));
        if (named && chat_is_session(dirfd(d), name, gs->id))
            bt_strv_pushf(gs->files, "%s/chats/%s", path, name);
    }
    closedir(d);
}

/* A session of gemini lives in the directory of the project it was run
 * in, <root>/<project>/ (named from ~/.gemini/projects.json, or a hash of
 * the project's path by older releases). The session's id is unique, so
 * every project directory is searched: a directory that is a link is not
 * (gemini makes them itself). */
static int gemini_session_files(const struct bt_runner_config *cfg, const char *root,
                                struct bt_strv *files, char **why)
{
    const char *id = cfg->native_session_id;
    *why = NULL;
    if (!id)
        return 0;
    if (!bt_runner_uuid_ok(id)) { /* gemini's session ids are UUIDs */
        *why = bt_xstrdup("it is not a gemini session id (a UUID)");
        return -EINVAL;
    }
    DIR *d = opendir(root);
    if (!d)
        return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
    struct gemini_search gs = {.id = id, .files = files};
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        int project = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (project < 0)
            continue; /* not a directory: no project's */
        char *path = bt_xasprintf("%s/%s", root, e->d_name);
        push_chats(&gs, project, path);
        push_subagents(&gs, project, path);
        push_artifacts(&gs, project, path, id);
        free(path);
        close(project);
    }
    closedir(d);
    return gs.err;
}

static void *gemini_create(const struct bt_runner_config *cfg)
{
    return bt_acp_runner_create(cfg, &gemini_profile);
}

static void *gemini_parser_create(void)
{
    return bt_acp_parser_create(&gemini_profile);
}

static const struct bt_runner_ops gemini_runner = {
    BT_ACP_RUNNER_OPS, /* version: `gemini --version`: "0.61.0" */
    .bin_name = "gemini",
    .bin_env = "BATON_GEMINI_BIN",
    .build_argv = gemini_build_argv,
    .handoff_argv = gemini_handoff_argv,
    .session_root = gemini_session_root,
    .session_files = gemini_session_files,
    .create = gemini_create,
};

static const struct bt_parser_ops gemini_parser = {
    BT_ACP_PARSER_OPS,
    .create = gemini_parser_create,
};

/* Where baton finds gemini's sessions (gemini_session_root). */
static const char *const gemini_env_doc[] = {
    "GEMINI_CLI_HOME",
    "gemini's home instead of HOME: `baton rm` finds the gemini session it deletes in its "
    ".gemini/tmp",
    NULL,
};

/* The coder's one registration: src/coders.def lists it. */
const struct bt_coder bt_coder_gemini = {
    .name = "gemini",
    .runner = &gemini_runner,
    .parser = &gemini_parser,
    .env_doc = gemini_env_doc,
};
