#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""drift.py: the comparisons of tests/scripts/drift.sh, in Python 3's
standard library only (Debian's python3 will do; nothing from pip).

  drift.py schema-digest SCHEMA_DIR
      The normalized digest of `codex app-server generate-json-schema --out
      SCHEMA_DIR` (its codex_app_server_protocol.schemas.json bundle): one
      line per method ('method client-request thread/start
      params=ref(v2/ThreadStartParams)') and one per type, field and enum
      value ('type v2/Thread', 'v2/Thread.createdAt: integer',
      'v2/ThreadItem{type=agentMessage}.phase?: null|ref(v2/MessagePhase)':
      ? optional, {type=...} a tagged union's variant, [] an array's
      elements, .* a map's values; 'v2/TurnStatus = "completed"'), sorted.
      Descriptions, titles and defaults are left out: only what a client
      can see on the wire. fixtures/codex/<version>/app-server-schema.txt
      is this output.

  drift.py shapes FILE...
      The shapes of the messages in coder output files (JSON lines; *.gz
      and *.zst are decompressed, the latter with zstd(1)): for each
      message its type (JSON-RPC "method", else "type", plus "subtype";
      a response "response", an error response "error") and every dotted
      key path in it, values dropped, array elements as [], an object with a
      "type", "subtype", "method" or "sessionUpdate" string named with it
      ("params.update{sessionUpdate=tool_call}.kind"), keys that are data
      (paths, ids, names with '/', '.' or ':') as *. One line each, sorted,
      unique. Lines that are not JSON objects are counted, not shown.

  drift.py diff OLD NEW
      What NEW (a digest or shapes listing) has that OLD has not ("+ "),
      and the reverse ("- "); a path whose type changed is one "~ " line
      (OLD's then NEW's). Methods first. Prints "no difference" when there
      is none. Exit status 0 either way.

Exit status: 0, or 2 for a usage error or a file that cannot be read.
"""

import gzip
import json
import os
import re
import subprocess
import sys

# ---- codex's schema digest ---------------------------------------------

# The unions of the bundle whose variants are the protocol's methods.
METHOD_UNIONS = {
    "ClientRequest": "client-request",
    "ClientNotification": "client-notification",
    "ServerRequest": "server-request",
    "ServerNotification": "server-notification",
}


def ref_name(ref):
    """'#/definitions/v2/Thread' -> 'v2/Thread' (the digest's type name)."""
    return ref.split("#/definitions/", 1)[-1]


def discriminator(variant):
    """The (key, value) of the property of a union variant that is fixed to
    one string (serde's tag), or None."""
    props = variant.get("properties") or {}
    for key in ("type", "method", "kind", "sessionUpdate", "status"):
        enum = (props.get(key) or {}).get("enum")
        if isinstance(enum, list) and len(enum) == 1 and isinstance(enum[0], str):
            return key, enum[0]
    return None


def type_words(schema):
    """What a schema is, briefly: 'string', 'integer|null', 'ref(X)',
    'array', 'object'; '' when it only has properties or a union."""
    words = []
    if "$ref" in schema:
        words.append("ref(%s)" % ref_name(schema["$ref"]))
    t = schema.get("type")
    if isinstance(t, str):
        words.append(t)
    elif isinstance(t, list):
        words.extend(x for x in t if isinstance(x, str))
    if "const" in schema:
        words.append("const %s" % json.dumps(schema["const"]))
    return words


class Digest:
    def __init__(self):
        self.lines = set()
        self.types = {}  # path -> the words of every schema found there

    def emit(self, line):
        self.lines.add(line)

    def all_lines(self):
        typed = ("%s: %s" % (p, "|".join(sorted(w))) for p, w in self.types.items())
        return sorted(self.lines.union(typed))

    def walk(self, path, schema, depth=0):
        if not isinstance(schema, dict) or depth > 40:
            return
        words = type_words(schema)
        union = schema.get("oneOf") or schema.get("anyOf") or []
        # a nullable or a plain alternative of types: [X, null]
        variants = []
        for v in union:
            if not isinstance(v, dict):
                continue
            if set(v) <= {"$ref", "type", "description", "title", "format"} and not v.get(
                "properties"
            ):
                words.extend(w for w in type_words(v) if w not in words)
            else:
                variants.append(v)
        items = schema.get("items")
        if isinstance(items, dict):
            self.walk(path + "[]", items, depth + 1)
            if "array" not in words:
                words.append("array")
        for value in schema.get("enum") or []:
            self.emit("%s = %s" % (path, json.dumps(value)))
        props = schema.get("properties")
        if isinstance(props, dict):
            required = set(schema.get("required") or [])
            for key in sorted(props):
                self.walk(
                    "%s.%s%s" % (path, key, "" if key in required else "?"),
                    props[key],
                    depth + 1,
                )
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict) and extra:
            self.walk(path + ".*", extra, depth + 1)
        for v in variants:
            tag = discriminator(v)
            if tag:
                sub = "%s{%s=%s}" % (path, tag[0], tag[1])
                v = dict(v)
                v["properties"] = {k: s for k, s in v["properties"].items() if k != tag[0]}
                v["required"] = [k for k in v.get("required") or [] if k != tag[0]]
            elif not isinstance(v.get("properties"), dict):
                sub = path  # an enum, an array, a nested union: the same place
            else:
                sub = "%s{%s}" % (path, ",".join(sorted(v.get("required") or [])) or "-")
            self.walk(sub, v, depth + 1)
        if words:
            self.types.setdefault(path, set()).update(words)

    def methods(self, kind, union):
        for v in union.get("oneOf") or []:
            props = v.get("properties") or {}
            enum = (props.get("method") or {}).get("enum") or []
            params = props.get("params") or {}
            for m in enum:
                words = type_words(params)
                self.emit(
                    "method %s %s%s"
                    % (kind, m, " params=" + "|".join(words) if words else "")
                )


def schema_digest(schema_dir):
    path = os.path.join(schema_dir, "codex_app_server_protocol.schemas.json")
    with open(path, encoding="utf-8") as f:
        bundle = json.load(f)
    d = Digest()
    defs = bundle.get("definitions") or {}
    for name, schema in defs.items():
        if name == "v2" and isinstance(schema, dict) and "type" not in schema:
            for sub, s in schema.items():
                d.emit("type v2/%s" % sub)
                d.walk("v2/" + sub, s)
            continue
        if name in METHOD_UNIONS:
            d.methods(METHOD_UNIONS[name], schema)
            continue
        d.emit("type %s" % name)
        d.walk(name, schema)
    return d.all_lines()


# ---- shapes of recorded messages ---------------------------------------

TAG_KEYS = ("type", "subtype", "method", "sessionUpdate")
DATA_KEY = re.compile(r"[/.:]|^[0-9a-f-]{16,}$|^[0-9]+$")


def key_of(key):
    return "*" if DATA_KEY.search(key) else key


def tagged(obj, path):
    tags = ["%s=%s" % (k, obj[k]) for k in TAG_KEYS if isinstance(obj.get(k), str)]
    return "%s{%s}" % (path, ",".join(tags)) if tags else path


def paths(value, path, out, depth=0):
    if depth > 30:
        return
    if isinstance(value, dict):
        path = tagged(value, path)
        out.add(path)
        for k, v in value.items():
            if k in TAG_KEYS and isinstance(v, str):
                continue
            paths(v, "%s.%s" % (path, key_of(k)) if path else key_of(k), out, depth + 1)
    elif isinstance(value, list):
        out.add(path + "[]")
        for v in value:
            paths(v, path + "[]", out, depth + 1)
    else:
        out.add(path)


def message_type(msg):
    if isinstance(msg.get("method"), str):
        return msg["method"]
    if "id" in msg and ("result" in msg or "error" in msg):
        return "response" if "result" in msg else "error"
    t = msg.get("type")
    if isinstance(t, str):
        sub = msg.get("subtype")
        return "%s/%s" % (t, sub) if isinstance(sub, str) else t
    return "(untyped)"


def open_lines(path):
    if path.endswith(".gz"):
        with gzip.open(path, "rt", encoding="utf-8", errors="replace") as f:
            yield from f
    elif path.endswith(".zst"):
        p = subprocess.run(["zstd", "-dcq", path], capture_output=True, check=False)
        yield from p.stdout.decode("utf-8", "replace").splitlines()
    else:
        with open(path, encoding="utf-8", errors="replace") as f:
            yield from f


def shapes(files):
    out, other = set(), 0
    for path in files:
        for line in open_lines(path):
            line = line.strip()
            if not line:
                continue
            try:
                msg = json.loads(line)
            except ValueError:
                other += 1
                continue
            if not isinstance(msg, dict):
                other += 1
                continue
            mt = message_type(msg)
            found = set()
            rest = {k: v for k, v in msg.items() if k not in ("method", "type", "subtype")}
            paths(rest, "", found)
            for p in found:
                out.add("%s %s" % (mt, p) if p else mt)
    return sorted(out), other


# ---- set differences ---------------------------------------------------


def read_set(path):
    with open(path, encoding="utf-8") as f:
        return {line.rstrip("\n") for line in f if line.strip()}


def split_typed(line):
    """'path: words' -> (path, words); other lines (None, None)."""
    if line.startswith(("method ", "type ")) or " = " in line:
        return None, None
    i = line.rfind(": ")
    return (line[:i], line[i + 2 :]) if i > 0 else (None, None)


def diff(old, new):
    added, removed = sorted(new - old), sorted(old - new)
    changed = []
    old_typed = {}
    for line in removed:
        p, w = split_typed(line)
        if p is not None:
            old_typed[p] = (line, w)
    keep_added, gone = [], set()
    for line in added:
        p, w = split_typed(line)
        if p is not None and p in old_typed:
            changed.append("~ %s: %s -> %s" % (p, old_typed[p][1], w))
            gone.add(old_typed[p][0])
        else:
            keep_added.append(line)
    removed = [line for line in removed if line not in gone]

    def order(lines):
        return sorted(lines, key=lambda s: (not s.startswith("method "), s))

    return (
        ["+ " + s for s in order(keep_added)]
        + ["- " + s for s in order(removed)]
        + sorted(changed)
    )


def usage():
    sys.stderr.write(__doc__.split("\n\n", 1)[1].split("Exit status")[0])
    return 2


def main(argv):
    if len(argv) < 2:
        return usage()
    cmd, args = argv[1], argv[2:]
    try:
        if cmd == "schema-digest" and len(args) == 1:
            for line in schema_digest(args[0]):
                print(line)
            return 0
        if cmd == "shapes" and args:
            lines, other = shapes(args)
            for line in lines:
                print(line)
            if other:
                sys.stderr.write("drift.py: %d lines were not JSON objects\n" % other)
            return 0
        if cmd == "diff" and len(args) == 2:
            lines = diff(read_set(args[0]), read_set(args[1]))
            print("\n".join(lines) if lines else "no difference")
            return 0
    except (OSError, ValueError) as e:
        sys.stderr.write("drift.py: %s\n" % e)
        return 2
    return usage()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
