# SPDX-License-Identifier: MIT
"""acptest: what the tests of `baton acp` share.

An Agent is one real `baton acp` process of a servetest.Home (a scratch
BATON_HOME with the fake coder as codex, its turns held at will with the
home's gate), spoken to over its stdin and stdout as an editor would.
Every line it writes is read by a thread, parsed, and checked: stdout
must hold JSON-RPC 2.0 messages only, each valid against the ACP schema
of the pinned SDK (BATON_TEST_ACP_SDK: tests/scripts/install-acp-sdk.sh;
schema/v1/schema.json): a response against the <Method>Response of the
request it answers (or Error), a notification against its method's
params.
"""
import json
import os
import queue
import subprocess
import sys
import threading
import time
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "serve"))
import servetest  # noqa: E402  (Home, wait_for, skip, the fixture's facts)
from servetest import skip  # noqa: E402

import jsonschema  # noqa: E402  (servetest checked it is there)

SDK = os.environ.get("BATON_TEST_ACP_SDK")
if not SDK:
    skip("BATON_TEST_ACP_SDK is not set (tests/scripts/install-acp-sdk.sh installs the "
         "ACP SDK; test.sh exports it)")
SCHEMA_PATH = Path(SDK) / "schema/v1/schema.json"
if not SCHEMA_PATH.is_file():
    skip(f"no ACP schema at {SCHEMA_PATH}")
DEFS = json.loads(SCHEMA_PATH.read_text())["$defs"]

# the schema's definition of each method's response and params
RESPONSES = {
    "initialize": "InitializeResponse",
    "authenticate": "AuthenticateResponse",
    "session/new": "NewSessionResponse",
    "session/load": "LoadSessionResponse",
    "session/resume": "ResumeSessionResponse",
    "session/list": "ListSessionsResponse",
    "session/set_config_option": "SetSessionConfigOptionResponse",
    "session/close": "CloseSessionResponse",
    "session/prompt": "PromptResponse",
}
NOTIFICATIONS = {"session/update": "SessionNotification"}
PROMPT = "Say hello banana"  # the fake coder's recorded prompt
REQUESTS = {"session/request_permission": "RequestPermissionRequest"}


def validator(name):
    return jsonschema.Draft202012Validator({"$defs": DEFS, "$ref": f"#/$defs/{name}"})


VALIDATORS = {name: validator(name) for name in
              set(RESPONSES.values()) | set(NOTIFICATIONS.values()) |
              set(REQUESTS.values()) | {"Error"}}


class Agent:
    """One `baton acp ARGS` of home. Messages it writes go to a queue; every
    problem with one (not JSON, not JSON-RPC, not the schema's) to
    self.problems, which the test checks at its end."""

    def __init__(self, home, *args):
        self.home = home
        self.err_path = os.path.join(home.dir, f"acp-{time.monotonic_ns()}.err")
        err = open(self.err_path, "ab")
        self.proc = subprocess.Popen(servetest.baton_argv(["acp", *args]), env=home.env,
                                     cwd=home.dir, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=err)
        err.close()
        self.next_id = 0
        self.methods = {}  # request id -> method, to check the answer's shape
        self.messages = queue.Queue()
        self.lines = []  # every line as written (bytes), for what JSON parsing hides
        self.problems = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for raw in self.proc.stdout:
            self.lines.append(raw)
            try:
                msg = json.loads(raw)
            except ValueError:
                self.problems.append(f"not JSON on stdout: {raw[:200]!r}")
                continue
            self._check(msg)
            self.messages.put(msg)
        self.messages.put(None)

    def _check(self, msg):
        def against(name, value):
            for e in VALIDATORS[name].iter_errors(value):
                self.problems.append(f"{name}: {e.message} at {list(e.absolute_path)}: "
                                     f"{json.dumps(msg)[:300]}")
        if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
            self.problems.append(f"not JSON-RPC 2.0: {json.dumps(msg)[:200]}")
            return
        if "method" in msg:
            name = NOTIFICATIONS.get(msg["method"]) or REQUESTS.get(msg["method"])
            if not name:
                self.problems.append(f"a method baton may not send: {msg['method']}")
            else:
                against(name, msg.get("params"))
        elif "error" in msg:
            against("Error", msg["error"])
        else:
            method = self.methods.get(msg.get("id"))
            if not method:
                self.problems.append(f"a response to no request: {json.dumps(msg)[:200]}")
            elif "result" not in msg:
                self.problems.append(f"a response without result: {json.dumps(msg)[:200]}")
            elif method == "session/cancel":  # a notification the client sent with an id
                if msg["result"] != {}:
                    self.problems.append(f"cancel answered {json.dumps(msg)[:200]}")
            else:
                against(RESPONSES[method], msg["result"])

    def write(self, text):
        self.proc.stdin.write(text.encode() if isinstance(text, str) else text)
        self.proc.stdin.flush()

    def send(self, method, params=None, id=None):
        """Write a request (an id is made unless given) and return its id."""
        if id is None:
            self.next_id += 1
            id = self.next_id
        self.methods[id] = method
        msg = {"jsonrpc": "2.0", "id": id, "method": method}
        if params is not None:
            msg["params"] = params
        self.write(json.dumps(msg) + "\n")
        return id

    def notify(self, method, params):
        self.write(json.dumps({"jsonrpc": "2.0", "method": method, "params": params}) + "\n")

    def next(self, timeout=30):
        try:
            msg = self.messages.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"baton acp wrote nothing for {timeout} s; stderr: "
                                 f"{self.stderr()[-1000:]}") from None
        if msg is None:
            raise AssertionError(f"baton acp's stdout ended (exit {self.proc.poll()}); "
                                 f"stderr: {self.stderr()[-1000:]}")
        return msg

    def answer(self, id, timeout=30, updates=None):
        """The response to request id; notifications before it go to
        updates (a list) when given, and must not come otherwise."""
        while True:
            msg = self.next(timeout)
            if msg.get("id") == id and "method" not in msg:
                return msg
            if updates is None:
                raise AssertionError(f"before the answer to {id}: {json.dumps(msg)[:300]}")
            updates.append(msg)

    def answers(self, ids, timeout=60, updates=None, got=None):
        """The responses to every request of ids, in whatever order they
        come (into got, a dict by id, when given); notifications and
        requests between them go to updates when given."""
        got = {} if got is None else got
        while not set(ids) <= set(got):
            msg = self.next(timeout)
            if "method" in msg:
                if updates is not None:
                    updates.append(msg)
            else:
                got[msg["id"]] = msg
        return got

    def request(self, method, params=None, updates=None, timeout=30):
        """A request and its response's result; AssertionError on an error."""
        msg = self.answer(self.send(method, params), timeout, updates)
        if "error" in msg:
            raise AssertionError(f"{method}: {msg['error']}")
        return msg["result"]

    def error(self, method, params=None):
        """A request that must fail: its error object."""
        msg = self.answer(self.send(method, params))
        if "error" not in msg:
            raise AssertionError(f"{method} did not fail: {msg}")
        return msg["error"]

    def initialize(self):
        return self.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})

    def new_session(self, cwd=None):
        r = self.request("session/new", {"cwd": cwd or self.home.project, "mcpServers": []})
        return r["sessionId"]

    def prompt(self, sid, text, updates=None, timeout=60):
        return self.request("session/prompt",
                            {"sessionId": sid, "prompt": [{"type": "text", "text": text}]},
                            updates if updates is not None else [], timeout)

    def close(self, timeout=30):
        """End its stdin and wait for it; its exit status."""
        if self.proc.stdin and not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"baton acp did not end {timeout} s after its stdin did")
        finally:
            self.reader.join(10)
            self.proc.stdout.close()

    def stderr(self):
        try:
            with open(self.err_path, encoding="utf-8", errors="replace") as f:
                return f.read()
        except OSError:
            return ""


class AgentCase(unittest.TestCase):
    """Agents of one scratch home, closed at the end; a message of theirs
    that breaks the schema fails the test."""

    def setUp(self):
        self.home = servetest.Home("acp")
        self.agents = []

    def tearDown(self):
        failed = any(e for _, e in getattr(self._outcome, "errors", []) if e) or \
            not getattr(self._outcome, "success", True)
        for a in self.agents:
            if a.proc.poll() is None:
                a.close()
        self.home.cleanup(failed=failed)
        for a in self.agents:
            self.assertEqual(a.problems, [], "messages that break the ACP schema")

    def agent(self, *args, init=True):
        a = Agent(self.home, *args)
        self.agents.append(a)
        if init:
            a.initialize()
        return a

    def conversation(self, sid):
        return [c for c in self.home.ls() if c["id"] == sid]

    def running(self, sid):
        return any(c["last_run_state"] == "running" for c in self.conversation(sid))

    def queued(self, sid):
        return [m["text"] for m in self.home.show(sid)["messages"] if m["state"] == "queued"]

    def start_held(self, a, sid):
        """A prompt whose turn waits at the gate; its request id."""
        self.home.gate.hold()
        id = a.send("session/prompt", {"sessionId": sid,
                                       "prompt": [{"type": "text", "text": PROMPT}]})
        servetest.wait_for(lambda: self.running(sid), 30, "the turn to run")
        return id


def text_of(updates, kind="agent_message_chunk"):
    """The text of the updates of one kind, joined."""
    return "".join(u["params"]["update"]["content"]["text"] for u in updates
                   if u.get("method") == "session/update" and
                   u["params"]["update"]["sessionUpdate"] == kind)


def kinds(updates):
    return [u["params"]["update"]["sessionUpdate"] for u in updates
            if u.get("method") == "session/update"]
