/* SPDX-License-Identifier: MIT */
/*
 * codex-launcher: the native codex binary behind npm's `codex` launcher.
 *
 * npm installs `codex` as bin/codex.js of the package @openai/codex, a Node
 * script that finds the platform package's binary and runs it: with execve
 * where Node has it, else as a child it stays alive beside (70 ms and about
 * 40 MB a turn on Node 20). baton runs the binary itself, found the way the
 * launcher finds it (@openai/codex 0.171.0, bin/codex.js):
 *   - the package root is the realpath of bin/..; its package.json names
 *     "@openai/codex";
 *   - the platform package (@openai/codex-linux-x64 for the target
 *     x86_64-unknown-linux-musl, ...) is looked up as Node's require.resolve
 *     would from bin/: <dir>/node_modules/<pkg> for bin/ and each of its
 *     ancestors, skipping directories named node_modules; failing that, the
 *     package's own vendor/ directory;
 *   - the binary is <that>/vendor/<target>/bin/codex;
 *   - the environment gains CODEX_MANAGED_PACKAGE_ROOT=<root> and
 *     CODEX_MANAGED_BY_PNPM=1 for a pnpm install (a node_modules/.modules.yaml
 *     beside a node_modules/@openai/codex that is the same package), else
 *     CODEX_MANAGED_BY_NPM=1, and loses the other CODEX_MANAGED_BY_*, as the
 *     launcher does (codex uses them for its update hints). bun and Vite+
 *     installs, which the launcher also tells apart, count as npm here.
 * Anything that does not match returns -ENOENT and the launcher is run as it
 * is.
 */
#include "runner-codex.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "util.h"

/* The platform package and target triple the launcher picks on this
 * machine, or NULL. */
static int platform(const char **pkg, const char **triple)
{
    struct utsname u;
    if (uname(&u) != 0)
        return -errno;
#if defined(__linux__)
    if (strcmp(u.machine, "x86_64") == 0) {
        *pkg = "@openai/codex-linux-x64";
        *triple = "x86_64-unknown-linux-musl";
        return 0;
    }
    if (strcmp(u.machine, "aarch64") == 0 || strcmp(u.machine, "arm64") == 0) {
        *pkg = "@openai/codex-linux-arm64";
        *triple = "aarch64-unknown-linux-musl";
        return 0;
    }
#elif defined(__APPLE__)
    if (strcmp(u.machine, "x86_64") == 0) {
        *pkg = "@openai/codex-darwin-x64";
        *triple = "x86_64-apple-darwin";
        return 0;
    }
    if (strcmp(u.machine, "arm64") == 0) {
        *pkg = "@openai/codex-darwin-arm64";
        *triple = "aarch64-apple-darwin";
        return 0;
    }
#endif
    return -ENOENT;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* The directory part of path (owned); "/" for a file in the root. */
static char *dir_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash || slash == path)
        return bt_xstrdup("/");
    return bt_xstrndup(path, (size_t)(slash - path));
}

#define PACKAGE_JSON_MAX (1 << 20) /* bytes: a package.json is a few KB */

/* 1 if root/package.json (a regular file) names the package
 * @openai/codex. */
static int is_codex_package(const char *root)
{
    char *pj = bt_xasprintf("%s/package.json", root);
    struct stat st;
    char *text = NULL;
    size_t len = 0;
    if (stat(pj, &st) == 0 && S_ISREG(st.st_mode) && st.st_size < PACKAGE_JSON_MAX)
        text = bt_read_file(pj, &len);
    free(pj);
    cJSON *doc = text ? cJSON_ParseWithLength(text, len) : NULL;
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(doc, "name");
    int ok = cJSON_IsString(name) && strcmp(name->valuestring, "@openai/codex") == 0;
    cJSON_Delete(doc);
    free(text);
    return ok;
}

static int is_file_x(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* Where the platform package is, as require.resolve from dir would find
 * it; owned realpath or NULL. */
static char *find_platform_package(const char *dir, const char *pkg)
{
    char *d = bt_xstrdup(dir);
    char *found = NULL;
    for (;;) {
        if (strcmp(base_name(d), "node_modules") != 0) {
            char *cand =
                bt_xasprintf("%s/node_modules/%s/package.json", strcmp(d, "/") ? d : "", pkg);
            struct stat st;
            if (stat(cand, &st) == 0 && S_ISREG(st.st_mode)) {
                char *real = realpath(cand, NULL);
                if (real) {
                    found = dir_name(real);
                    free(real);
                }
            }
            free(cand);
        }
        if (found || strcmp(d, "/") == 0)
            break;
        char *up = dir_name(d);
        free(d);
        d = up;
    }
    free(d);
    return found;
}

/* 1 if an ancestor's node_modules is a pnpm one owning this package. */
static int pnpm_owned(const char *root)
{
    char *d = dir_name(root);
    int owned = 0;
    while (!owned) {
        const char *pre = strcmp(d, "/") ? d : "";
        char *yaml = bt_xasprintf("%s/node_modules/.modules.yaml", pre);
        char *link = bt_xasprintf("%s/node_modules/@openai/codex", pre);
        if (access(yaml, F_OK) == 0) {
            char *real = realpath(link, NULL);
            owned = real && strcmp(real, root) == 0;
            free(real);
        }
        free(yaml);
        free(link);
        if (strcmp(d, "/") == 0)
            break;
        char *up = dir_name(d);
        free(d);
        d = up;
    }
    free(d);
    return owned;
}

int bt_codex_resolve_launcher(const char *path, char **native, struct bt_strv *env)
{
    *native = NULL;
    const char *pkg = NULL, *triple = NULL;
    if (strcmp(base_name(path), "codex.js") != 0 || platform(&pkg, &triple) != 0)
        return -ENOENT;
    char *bin_dir = dir_name(path);
    char *up = bt_xasprintf("%s/..", bin_dir);
    char *root = realpath(up, NULL);
    free(up);
    int rc = -ENOENT;
    if (root && strcmp(base_name(bin_dir), "bin") == 0 && is_codex_package(root)) {
        char *vendor_pkg = find_platform_package(bin_dir, pkg);
        char *cand = vendor_pkg ? bt_xasprintf("%s/vendor/%s/bin/codex", vendor_pkg, triple)
                                : bt_xasprintf("%s/vendor/%s/bin/codex", root, triple);
        if (is_file_x(cand)) {
            *native = realpath(cand, NULL);
            rc = *native ? 0 : -errno;
        }
        free(cand);
        free(vendor_pkg);
    }
    if (rc == 0) {
        static const char *const managers[] = {"CODEX_MANAGED_BY_NPM", "CODEX_MANAGED_BY_BUN",
                                               "CODEX_MANAGED_BY_PNPM",
                                               "CODEX_MANAGED_BY_VITE_PLUS"};
        for (size_t i = 0; i < BT_ARRAY_SIZE(managers); i++)
            bt_strv_push(env, managers[i]); /* a name alone: unset */
        bt_strv_pushf(env, "CODEX_MANAGED_PACKAGE_ROOT=%s", root);
        bt_strv_push(env, pnpm_owned(root) ? "CODEX_MANAGED_BY_PNPM=1" : "CODEX_MANAGED_BY_NPM=1");
    }
    free(root);
    free(bin_dir);
    return rc;
}
