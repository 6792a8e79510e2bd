# SPDX-License-Identifier: MIT
"""contract: responses checked against src/serve/web/openapi.json.

Every response a test gets is looked up in the document by method, path
template and status: a status the operation does not list fails, and a
body is validated with a JSON Schema Draft 2020-12 validator whose root
holds the document's components, so "#/components/..." references
resolve as they do in the document. date-time strings are checked for
the one form baton writes (RFC 3339, UTC, milliseconds); the default
format checker of jsonschema would need packages Debian does not
install with it.
"""
import json
import re

import jsonschema

TIME_RE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")

FORMATS = jsonschema.FormatChecker(formats=())


@FORMATS.checks("date-time")
def _date_time(value):
    return not isinstance(value, str) or TIME_RE.match(value) is not None


class Contract:
    def __init__(self, path):
        with open(path, encoding="utf-8") as f:
            self.doc = json.load(f)
        self._validators = {}

    def resolve(self, node):
        """Follow a local $ref (one object, not a schema's)."""
        while isinstance(node, dict) and "$ref" in node and len(node) == 1:
            node = self.pointer(node["$ref"])
        return node

    def pointer(self, ref):
        if not ref.startswith("#/"):
            raise AssertionError(f"not a local reference: {ref}")
        node = self.doc
        for part in ref[2:].split("/"):
            node = node[part.replace("~1", "/").replace("~0", "~")]
        return node

    def validator(self, schema):
        """A validator of schema (a schema object of the document, or a
        "#/components/schemas/X" string)."""
        if isinstance(schema, str):
            schema = {"$ref": schema}
        key = json.dumps(schema, sort_keys=True)
        v = self._validators.get(key)
        if v is None:
            root = dict(schema)
            root["components"] = self.doc["components"]
            v = jsonschema.Draft202012Validator(root, format_checker=FORMATS)
            self._validators[key] = v
        return v

    def errors(self, instance, schema):
        """Every validation error of instance, as lines ("" when valid)."""
        errs = sorted(self.validator(schema).iter_errors(instance),
                      key=lambda e: list(e.absolute_path))
        lines = []
        for e in errs:
            lines.append(f"at {'/'.join(map(str, e.absolute_path)) or '(root)'}: "
                         f"{e.message[:400]}")
            for sub in sorted(e.context or [], key=lambda s: list(s.absolute_path))[:6]:
                lines.append(f"    {'/'.join(map(str, sub.absolute_path))}: "
                             f"{sub.message[:200]}")
        return "\n".join(lines)

    def assert_valid(self, instance, schema, what="instance"):
        errs = self.errors(instance, schema)
        if errs:
            text = json.dumps(instance, ensure_ascii=False)[:2000]
            name = schema if isinstance(schema, str) else "its schema"
            raise AssertionError(f"{what} does not match {name}:\n{errs}\n{text}")

    def operation(self, method, template):
        path = self.doc["paths"].get(template)
        if path is None:
            raise AssertionError(f"no path {template} in openapi.json")
        op = path.get(method.lower())
        if op is None:
            raise AssertionError(f"no {method} {template} in openapi.json")
        return op

    def check(self, resp, method, template, status=None):
        """Assert that resp is a documented response of method template
        (with status, when given) and return its JSON body (None when it
        has none)."""
        if status is not None and resp.status != status:
            raise AssertionError(f"{method} {template}: expected {status}, got {resp!r}")
        no_cors(resp)
        op = self.operation(method, template)
        r = op["responses"].get(str(resp.status))
        if r is None:
            raise AssertionError(f"{method} {template}: status {resp.status} is not "
                                 f"documented: {resp!r}")
        r = self.resolve(r)
        for name, h in r.get("headers", {}).items():
            h = self.resolve(h)
            value = resp.header(name)
            if value is None:
                if h.get("required"):
                    raise AssertionError(f"{method} {template} {resp.status}: no {name} "
                                         f"header")
                continue
            self.assert_valid(value, h["schema"], f"header {name}")
        content = r.get("content")
        if not content:
            if resp.body:
                raise AssertionError(f"{method} {template} {resp.status}: a body where "
                                     f"none is documented: {resp!r}")
            return None
        mt = resp.media_type()
        if mt not in content:
            raise AssertionError(f"{method} {template} {resp.status}: Content-Type "
                                 f"{resp.header('content-type')!r}, documented: "
                                 f"{sorted(content)}")
        if mt != "application/json":
            return None
        body = resp.json()
        self.assert_valid(body, content[mt]["schema"],
                          f"{method} {template} {resp.status} body")
        return body

    def check_error(self, resp, status, kind, method=None, template=None):
        """Assert an error response: status, the error schema, its kind;
        against the operation too when method and template are given
        (requests that match no route have no operation)."""
        if resp.status != status:
            where = f"{method} {template}: " if method else ""
            raise AssertionError(f"{where}expected {status} {kind}, got {resp!r}")
        no_cors(resp)
        if resp.media_type() != "application/json":
            raise AssertionError(f"error {status} is not application/json: "
                                 f"{resp.header('content-type')!r} {resp!r}")
        body = resp.json()
        self.assert_valid(body, "#/components/schemas/Error", f"error {status}")
        if body["error"]["kind"] != kind:
            raise AssertionError(f"expected kind {kind}, got {body}")
        if method:
            self.check(resp, method, template, status)
        return body


def no_cors(resp):
    """No CORS header is ever sent (docs/api.md)."""
    bad = [k for k, _ in resp.headers if k.startswith("access-control-")]
    if bad:
        raise AssertionError(f"CORS headers sent: {bad} in {resp.headers}")
