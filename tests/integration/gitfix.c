/* SPDX-License-Identifier: MIT */
/* gitfix: git repositories and a file-editing coder for the integration
 * tests of turn changes and worktrees (gitfix.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "gitfix.h"

/* Run a shell command in the test's directory; its stdout (owned). */
char *sh(struct ctx *c, const char *cmd)
{
    const char *argv[] = {"bash", "-c", cmd, NULL};
    struct bt_test_result res;
    run_in(c, argv, &res);
    if (res.exit_code != 0)
        fail_msg("%s: exit %d: %s", cmd, res.exit_code, res.err.data);
    char *out = bt_xstrdup(res.out.data ? res.out.data : "");
    bt_test_result_release(&res);
    return out;
}

/* A repository p/ with a commit, and codex = the fake coder run after
 * edit.sh (what the test writes there) in the turn's directory. */
void repo_and_coder(struct ctx *c)
{
    free(sh(c, "mkdir p && cd p && " GIT " init -q && printf 'one\\ntwo\\n' > a.txt && "
               "printf 'x\\n' > gone.txt && printf '*.log\\n' > .gitignore && " GIT
               " add -A && " GIT " commit -qm first && printf 'staged\\n' > s.txt && git add "
               "s.txt"));
    char *script = path_in(c, "codex"), *edit = path_in(c, "edit.sh");
    FILE *f = fopen(script, "w");
    assert_non_null(f);
    fprintf(f, "#!/bin/sh\n[ \"$1\" = app-server ] && [ -f '%s' ] && sh '%s'\nexec '%s' \"$@\"\n",
            edit, edit, FAKE);
    fclose(f);
    chmod(script, 0755);
    char *kv = bt_xasprintf("BATON_CODEX_BIN=%s", script);
    setenv_kv(c, kv);
    replay(c, "text");
    free(kv);
    free(edit);
    free(script);
}

void edits(struct ctx *c, const char *what)
{
    char *edit = path_in(c, "edit.sh");
    FILE *f = fopen(edit, "w");
    assert_non_null(f);
    fputs(what, f);
    fclose(f);
    free(edit);
}

/* The last event of a --json stream, parsed; its changes member. */
cJSON *changes_of(const char *out, cJSON **last)
{
    const char *end = out + strlen(out);
    while (end > out && end[-1] == '\n')
        end--;
    const char *start = end;
    while (start > out && start[-1] != '\n')
        start--;
    *last = cJSON_ParseWithLength(start, (size_t)(end - start));
    assert_non_null(*last);
    assert_string_equal(bt_test_jstr(*last, "type"), "turn.completed");
    return cJSON_GetObjectItemCaseSensitive(*last, "changes");
}

char *json_of(const cJSON *v)
{
    return v ? cJSON_PrintUnformatted(v) : bt_xstrdup("null");
}
