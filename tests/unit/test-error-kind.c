/* SPDX-License-Identifier: MIT */
/*
 * unit tests: the error kinds (src/error-kind.c): names, reading a name
 * back, what an unknown name reads as; and the CLI's exit codes of turns
 * and service results (src/cli/cmd-exit.c), which users and scripts see; the
 * table against docs/events.schema.json.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "cmd-exit.h"
#include "cmd.h"
#include "error-kind.h"
#include "service.h"

static void test_names(void **state)
{
    (void)state;
    /* the kinds of docs/events.md, spelled as stored */
    static const struct {
        enum bt_error_kind kind;
        const char *name;
    } cases[] = {
        {BT_ERROR_KIND_NOT_INSTALLED, "not_installed"},
        {BT_ERROR_KIND_AUTH_REQUIRED, "auth_required"},
        {BT_ERROR_KIND_RESUME_FAILED, "resume_failed"},
        {BT_ERROR_KIND_MODEL_ERROR, "model_error"},
        {BT_ERROR_KIND_NETWORK_ERROR, "network_error"},
        {BT_ERROR_KIND_RATE_LIMITED, "rate_limited"},
        {BT_ERROR_KIND_CONTEXT_EXCEEDED, "context_exceeded"},
        {BT_ERROR_KIND_CODER_CRASHED, "coder_crashed"},
        {BT_ERROR_KIND_STALLED, "stalled"},
        {BT_ERROR_KIND_TIMEOUT, "timeout"},
        {BT_ERROR_KIND_PROTOCOL_MISMATCH, "protocol_mismatch"},
        {BT_ERROR_KIND_INPUT_TOO_LARGE, "input_too_large"},
    };
    assert_int_equal(sizeof cases / sizeof cases[0], BT_ERROR_KIND__COUNT - 1);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_string_equal(bt_error_kind_name(cases[i].kind), cases[i].name);
        assert_int_equal(bt_error_kind_parse(cases[i].name), cases[i].kind);
    }
    assert_null(bt_error_kind_name(BT_ERROR_KIND_NONE));
    assert_null(bt_error_kind_name(BT_ERROR_KIND__COUNT));
}

/* Text from the store or an event's JSON: no text is no kind; a name this
 * baton does not know is model_error, as documented in error-kind.h. */
static void test_parse_unknown(void **state)
{
    (void)state;
    assert_int_equal(bt_error_kind_parse(NULL), BT_ERROR_KIND_NONE);
    assert_int_equal(bt_error_kind_parse(""), BT_ERROR_KIND_MODEL_ERROR);
    assert_int_equal(bt_error_kind_parse("quota_exhausted"), BT_ERROR_KIND_MODEL_ERROR);
    assert_int_equal(bt_error_kind_parse("Stalled"), BT_ERROR_KIND_MODEL_ERROR);
    assert_int_equal(bt_error_kind_parse("stalled "), BT_ERROR_KIND_MODEL_ERROR);
    assert_int_equal(bt_error_kind_parse("auth_required\n"), BT_ERROR_KIND_MODEL_ERROR);
}

/* The enum of error kinds in the schema (the one array holding
 * "model_error"), or NULL. */
static const cJSON *schema_kinds(const cJSON *j)
{
    for (const cJSON *v = cJSON_IsArray(j) ? j->child : NULL; v; v = v->next)
        if (cJSON_IsString(v) && strcmp(v->valuestring, "model_error") == 0)
            return j;
    for (const cJSON *c = j->child; c; c = c->next) {
        const cJSON *found = schema_kinds(c);
        if (found)
            return found;
    }
    return NULL;
}

static void test_schema(void **state)
{
    (void)state;
    FILE *f = fopen(BT_SOURCE_DIR "/docs/events.schema.json", "rb");
    assert_non_null(f);
    static char text[1 << 20];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    cJSON *j = cJSON_ParseWithLength(text, n);
    assert_non_null(j);
    const cJSON *kinds = schema_kinds(j);
    assert_non_null(kinds);
    assert_int_equal(cJSON_GetArraySize(kinds), BT_ERROR_KIND__COUNT - 1);
    for (int k = BT_ERROR_KIND_NONE + 1; k < BT_ERROR_KIND__COUNT; k++)
        assert_string_equal(cJSON_GetArrayItem(kinds, k - 1)->valuestring,
                            bt_error_kind_name((enum bt_error_kind)k));
    cJSON_Delete(j);
}

static void test_turn_exit(void **state)
{
    (void)state;
    assert_int_equal(bt_cmd_exit_turn(BT_TURN_COMPLETED, BT_ERROR_KIND_NONE), 0);
    assert_int_equal(bt_cmd_exit_turn(BT_TURN_CANCELLED, BT_ERROR_KIND_NONE), 130);
    assert_int_equal(bt_cmd_exit_turn(BT_TURN_FAILED, BT_ERROR_KIND_NONE), 1);
    assert_int_equal(bt_cmd_exit_turn(BT_TURN_FAILED, BT_ERROR_KIND_MODEL_ERROR), 1);
    assert_int_equal(bt_cmd_exit_turn(BT_TURN_FAILED, BT_ERROR_KIND_STALLED), 1);
    assert_int_equal(bt_cmd_exit_turn(BT_TURN_FAILED, BT_ERROR_KIND_NOT_INSTALLED), 3);
    assert_int_equal(bt_cmd_exit_turn(BT_TURN_FAILED, BT_ERROR_KIND_AUTH_REQUIRED), 4);
    assert_int_equal(bt_cmd_exit_turn(BT_TURN_INTERRUPTED, BT_ERROR_KIND_NONE), 1);
    /* a stored unknown kind fails with 1, as it did when kinds were text */
    assert_int_equal(bt_cmd_exit_turn(BT_TURN_FAILED, bt_error_kind_parse("new_kind")), 1);
}

static void test_service_exit(void **state)
{
    (void)state;
    struct bt_service_outcome o = {.result = BT_SERVICE_OK};
    assert_int_equal(bt_cmd_exit_service(&o), BT_EXIT_OK);
    o.result = BT_SERVICE_USAGE;
    assert_int_equal(bt_cmd_exit_service(&o), BT_EXIT_USAGE);
    o.result = BT_SERVICE_NOT_INSTALLED;
    assert_int_equal(bt_cmd_exit_service(&o), BT_EXIT_NOT_INSTALLED);
    o.result = BT_SERVICE_CANCELLED;
    assert_int_equal(bt_cmd_exit_service(&o), BT_EXIT_CANCELLED);
    o.result = BT_SERVICE_FAILED;
    assert_int_equal(bt_cmd_exit_service(&o), BT_EXIT_FAILED);
    o = (struct bt_service_outcome){.result = BT_SERVICE_TURN, .status = BT_TURN_COMPLETED};
    assert_int_equal(bt_cmd_exit_service(&o), BT_EXIT_OK);
    o.status = BT_TURN_FAILED;
    o.error_kind = BT_ERROR_KIND_AUTH_REQUIRED;
    assert_int_equal(bt_cmd_exit_service(&o), BT_EXIT_AUTH);
    o.status = BT_TURN_CANCELLED;
    o.error_kind = BT_ERROR_KIND_NONE;
    assert_int_equal(bt_cmd_exit_service(&o), BT_EXIT_CANCELLED);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),        cmocka_unit_test(test_parse_unknown),
        cmocka_unit_test(test_schema),       cmocka_unit_test(test_turn_exit),
        cmocka_unit_test(test_service_exit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
