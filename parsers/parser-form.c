/* SPDX-License-Identifier: MIT */
/*
 * parser-form: elicitation forms as questions, answers as typed content
 * (parser-form.h). The schema is read the same way both ways, so the
 * question of property i is answered by answer i.
 */
#include "parser-form.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "json.h"
#include "parser.h"
#include "util.h"

static const char *const form_types[] = {"string", "number", "integer", "boolean", "array"};

static int type_known(const char *t)
{
    for (size_t i = 0; t && i < BT_ARRAY_SIZE(form_types); i++)
        if (strcmp(t, form_types[i]) == 0)
            return 1;
    return 0;
}

/* The choices of a property as [{value, label}] (owned), or NULL for a
 * free answer: string enum (enumNames as labels) or oneOf; array items'
 * enum or anyOf; boolean true and false. */
static cJSON *choices_of(const cJSON *prop)
{
    const char *type = bt_json_str(prop, "type");
    const cJSON *src = prop;
    if (type && strcmp(type, "array") == 0)
        src = bt_json_obj(prop, "items");
    cJSON *out = cJSON_CreateArray();
    const cJSON *en = src ? cJSON_GetObjectItemCaseSensitive(src, "enum") : NULL;
    const cJSON *names = cJSON_GetObjectItemCaseSensitive(prop, "enumNames");
    const cJSON *titled = src ? cJSON_GetObjectItemCaseSensitive(src, "oneOf") : NULL;
    if (!cJSON_IsArray(titled) && src)
        titled = cJSON_GetObjectItemCaseSensitive(src, "anyOf");
    const cJSON *v, *none = NULL;
    const cJSON *plain = cJSON_IsArray(en) ? en : none;
    const cJSON *pairs = !plain && cJSON_IsArray(titled) ? titled : none;
    int i = 0;
    cJSON_ArrayForEach(v, plain)
    {
        const cJSON *name = cJSON_IsArray(names) ? cJSON_GetArrayItem(names, i) : NULL;
        i++;
        if (!cJSON_IsString(v))
            continue;
        cJSON *c = cJSON_CreateObject();
        cJSON_AddStringToObject(c, "value", v->valuestring);
        const char *label = name && cJSON_IsString(name) ? name->valuestring : v->valuestring;
        cJSON_AddStringToObject(c, "label", label);
        cJSON_AddItemToArray(out, c);
    }
    cJSON_ArrayForEach(v, pairs)
    {
        const char *value = bt_json_str(v, "const"), *title = bt_json_str(v, "title");
        if (!value)
            continue;
        cJSON *c = cJSON_CreateObject();
        cJSON_AddStringToObject(c, "value", value);
        cJSON_AddStringToObject(c, "label", title ? title : value);
        cJSON_AddItemToArray(out, c);
    }
    if (type && strcmp(type, "boolean") == 0) {
        for (int b = 1; b >= 0; b--) {
            cJSON *c = cJSON_CreateObject();
            cJSON_AddStringToObject(c, "value", b ? "true" : "false");
            cJSON_AddStringToObject(c, "label", b ? "true" : "false");
            cJSON_AddItemToArray(out, c);
        }
    }
    if (!out->child) {
        cJSON_Delete(out);
        return NULL;
    }
    return out;
}

int bt_form_fillable(const cJSON *schema)
{
    const cJSON *props = cJSON_IsObject(schema) ? bt_json_obj(schema, "properties") : NULL, *p;
    if (!props)
        return 0;
    cJSON_ArrayForEach(p, props) if (!cJSON_IsObject(p) ||
                                     !type_known(bt_json_str(p, "type"))) return 0;
    return 1;
}

int bt_form_questions(cJSON **questions, const cJSON *schema, const char *message)
{
    if (!bt_form_fillable(schema))
        return 0;
    const cJSON *props = bt_json_obj(schema, "properties"), *p;
    int one = cJSON_GetArraySize(props) == 1;
    if (!props->child) /* nothing to fill: the message is asked, to accept or decline */
        bt_parser_question(questions, NULL, NULL, message ? message : "", NULL, 0);
    cJSON_ArrayForEach(p, props)
    {
        const char *title = bt_json_str(p, "title"), *desc = bt_json_str(p, "description");
        const char *text = desc ? desc : one && message ? message : title ? title : p->string;
        cJSON *choices = choices_of(p);
        bt_parser_question(questions, p->string, title ? title : p->string, text, choices,
                           strcmp(bt_json_str(p, "type"), "array") == 0);
        cJSON_Delete(choices);
    }
    return 1;
}

/* ---- answers to content ------------------------------------------------ */

/* The value of the choice s names (its label or its value), or NULL. */
static const char *choice_value(const cJSON *choices, const char *s)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, choices) if (strcmp(bt_json_str(c, "label"), s) ==
                                       0) return bt_json_str(c, "value");
    cJSON_ArrayForEach(c, choices) if (strcmp(bt_json_str(c, "value"), s) ==
                                       0) return bt_json_str(c, "value");
    return NULL;
}

static int bound_broken(const cJSON *prop, const char *key, double v, int below)
{
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(prop, key);
    return cJSON_IsNumber(b) && (below ? v < b->valuedouble : v > b->valuedouble);
}

/* One scalar answer s as prop's type: the value (owned), or NULL with
 * *why (static text). */
static cJSON *scalar(const cJSON *prop, const char *type, const char *s, const char **why)
{
    char *end = NULL;
    if (strcmp(type, "boolean") == 0) {
        int t = !strcasecmp(s, "true") || !strcasecmp(s, "yes");
        if (t || !strcasecmp(s, "false") || !strcasecmp(s, "no"))
            return cJSON_CreateBool(t);
        *why = "is not true or false";
        return NULL;
    }
    if (strcmp(type, "string") == 0) {
        size_t n = 0; /* characters, not bytes: JSON Schema counts them */
        for (const char *c = s; *c; c++)
            n += ((unsigned char)*c & 0xC0) != 0x80;
        if (bound_broken(prop, "minLength", (double)n, 1) ||
            bound_broken(prop, "maxLength", (double)n, 0)) {
            *why = "has a length outside the form's bounds (minLength, maxLength)";
            return NULL;
        }
        return cJSON_CreateString(s);
    }
    errno = 0;
    double d = strtod(s, &end);
    int integer = strcmp(type, "integer") == 0;
    if (end == s || *end || errno || !isfinite(d) ||
        (integer && (d != floor(d) || fabs(d) > 9e15))) {
        *why = integer ? "is not an integer" : "is not a number";
        return NULL;
    }
    if (bound_broken(prop, "minimum", d, 1) || bound_broken(prop, "maximum", d, 0)) {
        *why = "is outside the form's bounds (minimum, maximum)";
        return NULL;
    }
    return cJSON_CreateNumber(d);
}

/* The value of one property from its answer a (an array of strings):
 * owned, or NULL with *why (static text). */
static cJSON *value_of(const cJSON *prop, const cJSON *a, const char **why)
{
    const char *type = bt_json_str(prop, "type");
    cJSON *choices = choices_of(prop);
    cJSON *v = NULL;
    int n = cJSON_GetArraySize(a);
    if (strcmp(type, "array") == 0) {
        v = cJSON_CreateArray();
        const cJSON *s;
        cJSON_ArrayForEach(s, a)
        {
            const char *val = choices ? choice_value(choices, s->valuestring) : s->valuestring;
            if (!val) {
                *why = "names a choice the form does not offer";
                cJSON_Delete(v);
                v = NULL;
                break;
            }
            cJSON_AddItemToArray(v, cJSON_CreateString(val));
        }
        if (v && (bound_broken(prop, "minItems", n, 1) || bound_broken(prop, "maxItems", n, 0))) {
            *why = "has a number of choices outside the form's bounds (minItems, maxItems)";
            cJSON_Delete(v);
            v = NULL;
        }
    } else if (n != 1) {
        *why = "takes one answer, not several";
    } else if (choices && strcmp(type, "boolean") != 0) {
        const char *val = choice_value(choices, cJSON_GetArrayItem(a, 0)->valuestring);
        v = val ? cJSON_CreateString(val) : NULL;
        if (!v)
            *why = "is not among the form's choices";
    } else {
        v = scalar(prop, type, cJSON_GetArrayItem(a, 0)->valuestring, why);
    }
    cJSON_Delete(choices);
    return v;
}

static int required(const cJSON *schema, const char *name)
{
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(schema, "required"), *s;
    if (!cJSON_IsArray(r))
        return 0;
    cJSON_ArrayForEach(s, r)
    {
        if (cJSON_IsString(s) && strcmp(s->valuestring, name) == 0)
            return 1;
    }
    return 0;
}

/* 1 if a is an answer: an array of strings, not empty. */
static int answered(const cJSON *a)
{
    const cJSON *s;
    if (!cJSON_IsArray(a) || !a->child)
        return 0;
    cJSON_ArrayForEach(s, a) if (!cJSON_IsString(s)) return 0;
    return 1;
}

int bt_form_content(const char *schema_json, const char *answers_json, cJSON **content, char **why)
{
    *content = NULL;
    *why = NULL;
    cJSON *schema = schema_json ? cJSON_Parse(schema_json) : NULL;
    cJSON *answers = answers_json ? cJSON_Parse(answers_json) : cJSON_CreateArray();
    if (!bt_form_fillable(schema) || !cJSON_IsArray(answers)) {
        *why = bt_xstrdup(bt_form_fillable(schema) ? "the answers are not an array"
                                                   : "the form is not one baton can fill");
        cJSON_Delete(schema);
        cJSON_Delete(answers);
        return -EINVAL;
    }
    cJSON *out = cJSON_CreateObject();
    const cJSON *p;
    int i = 0;
    cJSON_ArrayForEach(p, bt_json_obj(schema, "properties"))
    {
        const cJSON *a = cJSON_GetArrayItem(answers, i++);
        const char *bad = NULL;
        if (!answered(a)) {
            if (required(schema, p->string))
                *why = bt_xasprintf("answer %d (%s) is required", i, p->string);
            if (*why)
                break;
            continue;
        }
        cJSON *v = value_of(p, a, &bad);
        if (!v) {
            *why = bt_xasprintf("answer %d (%s, %s) %s", i, p->string, bt_json_str(p, "type"), bad);
            break;
        }
        cJSON_AddItemToObject(out, p->string, v);
    }
    cJSON_Delete(schema);
    cJSON_Delete(answers);
    if (*why) {
        cJSON_Delete(out);
        return -EINVAL;
    }
    *content = out;
    return 0;
}
