#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""serve-openapi: src/serve/web/openapi.json itself, without a server.

Debian ships no meta-schema of OpenAPI 3.1 (openapi-specification has
3.0's only), so the document is checked here by structure: every schema
in it against the JSON Schema 2020-12 meta-schema (which jsonschema
bundles), every reference resolving, every operation's parameters,
responses, errors and security as OpenAPI 3.1 and docs/api.md say; the
endpoints and error kinds are those of docs/api.md, the event schema is
docs/events.schema.json's, every recorded event of fixtures/ is valid
under it, every example is valid under its schema, and the objects have
exactly the members the CLI prints (`baton ls/show/coders --json`).
"""
import glob
import json
import re
import unittest

import servetest  # first: it skips the program when jsonschema is missing
import jsonschema  # noqa: E402 (after servetest's check)
from contract import Contract

API_MD = servetest.TOP / "docs/api.md"
METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
COMMON = {"401", "403", "421", "500", "503"}
# what docs/api.md serves without the token: the page and this document
TOKEN_FREE = {("get", "/"), ("get", "/v1/openapi.json")}


def subschemas(s, path=()):
    """Every (path, schema) in schema s, following schema keywords only
    (not into examples, enums or constants)."""
    if not isinstance(s, dict):
        return
    yield path, s
    for k in ("properties", "$defs"):
        for name, sub in s.get(k, {}).items():
            yield from subschemas(sub, path + (k, name))
    for k in ("items", "not", "additionalProperties", "unevaluatedProperties"):
        if isinstance(s.get(k), dict):
            yield from subschemas(s[k], path + (k,))
    for k in ("oneOf", "anyOf", "allOf"):
        for i, sub in enumerate(s.get(k, [])):
            yield from subschemas(sub, path + (k, i))


def walk(node, path=()):
    """Every (path, dict) in node, depth first."""
    if isinstance(node, dict):
        yield path, node
        for k, v in node.items():
            yield from walk(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from walk(v, path + (i,))


class Document(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.api = Contract(servetest.OPENAPI)
        cls.doc = cls.api.doc
        cls.md = API_MD.read_text(encoding="utf-8")

    def operations(self):
        for template, item in self.doc["paths"].items():
            for m in METHODS:
                if m in item:
                    yield template, m, item, item[m]

    def schemas(self):
        """(where, schema) of every schema the document holds."""
        comp = self.doc["components"]
        for name, s in comp["schemas"].items():
            yield f"components/schemas/{name}", s
        for name, p in comp["parameters"].items():
            yield f"components/parameters/{name}", p["schema"]
        for path, node in walk(self.doc):
            if "schema" in node and isinstance(node["schema"], dict) and (
                    "content" in path or "headers" in path):
                yield "/".join(map(str, path)), node["schema"]
            for k in ("x-baton-event-data", "x-baton-ping-data"):
                if k in node:
                    yield "/".join(map(str, path + (k,))), node[k]

    def test_version_and_info(self):
        self.assertRegex(self.doc["openapi"], r"^3\.1\.\d+$")
        for k in ("title", "version"):
            self.assertIsInstance(self.doc["info"][k], str)
        self.assertTrue(all(p.startswith("/") for p in self.doc["paths"]))

    def test_references_resolve(self):
        for path, node in walk(self.doc):
            ref = node.get("$ref")
            if isinstance(ref, str):
                with self.subTest(at="/".join(map(str, path))):
                    self.assertTrue(ref.startswith("#/"), ref)
                    self.api.pointer(ref)

    def test_schemas_are_2020_12(self):
        n = 0
        for where, s in self.schemas():
            n += 1
            with self.subTest(schema=where):
                jsonschema.Draft202012Validator.check_schema(s)
                self.api.validator(s)  # compiles with the components at its root
        self.assertGreater(n, 40)

    def test_schemas_are_not_bare_types(self):
        """A misspelt keyword is no error to a validator: catch them here."""
        known = {"$schema", "$id", "$ref", "$defs", "$comment", "type", "enum", "const",
                  "properties", "required", "additionalProperties", "items", "oneOf",
                  "anyOf", "allOf", "not", "pattern", "minimum", "maximum", "minLength",
                  "maxLength", "format", "description", "title", "examples", "default",
                  "unevaluatedProperties", "minItems"}
        for where, s in self.schemas():
            for path, node in subschemas(s):
                unknown = set(node) - known
                self.assertFalse(unknown, f"{where}/{'/'.join(map(str, path))}: unknown "
                                 f"keywords {unknown}")

    def test_examples_are_valid(self):
        n = 0
        for where, s in self.schemas():
            for ex in s.get("examples", []):
                n += 1
                self.api.assert_valid(ex, s, f"the example of {where}")
        self.assertGreater(n, 5)

    def test_objects_are_closed(self):
        """Every object baton defines says additionalProperties: false; the
        events are open on purpose (docs/events.md: unknown members are
        ignored), and so are the allOf refinements of a closed object."""
        for name, s in self.doc["components"]["schemas"].items():
            if name == "Event" or "allOf" in s:
                continue
            for path, node in subschemas(s):
                if node.get("type") == "object" and "properties" in node:
                    with self.subTest(schema=name, at="/".join(map(str, path))):
                        self.assertIs(node.get("additionalProperties"), False)

    def test_operations(self):
        ids = set()
        for template, m, item, op in self.operations():
            with self.subTest(op=f"{m.upper()} {template}"):
                self.assertNotIn(op["operationId"], ids)
                ids.add(op["operationId"])
                params = [self.api.resolve(p) for p in item.get("parameters", [])
                          + op.get("parameters", [])]
                in_path = {p["name"] for p in params if p["in"] == "path"}
                self.assertEqual(in_path, set(re.findall(r"{(\w+)}", template)))
                for p in params:
                    self.assertIn(p["in"], ("path", "query", "header", "cookie"))
                    if p["in"] == "path":
                        self.assertIs(p.get("required"), True)
                responses = op["responses"]
                self.assertTrue(any(s.startswith("2") for s in responses))
                for status, r in responses.items():
                    r = self.api.resolve(r)
                    self.assertRegex(status, r"^[1-5][0-9][0-9]$")
                    self.assertIsInstance(r.get("description"), str)
                    if status[0] in "45":
                        self.assertEqual(list(r["content"]), ["application/json"])
                if (m, template) in TOKEN_FREE:
                    self.assertEqual(op.get("security"), [])
                    self.assertNotIn("401", responses)
                else:
                    self.assertNotIn("security", op)  # the global bearer or cookie
                if template.startswith("/v1/"):
                    self.assertLessEqual(COMMON - {"401"}, set(responses))
                    self.assertEqual("401" in responses, (m, template) not in TOKEN_FREE)
                if "requestBody" in op:
                    self.assertEqual(list(op["requestBody"]["content"]), ["application/json"])
                    self.assertIn(m, ("post", "put", "patch"))
                if m in ("post", "delete") and template.startswith("/v1/"):
                    self.assertLessEqual({"413", "415"}, set(responses))

    def test_security(self):
        schemes = self.doc["components"]["securitySchemes"]
        self.assertEqual(schemes["bearer"], schemes["bearer"] | {"type": "http",
                                                                  "scheme": "bearer"})
        self.assertEqual(schemes["cookie"], schemes["cookie"] | {
            "type": "apiKey", "in": "cookie", "name": "baton_token"})
        for req in self.doc["security"]:
            self.assertLessEqual(set(req), set(schemes))

    def test_error_responses(self):
        """Each error response takes its kinds and only those, as in the
        table of docs/api.md."""
        table = re.findall(r"^\| (\d{3}) \| `(\w+)` \|", self.md, re.M)
        self.assertGreater(len(table), 10)
        kinds = self.doc["components"]["schemas"]["ErrorKind"]["enum"]
        self.assertEqual(sorted(kinds), sorted(k for _, k in table))
        by_status = {}
        for status, kind in table:
            by_status.setdefault(status, set()).add(kind)
        for template, m, _, op in self.operations():
            for status, r in op["responses"].items():
                if status[0] not in "45":
                    continue
                schema = self.api.resolve(r)["content"]["application/json"]["schema"]
                for kind in kinds:
                    body = {"error": {"kind": kind, "message": "a sentence"}}
                    ok = not self.api.errors(body, schema)
                    self.assertEqual(ok, kind in by_status[status],
                                     f"{m.upper()} {template} {status} and kind {kind}")
                kind = sorted(by_status[status])[0]
                self.assertTrue(self.api.errors({"error": {"kind": kind}}, schema))
                self.assertTrue(self.api.errors({"error": {"kind": kind, "message": "m"},
                                                 "x": 1}, schema))

    def test_endpoints_are_those_of_api_md(self):
        """Every `METHOD /v1/...` docs/api.md names, and nothing else."""
        named = set()
        for m, path in re.findall(r"`(GET|POST|DELETE|PUT|PATCH) (/v1/[^`\s?\[]*)", self.md):
            named.add((m.lower(), path))
        documented = {(m, t) for t, m, _, _ in self.operations() if t.startswith("/v1/")}
        self.assertEqual(documented, named)

    def test_event_schema_is_events_schema_json(self):
        with open(servetest.EVENTS_SCHEMA, encoding="utf-8") as f:
            events = json.load(f)
        copy = {k: v for k, v in events.items() if k not in ("$schema", "$id")}
        self.assertEqual(self.doc["components"]["schemas"]["Event"], copy,
                         "components/schemas/Event is no longer docs/events.schema.json")

    def test_recorded_events_are_valid(self):
        n = 0
        for path in sorted(glob.glob(str(servetest.TOP / "fixtures/*/*/*.events.jsonl"))):
            with open(path, encoding="utf-8") as f:
                for i, line in enumerate(f, 1):
                    if not line.startswith("{"):
                        continue  # "#turn-end ..." notes, which may go on a line
                    n += 1
                    self.api.assert_valid(json.loads(line), "#/components/schemas/Event",
                                          f"{path}:{i}")
        self.assertGreater(n, 100)


class AsTheCliPrints(unittest.TestCase):
    """The members of conversations, messages and coders are those the CLI
    prints with --json (the API adds context, snippet and html)."""

    @classmethod
    def setUpClass(cls):
        cls.home = servetest.Home("openapi")
        cls.home.baton("run", "--json", "-C", cls.home.project, "hello")
        cls.schemas = Contract(servetest.OPENAPI).doc["components"]["schemas"]

    @classmethod
    def tearDownClass(cls):
        cls.home.cleanup()

    def members(self, name):
        return set(self.schemas[name]["properties"])

    def test_conversation(self):
        (conv,) = self.home.ls()
        self.assertEqual(self.members("Conversation") - {"context", "snippet"}, set(conv))
        self.assertEqual(set(self.schemas["Conversation"]["required"]), set(conv))

    def test_message(self):
        (conv,) = self.home.ls()
        show = self.home.show(conv["id"])
        for m in show["messages"]:
            self.assertEqual(self.members("Message") - {"html"}, set(m))
        self.assertEqual(set(self.schemas["Message"]["required"]), set(show["messages"][0]))

    def test_coder(self):
        out = self.home.baton("coders", "--json").stdout.decode().splitlines()
        for line in out:
            self.assertEqual(self.members("Coder"), set(json.loads(line)))


if __name__ == "__main__":
    servetest.main()
