/* SPDX-License-Identifier: MIT */
/* Unit tests of the built-in web page (src/serve/web.h): every file of src/serve/web/
 * is in the binary byte for byte, at its path, with its content type; the
 * table is sorted for bt_web_find; and the page keeps to what the
 * server's Content-Security-Policy allows (no inline script, style or
 * event handler) and to its one innerHTML, the server's markdown, across
 * all its scripts: the entry app.js and the ES modules it imports, each
 * import a file of the table. */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cmocka.h>
#include <dirent.h>
#include <sys/stat.h>

#include "util.h"
#include "web.h"

#define WEB_DIR BT_SOURCE_DIR "/src/serve/web"

/* The content type a file of this name must be served with. */
static const char *expected_type(const char *name)
{
    static const struct {
        const char *ext;
        const char *type;
    } types[] = {
        {".html", "text/html; charset=utf-8"},
        {".css", "text/css; charset=utf-8"},
        {".js", "text/javascript; charset=utf-8"},
        {".json", "application/json"},
        {".svg", "image/svg+xml"},
        {".png", "image/png"},
        {".ico", "image/x-icon"},
        {".txt", "text/plain; charset=utf-8"},
    };
    const char *dot = strrchr(name, '.');
    for (size_t i = 0; dot && i < BT_ARRAY_SIZE(types); i++)
        if (strcmp(dot, types[i].ext) == 0)
            return types[i].type;
    return NULL;
}

static void test_every_file_is_embedded_as_it_is(void **state)
{
    (void)state;
    DIR *d = opendir(WEB_DIR);
    assert_non_null(d);
    size_t files = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char *full = bt_xasprintf("%s/%s", WEB_DIR, e->d_name);
        struct stat st;
        assert_int_equal(stat(full, &st), 0);
        if (!S_ISREG(st.st_mode)) {
            free(full); /* cmake/: the generator, not served */
            continue;
        }
        files++;
        char *path =
            strcmp(e->d_name, "index.html") == 0 ? bt_xstrdup("/") : bt_xasprintf("/%s", e->d_name);
        const struct bt_web_file *f = bt_web_find(path);
        if (!f) {
            fail_msg("src/serve/web/%s is not embedded at %s", e->d_name, path);
            return; /* (fail_msg does not return; the analyzer cannot tell) */
        }
        size_t len = 0;
        char *want = bt_read_file(full, &len);
        assert_non_null(want);
        assert_int_equal(f->len, len);
        assert_memory_equal(f->data, want, len);
        assert_int_equal(f->data[f->len], 0); /* the NUL past the end */
        assert_non_null(expected_type(e->d_name));
        assert_string_equal(f->content_type, expected_type(e->d_name));
        free(want);
        free(path);
        free(full);
    }
    closedir(d);
    assert_int_equal(bt_web_file_count, files);
    assert_true(files >= 3); /* index.html, app.css, app.js at least */
}

static void test_table_sorted_and_find_exact(void **state)
{
    (void)state;
    assert_string_equal(bt_web_files[0].path, "/");
    for (size_t i = 1; i < bt_web_file_count; i++)
        assert_true(strcmp(bt_web_files[i - 1].path, bt_web_files[i].path) < 0);
    for (size_t i = 0; i < bt_web_file_count; i++)
        assert_ptr_equal(bt_web_find(bt_web_files[i].path), &bt_web_files[i]);
    assert_non_null(bt_web_find("/app.js"));
    assert_non_null(bt_web_find("/app.css"));
    assert_null(bt_web_find("/index.html")); /* no alias: "/" only */
    assert_null(bt_web_find("/app.js?v=1"));
    assert_null(bt_web_find("/APP.JS"));
    assert_null(bt_web_find("app.js"));
    assert_null(bt_web_find("/cmake/embed.cmake"));
    assert_null(bt_web_find(""));
    assert_null(bt_web_find(NULL));
}

/* Occurrences of needle in text, ASCII case ignored. */
static size_t count(const char *text, const char *needle)
{
    size_t n = 0, len = strlen(needle);
    for (const char *p = text; *p; p++)
        if (strncasecmp(p, needle, len) == 0)
            n++;
    return n;
}

static const char *page(const char *path)
{
    const struct bt_web_file *f = bt_web_find(path);
    assert_non_null(f);
    assert_int_equal(strlen((const char *)f->data), f->len); /* text: no NUL inside */
    return (const char *)f->data;
}

static void test_page_fits_the_csp(void **state)
{
    (void)state;
    const char *html = page("/");
    /* script-src 'self': scripts by src only; the entry, a module, loads
     * the rest with import */
    assert_int_equal(count(html, "<script"), 1);
    assert_int_equal(count(html, "<script type=\"module\" src=\"/app.js\"></script>"), 1);
    /* style-src 'self': no <style> element, no style attribute */
    assert_int_equal(count(html, "<style"), 0);
    assert_int_equal(count(html, " style="), 0);
    /* no inline event handler attribute (onclick=, onload=, ...) */
    for (const char *p = html; (p = strstr(p, " on")) != NULL; p++) {
        const char *q = p + 3;
        while (*q >= 'a' && *q <= 'z')
            q++;
        if (*q == '=' && q > p + 3)
            fail_msg("an inline event handler in index.html: %.20s", p);
    }
    /* nothing from another origin */
    assert_int_equal(count(html, "http://"), 0);
    assert_int_equal(count(html, "https://"), 0);
    assert_int_equal(count(page("/app.css"), "@import"), 0);
    assert_int_equal(count(page("/app.css"), "url("), 0);
}

static bool is_script(const struct bt_web_file *f)
{
    return strcmp(f->content_type, "text/javascript; charset=utf-8") == 0;
}

/* What the page's scripts hold, summed over all of them: no rule below can
 * be kept by moving code into another module. */
static void test_script_inserts_text_only(void **state)
{
    (void)state;
    size_t scripts = 0, inner = 0, markdown = 0;
    for (size_t i = 0; i < bt_web_file_count; i++) {
        if (!is_script(&bt_web_files[i]))
            continue;
        scripts++;
        const char *js = page(bt_web_files[i].path);
        inner += count(js, "innerHTML");
        markdown += count(js, "body.innerHTML = m.html;");
        assert_int_equal(count(js, "outerHTML"), 0);
        assert_int_equal(count(js, "insertAdjacentHTML"), 0);
        assert_int_equal(count(js, "document.write"), 0);
        assert_int_equal(count(js, "eval("), 0);
        assert_int_equal(count(js, "new Function"), 0);
        assert_int_equal(count(js, "setAttribute('style'"), 0);
        assert_int_equal(count(js, "http://"), 0);
        assert_int_equal(count(js, "https://"), 0);
        /* imports are static, so the one below sees them all */
        assert_int_equal(count(js, "import("), 0);
    }
    const struct bt_web_file *entry = bt_web_find("/app.js");
    assert_true(scripts >= 1 && entry && is_script(entry));
    /* the one innerHTML: a message's "html", escaped by the server */
    assert_int_equal(inner, 1);
    assert_int_equal(markdown, 1);
}

/* The file an import statement at stmt names ("import { a } from
 * './util.js';" or "import './x.js';"), or NULL after a failed check. Its
 * path is the statement's one quoted string, up to its ';'. */
static const struct bt_web_file *imported(const char *stmt, const char *from)
{
    const char *end = strchr(stmt, ';');
    const char *q = strpbrk(stmt, "'\"");
    if (!end || !q || q > end) {
        fail_msg("%s: an import without a quoted path before its ';': %.60s", from, stmt);
        return NULL;
    }
    const char *close = strchr(q + 1, *q);
    size_t len = close ? (size_t)(close - q - 1) : 0;
    /* relative ("./NAME.js"), so it is the same origin's /NAME.js */
    if (!close || close > end || len < 3 || strncmp(q + 1, "./", 2) != 0 ||
        memchr(q + 3, '/', len - 2)) {
        fail_msg("%s: an import not of the form './NAME.js': %.60s", from, stmt);
        return NULL;
    }
    char *path = bt_xasprintf("/%.*s", (int)(len - 2), q + 3);
    const struct bt_web_file *f = bt_web_find(path);
    if (f && !is_script(f))
        f = NULL;
    if (!f)
        fail_msg("%s imports %s, which is not an embedded script", from, path);
    free(path);
    return f;
}

/* The line after the one p is in, or NULL at the last. */
static const char *next_line(const char *p)
{
    const char *nl = strchr(p, '\n');
    return nl ? nl + 1 : NULL;
}

/* Every import of every script names an embedded script, and every script
 * is reached from app.js, the one index.html loads: a module is neither
 * missing (which would stop the whole page) nor dead. */
static void test_script_imports_are_embedded(void **state)
{
    (void)state;
    const struct bt_web_file *entry = bt_web_find("/app.js");
    assert_non_null(entry);
    size_t n = bt_web_file_count;
    bool *seen = bt_xcalloc(n, sizeof *seen);
    size_t *todo = bt_xcalloc(n, sizeof *todo); /* to read; each file once, so n at most */
    size_t top = 0, reached = 0;
    todo[top++] = (size_t)(entry - bt_web_files);
    seen[todo[0]] = true;
    while (top > 0) {
        const struct bt_web_file *f = &bt_web_files[todo[--top]];
        reached++;
        const char *js = page(f->path);
        /* a statement starts a line: "import" inside a line is not one */
        for (const char *p = js; p; p = next_line(p)) {
            if (strncmp(p, "import ", 7) != 0)
                continue;
            const struct bt_web_file *g = imported(p, f->path);
            if (!g) {
                free(todo); /* (fail_msg does not return; the analyzer cannot tell) */
                free(seen);
                return;
            }
            size_t k = (size_t)(g - bt_web_files);
            if (!seen[k]) {
                seen[k] = true;
                todo[top++] = k;
            }
        }
    }
    for (size_t i = 0; i < n; i++)
        if (is_script(&bt_web_files[i]) && !seen[i])
            fail_msg("%s is embedded but app.js never imports it", bt_web_files[i].path);
    assert_true(reached >= 2); /* app.js and its modules */
    free(todo);
    free(seen);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_file_is_embedded_as_it_is),
        cmocka_unit_test(test_table_sorted_and_find_exact),
        cmocka_unit_test(test_page_fits_the_csp),
        cmocka_unit_test(test_script_inserts_text_only),
        cmocka_unit_test(test_script_imports_are_embedded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
