# SPDX-License-Identifier: MIT
"""acpsdk: what the tests of `baton acp` through the official ACP SDK share.

The client is tests/acp/sdk-client.mjs, a Node module made of the pinned
@agentclientprotocol/sdk (tests/scripts/install-acp-sdk.sh; its package
directory in BATON_TEST_ACP_SDK): it spawns `baton acp`, runs a scenario of
requests and notifications through the SDK's ClientApp and prints one JSON
line per fact it observed. A Facts holds those lines; Facts.check fails a
test when the SDK could not take what baton wrote (a response its own zod
schema rejects, a session/update it could not parse) or when the client or
baton did not end cleanly.

A Home is a scratch directory with its own BATON_HOME, HOME and project
directories; the fake coder (tests/fake-coder) is codex and every other
coder points at a file that does not exist, unless a live test puts a real
CLI in (tests/acp/test_sdk_live.py).

A Standin is a baton-standin (tests/standin) of a live test's own, the
model the real CLIs talk to offline (servetest's, as tests/live/live.c
starts it).

Environment (ctest sets it, tests/acp/CMakeLists.txt): BATON_BIN,
BATON_FAKE_CODER, BATON_TEST_TMPDIR, BATON_FIXTURES, BATON_STANDIN (live
only); BATON_TEST_ACP_SDK
(from the environment: tests/scripts/test.sh exports it); BATON_TEST_NODE
(a node binary other than the one on PATH); BATON_TEST_KEEP keeps the
scratch directories. Without the SDK or node the program prints
"SKIPPED: reason" and exits 77 (ctest: Skipped, never Passed).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "serve"))

HERE = Path(__file__).resolve().parent
TOP = HERE.parents[1]
BATON = os.environ.get("BATON_BIN") or str(TOP / "build" / "baton")
FAKE = os.environ.get("BATON_FAKE_CODER") or str(TOP / "build/tests/fake-coder/fake-coder")
FIXTURES = Path(os.environ.get("BATON_FIXTURES") or TOP / "fixtures") / "codex" / "0.171.0"
SDK = os.environ.get("BATON_TEST_ACP_SDK", "")
NODE = os.environ.get("BATON_TEST_NODE") or shutil.which("node") or ""
CLIENT = HERE / "sdk-client.mjs"
STANDIN = os.environ.get("BATON_STANDIN") or str(TOP / "build/tests/standin/baton-standin")
LIVE_ENV = TOP / "tests" / "live"  # <coder>-env.sh
SKIP = 77

INITIALIZE = {"request": "initialize",
              "params": {"protocolVersion": 1,
                         "clientCapabilities": {"fs": {"readTextFile": False,
                                                       "writeTextFile": False},
                                                "terminal": False},
                         "clientInfo": {"name": "baton-test-sdk-client", "version": "1"}}}


def skip(reason):
    """End the test program as skipped (ctest SKIP_RETURN_CODE)."""
    print(f"SKIPPED: {reason}", flush=True)
    sys.exit(SKIP)


def require():
    """Skip without the SDK or node; fail when node cannot load the SDK
    (a Node too old for it: tests/scripts/install-node22.sh has one, given
    as BATON_TEST_NODE) or baton is not built."""
    if not SDK:
        skip("BATON_TEST_ACP_SDK is not set (tests/scripts/test.sh sets it from "
             "tests/scripts/install-acp-sdk.sh)")
    entry = Path(SDK) / "dist/v1/stable/acp.js"
    if not entry.is_file():
        skip(f"BATON_TEST_ACP_SDK={SDK} holds no dist/v1/stable/acp.js")
    if not NODE:
        skip("no node on PATH (and BATON_TEST_NODE is not set)")
    p = subprocess.run([NODE, "-e", f"import({json.dumps(str(entry))}).then(m => "
                        "process.stdout.write(typeof m.client + ' ' + typeof m.ndJsonStream))"],
                       capture_output=True, timeout=60)
    if p.returncode != 0 or p.stdout != b"function function":
        print(f"error: {NODE} cannot load the SDK's {entry}: "
              f"{p.stderr.decode(errors='replace')[-1500:]}", file=sys.stderr)
        sys.exit(1)
    for what, path in (("baton", BATON), ("the fake coder", FAKE)):
        if not os.access(path, os.X_OK):
            print(f"error: {what} is not built: {path} (build first: "
                  f"bash tests/scripts/build.sh)", file=sys.stderr)
            sys.exit(1)


def new_session(cwd, name="s"):
    return {"request": "session/new", "params": {"cwd": cwd, "mcpServers": []}, "as": name}


def sid(name="s"):
    """The sessionId of the session/new (or load) step named name, as
    sdk-client substitutes it in params."""
    return "${%s.sessionId}" % name


def prompt(session, text, **kw):
    """A session/prompt step: session an id or sid(NAME), text one text
    block; kw: the step's other members (as, async, timeout_ms)."""
    return {"request": "session/prompt", "params": {"sessionId": session, "prompt": text}, **kw}


def notify(method, session):
    return {"notify": method, "params": {"sessionId": session}}


class Facts:
    """What one sdk-client run observed: its lines, in order."""

    def __init__(self, proc, facts):
        self.proc = proc
        self.facts = facts

    def __repr__(self):
        return "\n".join(json.dumps(f) for f in self.facts)

    def of(self, kind):
        return [f for f in self.facts if f["fact"] == kind]

    def answer(self, step):
        """The response or error fact of step (an index, or its "as")."""
        for f in self.facts:
            if f["fact"] in ("response", "error") and step in (f["step"], f["as"]):
                return f
        raise AssertionError(f"no answer to step {step!r}:\n{self}")

    def result(self, step):
        f = self.answer(step)
        if f["fact"] != "response":
            raise AssertionError(f"step {step!r} answered an error: {f}")
        return f["result"]

    def updates(self, step=None, kind=None, session=None):
        """The updates (objects) that came before step's answer and after
        the answer before it (all of them when step is None); of one
        sessionUpdate kind and session when given."""
        out, seg = [], []
        for f in self.facts:
            if f["fact"] == "update":
                seg.append(f)
            elif f["fact"] in ("response", "error"):
                if step is not None and step in (f["step"], f["as"]):
                    out = seg
                    break
                if step is not None:
                    seg = []
        else:
            if step is not None:
                raise AssertionError(f"no answer to step {step!r}:\n{self}")
            out = seg
        return [f["update"] for f in out
                if (kind is None or f["update"]["sessionUpdate"] == kind)
                and (session is None or f["sessionId"] == session)]

    @staticmethod
    def text(updates, kind="agent_message_chunk"):
        """The text of the chunks of one kind, joined."""
        return "".join(u["content"]["text"] for u in updates
                       if u["sessionUpdate"] == kind and u["content"]["type"] == "text")

    def check(self, test):
        """The client ran the scenario to its end, the SDK took every
        message, and baton exited 0 when its stdin closed."""
        msg = f"sdk-client's facts:\n{self}\nits stderr (and baton's):\n" \
              f"{self.proc.stderr.decode(errors='replace')[-3000:]}"
        test.assertEqual(self.of("sdk_error"), [], "the SDK logged an error\n" + msg)
        test.assertEqual(self.of("invalid"), [], "a response the SDK's schema rejects\n" + msg)
        test.assertEqual(self.proc.returncode, 0, msg)
        test.assertEqual(len(self.of("done")), 1, msg)
        test.assertEqual([(f["code"], f["signal"]) for f in self.of("exit")], [(0, None)], msg)
        test.assertEqual(self.schema_problems(), [], msg)
        return self

    def schema_problems(self):
        """Every message of baton's the client saw, as the SDK handed it
        over, against the ACP schema of the pinned SDK (schema/v1): the
        updates, the permission requests and the responses, whatever the
        coder behind baton (the zod schemas let some things through)."""
        from acptest import RESPONSES, VALIDATORS  # needs the SDK, as this does

        def against(name, value, f):
            return [f"{name}: {e.message} at {list(e.absolute_path)}: {json.dumps(f)[:300]}"
                    for e in VALIDATORS[name].iter_errors(value)]
        out = []
        for f in self.facts:
            if f["fact"] == "update":
                out += against("SessionNotification",
                               {"sessionId": f["sessionId"], "update": f["update"]}, f)
            elif f["fact"] == "permission":
                out += against("RequestPermissionRequest", f["params"], f)
            elif f["fact"] == "response" and f.get("method") in RESPONSES:
                out += against(RESPONSES[f["method"]], f["result"], f)
        return out


# the stand-in, its scratch root and the poll helper are the serve tests'
from servetest import TMP_ROOT, Standin, scratch_env, wait_for  # noqa: E402,F401


class Home:
    """A scratch directory of one test class (see the module comment)."""

    def __init__(self, name, root=None):
        self.dir = tempfile.mkdtemp(prefix=f"acp-{name}-", dir=root or TMP_ROOT)
        self.home = os.path.join(self.dir, "baton-home")
        self.project = self.mkdir("project")
        self.mkdir("codex-home")
        env = scratch_env(self.dir, self.home)
        env.update({"BATON_BIN": BATON, "BATON_TEST_ACP_SDK": SDK})
        if os.environ.get("BATON_TEST_WRAPPER"):
            env["BATON_TEST_WRAPPER"] = os.environ["BATON_TEST_WRAPPER"]
        self.env = env

    def use_live(self, coder, bin, script, home_name, port):
        """The real CLI bin as coder, its home made by tests/live/SCRIPT
        DIR PORT (DIR = this home's home_name) for the stand-in on port;
        the fake coder's knobs gone."""
        p = subprocess.run(["bash", str(LIVE_ENV / script), os.path.join(self.dir, home_name),
                            str(port)], capture_output=True, timeout=60)
        if p.returncode != 0:
            raise AssertionError(f"{script}: {p.stderr.decode(errors='replace')}")
        for line in p.stdout.decode().splitlines():  # HOME, the coder's home, ...
            key, _, value = line.partition("=")
            self.env[key] = value
        self.env[f"BATON_{coder.upper()}_BIN"] = bin

    def mkdir(self, name):
        path = os.path.join(self.dir, name)
        os.makedirs(path, exist_ok=True)
        return path

    def client(self, steps, args=("acp",), env=None, cwd=None, timeout=180, **scenario):
        """Run sdk-client with steps against `baton ARGS...`; its Facts
        (unchecked: Facts.check)."""
        sc = {"args": list(args), "cwd": cwd or self.project, "steps": steps, **scenario}
        p = subprocess.run([NODE, str(CLIENT), json.dumps(sc)], env={**self.env, **(env or {})},
                           cwd=self.dir, capture_output=True, timeout=timeout)
        facts = []
        for line in p.stdout.decode(errors="replace").splitlines():
            try:
                facts.append(json.loads(line))
            except ValueError:
                raise AssertionError(f"sdk-client wrote a line that is not JSON: {line!r}; "
                                     f"stderr: {p.stderr.decode(errors='replace')[-2000:]}")
        return Facts(p, facts)

    def baton(self, *args, env=None, timeout=60):
        p = subprocess.run([BATON, *args], env={**self.env, **(env or {})}, cwd=self.dir,
                           capture_output=True, timeout=timeout)
        if p.returncode != 0:
            raise AssertionError(f"baton {' '.join(args)}: exit {p.returncode}: "
                                 f"{p.stderr.decode(errors='replace')[-2000:]}")
        return p.stdout.decode()

    def show(self, conv):
        return json.loads(self.baton("show", "--json", conv))

    def ls(self):
        return [json.loads(line) for line in self.baton("ls", "--json").splitlines() if line]

    def cleanup(self, failed=False):
        if failed or os.environ.get("BATON_TEST_KEEP"):
            print(f"(scratch directory kept: {self.dir})", file=sys.stderr)
        else:
            shutil.rmtree(self.dir, ignore_errors=True)


class Case(unittest.TestCase):
    """A test class with one Home (home_name), kept when a test failed."""

    home_name = "sdk"
    home_root = None

    @classmethod
    def setUpClass(cls):
        cls.home = Home(cls.home_name, cls.home_root)
        cls.failed = False

    @classmethod
    def tearDownClass(cls):
        cls.home.cleanup(cls.failed)

    def run(self, result=None):
        result = result if result is not None else self.defaultTestResult()
        before = len(result.failures) + len(result.errors)
        out = super().run(result)
        if len(result.failures) + len(result.errors) > before:
            type(self).failed = True
        return out
