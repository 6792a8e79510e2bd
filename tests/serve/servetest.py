# SPDX-License-Identifier: MIT
"""servetest: what the tests of `baton serve` share.

A Home is a scratch directory with its own BATON_HOME, HOME, CODEX_HOME
and TMUX_TMPDIR, the fake coder as codex (tests/fake-coder, replaying
fixtures/codex/0.171.0/text.jsonl: 11 events a turn) and every other
coder pointed at a file that does not exist, so none is installed. Its
Serve is the real `baton serve --listen 127.0.0.1:0` process, whose
first stdout line gives the port and token; the CLI runs against the
same home with the same environment.

Turns are held with the fake coder's pause file: the fake pauses after
its 12th line (the second answer delta: events 1..5 stored) until the
file exists. Home.gate is open (the file exists) unless a test holds
it, so a turn nobody holds runs straight through.

Home.use_codex puts the real codex CLI in the fake's place, against a
baton-standin of the home's own (tests/standin) configured as
tests/live/codex-env.sh configures it for the live C tests; a ServeCase
with codex_bin set does that before its serve starts.

Environment (ctest sets it, tests/serve/CMakeLists.txt): BATON_BIN,
BATON_FAKE_CODER, BATON_TEST_TMPDIR, BATON_STANDIN; BATON_CACHE (set: the
scratch directories go under $BATON_CACHE/scratch); BATON_TEST_WRAPPER
(words put in front of every baton process, as tests/support does, and
of baton-serve, then run directly rather than through `baton serve`);
BATON_TEST_KEEP keeps the scratch directories.
"""
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from pathlib import Path

import httpc
import sse

TOP = Path(__file__).resolve().parents[2]
BATON = os.environ.get("BATON_BIN") or str(TOP / "build" / "baton")
FAKE = os.environ.get("BATON_FAKE_CODER") or str(TOP / "build/tests/fake-coder/fake-coder")
FIXTURE = TOP / "fixtures/codex/0.171.0/text.jsonl"
STANDIN = os.environ.get("BATON_STANDIN") or str(TOP / "build/tests/standin/baton-standin")
CODEX_ENV = TOP / "tests/live/codex-env.sh"
OPENAPI = TOP / "src/serve/web/openapi.json"
EVENTS_SCHEMA = TOP / "docs/events.schema.json"


def scratch_root():
    """Where the tests make their scratch directories, as the C tests do
    (tests/support/support.h): $BATON_CACHE/scratch when BATON_CACHE is set,
    else the build tree (BATON_TEST_TMPDIR) or the temporary directory; /tmp
    is fine for the real codex too (tests/live/codex-env.sh gives a home
    there a TMPDIR of its own)."""
    cache = os.environ.get("BATON_CACHE")
    if not cache:
        return os.environ.get("BATON_TEST_TMPDIR") or tempfile.gettempdir()
    if not os.path.isabs(cache):
        raise SystemExit(f"test: BATON_CACHE={cache} is not an absolute path")
    root = os.path.join(cache, "scratch")
    os.makedirs(root, mode=0o700, exist_ok=True)
    return root


TMP_ROOT = scratch_root()
SKIP = 77

ANSWER = "Hello! You said: Say hello banana"  # the fixture's answer
HELD_ANSWER = "Hello! You said:"  # its first two deltas, where a held turn waits
EVENTS_PER_TURN = 11  # events of one turn of the fixture
HELD_EVENTS = 5  # events stored when a held turn waits
PAUSE_AFTER = 12  # the fixture's line after which the fake waits
NATIVE_ID = "01a22760-0481-7d43-b595-86e7298639e7"  # the fixture's thread
USAGE = {"input_tokens": 3696, "cached_input_tokens": 1848, "output_tokens": 9,
         "reasoning_tokens": 0, "context_tokens": 3705, "context_window": 258400,
         "cost_usd": None}
OTHER_CODERS = ["pi", "claude", "gemini", "opencode", "copilot"]
FIRST_LINE = re.compile(r"^http://127\.0\.0\.1:(\d+)/#token=([0-9a-f]{64})$")


def skip(reason):
    """End the test program as skipped (ctest SKIP_RETURN_CODE)."""
    print(f"SKIPPED: {reason}", flush=True)
    sys.exit(SKIP)


def require_jsonschema():
    """Skip the program when jsonschema (4 or later: Draft 2020-12) is
    missing; called when this module is imported, before a test module
    imports jsonschema itself."""
    try:
        import jsonschema
        jsonschema.Draft202012Validator  # noqa: B018
    except (ImportError, AttributeError):
        skip("python3-jsonschema 4 or later is not installed (tests/scripts/deps.sh "
             "installs it)")


require_jsonschema()


def main():
    """Run the calling test module: check the binaries, then unittest."""
    for what, path in (("baton", BATON), ("the fake coder", FAKE)):
        if not os.access(path, os.X_OK):
            print(f"error: {what} is not built: {path} (build first: "
                  f"bash tests/scripts/build.sh)", file=sys.stderr)
            sys.exit(1)
    unittest.main(verbosity=2)


def wrapper():
    return os.environ.get("BATON_TEST_WRAPPER", "").split()


def baton_argv(args):
    """The command line of `baton ARGS...`, under the wrapper if any. Under
    one, `baton serve` is baton-serve run directly: baton would exec it
    outside the wrapper (valgrind.sh follows no exec)."""
    if wrapper() and args and args[0] == "serve":
        return wrapper() + [os.path.join(os.path.dirname(BATON), "baton-serve"), *args[1:]]
    return wrapper() + [BATON, *args]


def wait_for(pred, timeout=30.0, what="a condition", interval=0.05):
    """pred()'s first true value within timeout; AssertionError after."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        last = pred()
        if last:
            return last
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)


class Gate:
    """The fake coder's pause file: open (it exists) or held."""

    def __init__(self, path):
        self.path = path
        self.release()

    def hold(self):
        if os.path.exists(self.path):
            os.unlink(self.path)

    def release(self):
        with open(self.path, "w"):
            pass


class Standin:
    """A baton-standin of one home: its port, and its log of requests."""

    def __init__(self, dir):
        port_file = os.path.join(dir, "standin.port")
        self.log = os.path.join(dir, "standin.log")
        out = open(os.path.join(dir, "standin.out"), "ab")
        self.proc = subprocess.Popen([STANDIN, "--port-file", port_file, "--log", self.log],
                                     stdin=subprocess.DEVNULL, stdout=out, stderr=out)
        out.close()
        try:
            self.port = self._wait_port(port_file)
        except BaseException:
            self.stop()  # a stand-in that never said its port is stopped, not left behind
            raise

    def _wait_port(self, port_file):

        def port():
            if self.proc.poll() is not None:
                raise AssertionError(f"baton-standin exited ({self.proc.returncode})")
            try:
                with open(port_file, encoding="ascii") as f:
                    text = f.read().strip()
            except OSError:
                return None
            return text if text.isdigit() else None
        return wait_for(port, 10, "baton-standin's port file")

    def requests(self):
        """The request bodies it got, in order (its log is large: parsed,
        never printed)."""
        with open(self.log, encoding="utf-8") as f:
            return [json.loads(line).get("body") for line in f if line.strip()]

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)


def scratch_env(dir, home):
    """The environment of a scratch directory dir with baton's store in
    home: no user's files (HOME is dir), the fake coder as codex (codex's
    home dir/codex-home), every other coder not installed. The serve and
    acp tests' homes add their own."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": dir,
        "LANG": "C.UTF-8",
        "NO_COLOR": "1",
        "BATON_HOME": home,
        "CODEX_HOME": os.path.join(dir, "codex-home"),
        "TMUX_TMPDIR": dir,
        "BATON_CODEX_BIN": FAKE,
        # the scratch directory is in the build tree, in baton's own
        # repository: a turn's changes are looked for in it and below only
        # (git climbs out of a ceiling it starts in: the ceiling is above)
        "GIT_CEILING_DIRECTORIES": os.path.dirname(dir),
    }
    for c in OTHER_CODERS:
        env[f"BATON_{c.upper()}_BIN"] = os.path.join(dir, f"no-such-{c}")
    return env


class Home:
    """A scratch directory for one test class (see the module comment)."""

    def __init__(self, name, extra_env=None, root=None):
        self.dir = tempfile.mkdtemp(prefix=f"serve-{name}-", dir=root or TMP_ROOT)
        self.home = os.path.join(self.dir, "home")
        self.project = os.path.join(self.dir, "project")
        os.mkdir(self.project)
        os.mkdir(os.path.join(self.dir, "codex-home"))
        self.gate = Gate(os.path.join(self.dir, "go"))
        env = scratch_env(self.dir, self.home)
        env.update({
            "FAKE_CODER_REPLAY": str(FIXTURE),
            "FAKE_CODER_PAUSE_AFTER": str(PAUSE_AFTER),
            "FAKE_CODER_PAUSE_FILE": self.gate.path,
        })
        env.update(extra_env or {})
        self.env = env
        self.serves = []
        self.standin = None

    def use_codex(self, codex_bin):
        """The real codex (codex_bin) as codex, against a stand-in of this
        home's own; before any serve starts."""
        self.standin = Standin(self.dir)
        codex_home = os.path.join(self.dir, "codex-home")
        p = subprocess.run(["bash", str(CODEX_ENV), codex_home, self.standin.port],
                           capture_output=True, timeout=60)
        if p.returncode != 0:
            raise AssertionError(f"codex-env.sh: {p.stderr.decode(errors='replace')}")
        for k in [k for k in self.env if k.startswith("FAKE_CODER_")]:
            del self.env[k]
        for line in p.stdout.decode().splitlines():  # CODEX_HOME and HOME
            key, _, value = line.partition("=")
            self.env[key] = value
        self.env["BATON_CODEX_BIN"] = codex_bin

    def serve(self, *args, start=True):
        s = Serve(self, args)
        self.serves.append(s)
        if start:
            s.start()
        return s

    def baton(self, *args, input=None, timeout=60, check=True):
        """Run the CLI against this home; check: exit 0 expected."""
        p = subprocess.run(baton_argv(args), env=self.env, cwd=self.dir,
                           input=input, capture_output=True, timeout=timeout)
        if check and p.returncode != 0:
            raise AssertionError(f"baton {' '.join(args)}: exit {p.returncode}: "
                                 f"{p.stderr.decode(errors='replace')[-2000:]}")
        return p

    def ls(self):
        """`baton ls --json` as a list of objects."""
        out = self.baton("ls", "--json").stdout.decode()
        return [json.loads(line) for line in out.splitlines() if line.strip()]

    def show(self, conv):
        return json.loads(self.baton("show", "--json", conv).stdout)

    def attach_lines(self, conv):
        """`baton attach --json CONV`'s lines (the last turn's events)."""
        p = self.baton("attach", "--json", conv, check=False)
        return p.stdout.decode().splitlines()

    def settle(self, timeout=60):
        """Let every run end: open the gate, wait, cancel what still runs."""
        self.gate.release()
        try:
            wait_for(lambda: all(c["last_run_state"] not in ("running", "waiting")
                                 for c in self.ls()),
                     timeout, "every run to end")
        except AssertionError:
            for c in self.ls():
                if c["last_run_state"] in ("running", "waiting"):
                    self.baton("cancel", c["id"], check=False)

    def cleanup(self, failed=False):
        try:
            self.settle()
        finally:
            for s in self.serves:
                s.stop()
            if self.standin:
                self.standin.stop()
            subprocess.run(["tmux", "kill-server"], env=self.env, capture_output=True)
            if failed:
                for s in self.serves:
                    s.print_stderr()
            if failed or os.environ.get("BATON_TEST_KEEP"):
                print(f"(scratch directory kept: {self.dir})", file=sys.stderr)
            else:
                shutil.rmtree(self.dir, ignore_errors=True)


class Serve:
    """One `baton serve` process of a Home, in a session of its own."""

    count = 0

    def __init__(self, home, args):
        self.home = home
        self.args = list(args)
        Serve.count += 1
        self.err_path = os.path.join(home.dir, f"serve-{Serve.count}.err")
        self.proc = None
        self.drain = None  # the thread reading its stdout
        self.meant_to_end = False  # stopped or killed by the test
        self.lines = []  # its stdout lines after the first

    def argv(self):
        listen = [] if "--listen" in self.args else ["--listen", "127.0.0.1:0"]
        return baton_argv(["serve", *listen, *self.args])

    def start(self, timeout=20):
        """Start it and read its first line; AssertionError if it exits or
        prints something else first."""
        err = open(self.err_path, "ab")
        self.proc = subprocess.Popen(self.argv(), env=self.home.env, cwd=self.home.dir,
                                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=err, start_new_session=True)
        err.close()
        first = self._first_line(timeout)
        m = FIRST_LINE.match(first)
        if not m:
            raise AssertionError(f"serve's first line is not http://127.0.0.1:PORT/#token="
                                 f"TOKEN: {first!r}; stderr: {self.stderr()[-1000:]}")
        self.port = int(m.group(1))
        self.token = m.group(2)
        self.url = first
        self.drain = threading.Thread(target=self._drain, daemon=True)
        self.drain.start()
        return self

    def _first_line(self, timeout):
        deadline = time.monotonic() + timeout
        out = self.proc.stdout
        data = b""
        while b"\n" not in data:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"serve printed no first line in {timeout} s; "
                                     f"stderr: {self.stderr()[-1000:]}")
            r, _, _ = select.select([out], [], [], left)
            if r:
                chunk = os.read(out.fileno(), 4096)
                if not chunk:
                    code = self.proc.wait(5)
                    raise AssertionError(f"serve exited ({code}) before its first line; "
                                         f"stdout {data!r}; stderr: {self.stderr()[-1000:]}")
                data += chunk
        line, rest = data.split(b"\n", 1)
        if rest:
            self.lines += rest.decode(errors="replace").splitlines()
        return line.decode(errors="replace")

    def _drain(self):
        for line in self.proc.stdout:
            self.lines.append(line.decode(errors="replace").rstrip("\n"))

    def stderr(self):
        try:
            with open(self.err_path, encoding="utf-8", errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def print_stderr(self):
        text = self.stderr()
        if text:
            print(f"--- {self.err_path} (its end):\n{text[-3000:]}", file=sys.stderr)

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self, sig=signal.SIGTERM, timeout=10):
        """Stop it with sig (SIGKILL after timeout); its exit status."""
        if self.proc is None:
            return None
        self.meant_to_end = True
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self._close()
        return self.proc.returncode

    def _close(self):
        """Close its stdout once the drain saw the end (workers it started
        may hold the pipe open: they are not waited for)."""
        if self.drain:
            self.drain.join(2)
        if self.proc.stdout and not (self.drain and self.drain.is_alive()):
            self.proc.stdout.close()

    def kill_group(self):
        """SIGKILL to its whole process group, as a terminal's hangup or a
        crash takes a process and the children it did not detach."""
        self.meant_to_end = True
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)
        self._close()

    def client(self, token=None):
        return Client(self.port, token or self.token)


class Client:
    """Requests to one serve. Every request is one connection with
    `Connection: close`; Host is 127.0.0.1:PORT and the bearer token is
    sent unless the caller says otherwise."""

    AUTO = object()

    def __init__(self, port, token):
        self.port = port
        self.token = token
        self.host = f"127.0.0.1:{port}"

    def headers(self, headers, token, host, body, ctype):
        hs = []
        if host is not None:
            hs.append(("Host", self.host if host is Client.AUTO else host))
        if token is Client.AUTO:
            hs.append(("Authorization", f"Bearer {self.token}"))
        elif token is not None:
            hs.append(("Authorization", f"Bearer {token}"))
        if body is not None:
            if ctype is Client.AUTO:
                hs.append(("Content-Type", "application/json"))
            elif ctype is not None:
                hs.append(("Content-Type", ctype))
            hs.append(("Content-Length", str(len(body))))
        hs += list(headers or [])
        hs.append(("Connection", "close"))
        return hs

    @staticmethod
    def encode(body):
        if body is None or isinstance(body, bytes):
            return body
        if isinstance(body, str):
            return body.encode("utf-8")
        return json.dumps(body).encode("utf-8")

    def request(self, method, target, body=None, headers=None, token=AUTO, host=AUTO,
                ctype=AUTO, timeout=15):
        """A whole response. body: dict/list (as JSON), str, bytes or None;
        token/host/ctype: AUTO, None (not sent) or a value."""
        body = self.encode(body)
        conn = httpc.Conn(self.port, timeout)
        try:
            conn.send(httpc.build(method, target,
                                  self.headers(headers, token, host, body, ctype), body))
            r = conn.head(timeout, method)
            r.body = conn.body_all(timeout)
            return r
        finally:
            conn.close()

    def get(self, target, **kw):
        return self.request("GET", target, **kw)

    def post(self, target, body=None, **kw):
        return self.request("POST", target, body, **kw)

    def delete(self, target, **kw):
        return self.request("DELETE", target, **kw)

    def raw(self, data, timeout=15):
        """Send raw bytes; the whole response, or None when the server
        closed without one."""
        conn = httpc.Conn(self.port, timeout)
        try:
            conn.send(data)
            try:
                r = conn.head(timeout)
            except httpc.Closed:
                return None
            r.body = conn.body_all(timeout)
            return r
        finally:
            conn.close()

    def stream(self, target, headers=None, token=AUTO, timeout=15):
        """Open an event stream; a sse.Stream whose response is read (its
        body is not, for a status other than 200)."""
        hs = [("Accept", "text/event-stream")] + list(headers or [])
        conn = httpc.Conn(self.port, timeout)
        conn.send(httpc.build("GET", target, self.headers(hs, token, Client.AUTO, None, None)))
        r = conn.head(timeout)
        s = sse.Stream(conn, r)
        if r.status != 200:
            r.body = conn.body_all(timeout)
            conn.close()
        return s


class ServeCase(unittest.TestCase):
    """A TestCase whose class has a Home (cls.home), its serve (cls.serve,
    cls.client) and the contract (cls.api); the home is removed at the end
    unless a test failed."""

    home_name = "case"
    home_env = None  # environment over the home's (e.g. another FAKE_CODER_REPLAY)
    serve_args = ()
    codex_bin = None  # the real codex instead of the fake (Home.use_codex)
    failed = False

    @classmethod
    def setUpClass(cls):
        from contract import Contract
        cls.api = Contract(OPENAPI)
        cls.home = Home(cls.home_name, cls.home_env)
        try:
            if cls.codex_bin:
                cls.home.use_codex(cls.codex_bin)
            cls.serve = cls.home.serve(*cls.serve_args)
        except BaseException:
            cls.home.cleanup(failed=True)
            raise
        cls.client = cls.serve.client()

    @classmethod
    def tearDownClass(cls):
        cls.home.cleanup(failed=cls.failed)

    def setUp(self):
        self.home.gate.release()

    def tearDown(self):
        self.home.settle()  # a failed test leaves no turn to disturb the next
        s = self.serve
        if not s.meant_to_end and s.proc.poll() is not None:
            s.meant_to_end = True  # said once
            self.fail(f"serve exited by itself during the test (status {s.proc.returncode}); "
                      f"its stderr: {s.stderr()[-1500:]}")

    def run(self, result=None):
        result = result if result is not None else self.defaultTestResult()
        before = len(result.failures) + len(result.errors)
        out = super().run(result)
        if len(result.failures) + len(result.errors) > before:
            type(self).failed = True
        return out

    # --- requests checked against the contract -------------------------

    def call(self, method, target, template, status, body=None, **kw):
        """A request whose response must have status and match the document."""
        r = self.client.request(method, target, body, **kw)
        return r, self.api.check(r, method, template, status)

    def error(self, method, target, template, status, kind, body=None, **kw):
        r = self.client.request(method, target, body, **kw)
        return self.api.check_error(r, status, kind, method, template)

    def create(self, prompt, status=201, **fields):
        """POST /v1/conversations; (conversation id, run id)."""
        body = {"prompt": prompt, "cwd": self.home.project}
        body.update(fields)
        r, doc = self.call("POST", "/v1/conversations", "/v1/conversations", status, body)
        conv = doc["conversation"]["id"]
        self.assertEqual(r.header("location"), f"/v1/conversations/{conv}")
        self.assertEqual(doc["conversation"]["last_run"], doc["run"])
        return conv, doc["run"]

    def run_of(self, conv, run):
        """The record of run in the conversation's detail."""
        runs = [r for r in self.detail(conv)["runs"] if r["id"] == run]
        self.assertEqual(len(runs), 1, f"run {run} in the runs of {conv}")
        return runs[0]

    def detail(self, conv, query=""):
        _, doc = self.call("GET", f"/v1/conversations/{conv}{query}", "/v1/conversations/{id}",
                           200)
        return doc

    def send(self, conv, prompt, **fields):
        body = {"prompt": prompt}
        body.update(fields)
        _, doc = self.call("POST", f"/v1/conversations/{conv}/messages",
                           "/v1/conversations/{id}/messages", 202, body)
        return doc

    def idle(self, conv, timeout=30):
        """The conversation's detail once no turn runs or waits queued."""
        def settled():
            d = self.detail(conv)
            busy = d["running"] is not None or d["queued"] or any(
                m["state"] in ("streaming", "queued") for m in d["messages"])
            return None if busy else d
        return wait_for(settled, timeout, f"conversation {conv} to settle")

    def held(self, conv, run):
        """Wait until a held turn of run waits at the pause (events 1..5
        stored: its answer so far is HELD_ANSWER), as the CLI sees it, so
        that the tests of the endpoints do not depend on the streams."""
        def waiting():
            msgs = self.home.show(conv)["messages"]
            return any(m["run"] == run and m["role"] == "assistant"
                       and m["state"] == "streaming" and m["text"] == HELD_ANSWER
                       for m in msgs)
        wait_for(waiting, 30, f"run {run} to wait at the fake coder's pause")
