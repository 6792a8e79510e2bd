#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""acp-sdk-live: `baton acp -c codex`, `-c pi` and `-c claude` with the
real CLIs (BATON_TEST_CODEX_BIN, BATON_TEST_PI_BIN, BATON_TEST_CLAUDE_BIN
from tests/scripts/install-*.sh) against baton's local stand-in model
(tests/standin), each CLI's home made by its tests/live/<coder>-env.sh as
the live C tests make it, driven by the official ACP TypeScript SDK as the
client (sdk-client.mjs, acpsdk.py).

Per coder, one `baton acp -c CODER --approval auto` process: initialize;
session/new; a prompt whose answer streams as agent_message_chunk equal to
the stand-in's echo; in a second session a `[[shell:touch allowed-file && echo hi]]` prompt
giving a tool_call (kind execute) and a tool_call_update completed with
the command's output. Then a new `baton acp` process: session/load
replays the first session (the prompt as user_message_chunk, then the
answer) and the next prompt resumes the coder's own session (the
stand-in's last request holds the first prompt's words; `baton show` has
two turns). The coder's own model list (codex, pi) reaches the client as a
config_option_update, and a model chosen from it runs the turn. Then, under --approval deny, a shell command the client
rejects (codex and claude ask; pi asks nothing) does not run, and a slow
answer the client cancels ends cancelled with its first ticks kept.

One coder per run (argv[1]: codex, pi or claude; a ctest entry each):
without its binary variable set to an executable the program prints
SKIPPED and exits 77 (ctest: Skipped), so a coder that did not run is
never reported as passed. A coder that asks for approval (codex) asks the client, which
allows once; --approval auto decides for one whose client does not answer.
"""
import json
import os
import sys
import time
import unittest

import acpsdk
from acpsdk import INITIALIZE, Facts, new_session, notify, prompt, sid

FIRST = "Say hello banana"
NEXT = "And again, kumquat?"


def echo(text):
    return f"Hello! You said: {text}"


STARTED = []  # the coders whose tests ran


class Live:
    """One coder's story, mixed into an acpsdk.Case that names the coder."""

    coder = None
    bin_var = None  # where the CLI's path comes from
    env_script = None  # tests/live/<coder>-env.sh
    home_dir = None  # the coder's home inside the scratch directory
    model = None  # -m, when the coder needs one for the stand-in
    asks = True  # the coder asks before a command (pi has no approvals)
    listed = None  # the stand-in's model as the coder lists it (None: it lists none)

    @classmethod
    def setUpClass(cls):
        bin = os.environ.get(cls.bin_var, "")
        if not bin or not os.access(bin, os.X_OK):
            print(f"live {cls.coder}: skipped: {cls.bin_var} does not name an executable "
                  f"(tests/scripts/install-{cls.coder}.sh installs the pinned one)",
                  file=sys.stderr, flush=True)
            raise unittest.SkipTest(f"{cls.bin_var} is not set")
        STARTED.append(cls.coder)
        super().setUpClass()
        cls.standin = None
        try:
            cls.standin = acpsdk.Standin(cls.home.dir)
            cls.home.use_live(cls.coder, bin, cls.env_script, cls.home_dir, cls.standin.port)
        except BaseException:
            # no tearDownClass follows a failed setUpClass: stop what it started
            if cls.standin:
                cls.standin.stop()
            cls.home.cleanup(failed=True)
            raise
        cls.work = cls.home.mkdir("work")

    @classmethod
    def tearDownClass(cls):
        cls.standin.stop()
        super().tearDownClass()

    def args(self):
        return ["acp", "-c", self.coder, "--approval", "auto"] + (
            ["-m", self.model] if self.model else [])

    def test_story(self):
        t0 = time.monotonic()
        f = self.home.client([
            INITIALIZE,
            new_session(self.work, "s"), prompt(sid("s"), FIRST, **{"as": "p1"}),
            new_session(self.work, "t"),
            prompt(sid("t"), "[[shell:touch allowed-file && echo hi]]", **{"as": "p2"}),
        ], args=self.args(), cwd=self.work, timeout=300,
            permission="allow_once").check(self)  # a coder that asks: the client allows
        t1 = time.monotonic()
        self.assertEqual(f.result(0)["agentInfo"]["name"], "baton")
        s, t = f.result("s")["sessionId"], f.result("t")["sessionId"]
        opts = {o["id"]: o["currentValue"] for o in f.result("s")["configOptions"]}
        self.assertEqual(opts["coder"], self.coder)
        self.assertEqual(opts["model"], self.model or "default")

        # a prompt streamed
        self.assertEqual(f.result("p1"), {"stopReason": "end_turn"}, f)
        chunks = f.updates("p1", "agent_message_chunk", s)
        self.assertGreaterEqual(len(chunks), 1, f)
        self.assertEqual(Facts.text(chunks), echo(FIRST))

        # a shell tool call with its output
        self.assertEqual(f.result("p2"), {"stopReason": "end_turn"}, f)
        tools = [u for u in f.updates("p2", session=t)
                 if u["sessionUpdate"] in ("tool_call", "tool_call_update")]
        self.assertTrue(tools, f)
        call = tools[0]
        self.assertEqual(call["sessionUpdate"], "tool_call", tools)
        self.assertEqual(call["kind"], "execute", call)
        self.assertIn("echo hi", call["title"])
        ends = [u for u in tools[1:] if u["toolCallId"] == call["toolCallId"]]
        self.assertTrue(ends, tools)
        self.assertEqual(ends[-1]["status"], "completed", tools)
        out = "".join(c["content"]["text"] for c in ends[-1].get("content", [])
                      if c["type"] == "content" and c["content"]["type"] == "text")
        self.assertIn("hi", out, ends[-1])
        self.assertIn("hi", Facts.text(f.updates("p2", "agent_message_chunk", t)))
        # the coder's approval request went to the client, whose answer ran it
        # (claude asks nothing for a plain echo: hence the touch)
        self.assertTrue(os.path.exists(os.path.join(self.work, "allowed-file")))
        asked = f.of("permission")
        resolved = [json.loads(x) for x in self.home.baton("attach", "--json", t).splitlines()
                    if '"approval.resolved"' in x]
        if self.asks:
            self.assertEqual(len(asked), 1, f)
            self.assertEqual(asked[0]["params"]["toolCall"]["kind"], "execute")
            self.assertEqual([(e["decision"], e["by"]) for e in resolved], [("accept", "user")])
        else:  # pi asks nothing
            self.assertEqual((asked, resolved), ([], []))

        # load in a new process, then the next prompt resumes the session
        g = self.home.client([
            INITIALIZE,
            {"request": "session/load", "as": "load",
             "params": {"sessionId": s, "cwd": self.work, "mcpServers": []}},
            prompt(s, NEXT, **{"as": "p3"}),
        ], args=self.args(), cwd=self.work, timeout=300).check(self)
        t2 = time.monotonic()
        replay = g.updates("load", session=s)
        self.assertTrue(replay, g)
        self.assertEqual(replay[0], {"sessionUpdate": "user_message_chunk",
                                     "content": {"type": "text", "text": FIRST}})
        self.assertEqual(Facts.text(replay), echo(FIRST))
        self.assertEqual(g.result("p3"), {"stopReason": "end_turn"}, g)
        self.assertEqual(Facts.text(g.updates("p3", "agent_message_chunk", s)), echo(NEXT))
        last = json.dumps(self.standin.requests()[-1])
        self.assertIn(FIRST, last, "the first turn in the resumed session's history")
        self.assertIn(NEXT, last)
        doc = self.home.show(s)
        self.assertTrue(doc["conversation"]["native_session_id"])
        self.assertEqual([(m["role"], m["state"]) for m in doc["messages"]],
                         [("user", "complete"), ("assistant", "complete")] * 2)
        self.assertEqual(len({m["run"] for m in doc["messages"]}), 2)
        print(f"live {self.coder}: first process {t1 - t0:.1f} s, load and prompt "
              f"{t2 - t1:.1f} s", file=sys.stderr, flush=True)

    def test_models(self):
        """The coder's own model list reaches the client's model select
        (a config_option_update after session/new); a listed model chosen
        there is the one the turn runs with."""
        steps = [INITIALIZE, new_session(self.work, "m")]
        if self.listed:
            steps += [{"until": {"sessionUpdate": "config_option_update"}, "timeout_ms": 60000},
                      {"request": "session/set_config_option", "as": "set",
                       "params": {"sessionId": sid("m"), "configId": "model",
                                  "value": self.listed}}]
        steps.append(prompt(sid("m"), FIRST, **{"as": "p"}))
        f = self.home.client(steps, args=self.args(), cwd=self.work, timeout=300).check(self)
        m = f.result("m")["sessionId"]
        self.assertEqual(f.result("p"), {"stopReason": "end_turn"}, f)
        lists = [u for u in f.updates(session=m) if u["sessionUpdate"] == "config_option_update"]
        if not self.listed:
            self.assertEqual(lists, [], "a coder that cannot list its models")
            return
        (model,) = [o for o in lists[0]["configOptions"] if o["id"] == "model"]
        self.assertIn(self.listed, [c["value"] for c in model["options"]], model)
        self.assertTrue(model["options"][0]["name"].startswith("the coder's default ("), model)
        (chosen,) = [o for o in f.result("set")["configOptions"] if o["id"] == "model"]
        self.assertEqual(chosen["currentValue"], self.listed)
        self.assertEqual(self.home.show(m)["conversation"]["model"], self.listed)

    def test_reject_then_cancel(self):
        """Under --approval deny: a shell command the client rejects does
        not run (the turn goes on); a slow answer cancelled by the client
        ends cancelled with what came so far kept."""
        args = ["acp", "-c", self.coder, "--approval", "deny"] + (
            ["-m", self.model] if self.model else [])
        f = self.home.client([
            INITIALIZE, new_session(self.work, "r"),
            prompt(sid("r"), "[[shell:touch rejected-file && echo baton-ok]]", **{"as": "p"}),
        ], args=args, cwd=self.work, timeout=300, permission="reject_once").check(self)
        r = f.result("r")["sessionId"]
        self.assertEqual(f.result("p"), {"stopReason": "end_turn"}, f)
        ran = os.path.exists(os.path.join(self.work, "rejected-file"))
        asked = f.of("permission")
        resolved = [json.loads(x) for x in self.home.baton("attach", "--json", r).splitlines()
                    if '"approval.resolved"' in x]
        if self.asks:
            self.assertFalse(ran, "the rejected command ran")
            self.assertEqual(len(asked), 1, f)
            self.assertEqual(asked[0]["params"]["toolCall"]["kind"], "execute")
            self.assertEqual([(e["decision"], e["by"]) for e in resolved], [("decline", "user")])
        else:  # pi asks nothing: its tools run whatever --approval says (README)
            self.assertEqual((asked, resolved, ran), ([], [], True))

        g = self.home.client([
            INITIALIZE, new_session(self.work, "c"),
            prompt(sid("c"), "[[slow]]", **{"as": "p", "async": True}),
            {"until": {"sessionUpdate": "agent_message_chunk"}, "count": 2, "timeout_ms": 120000},
            notify("session/cancel", sid("c")),
            {"wait": "p", "timeout_ms": 60000},
        ], args=args, cwd=self.work, timeout=300).check(self)
        c = g.result("c")["sessionId"]
        self.assertEqual(g.result("p"), {"stopReason": "cancelled"}, g)
        said = Facts.text(g.updates("p", "agent_message_chunk", c))
        self.assertTrue(said.startswith("tick 001."), said)
        self.assertLess(g.answer("p")["t"] - g.of("notified")[0]["t"], 15000,
                        "cancelled within 15 s")
        doc = self.home.show(c)
        self.assertEqual([(m["role"], m["state"]) for m in doc["messages"]],
                         [("user", "complete"), ("assistant", "cancelled")])
        self.assertTrue(doc["messages"][1]["text"].startswith("tick 001."), doc)


class LiveCodex(Live, acpsdk.Case):
    coder = "codex"
    bin_var = "BATON_TEST_CODEX_BIN"
    env_script = "codex-env.sh"
    home_dir = "codex-home"
    listed = "baton-test"  # its one-model catalog (codex-env.sh)


class LivePi(Live, acpsdk.Case):
    coder = "pi"
    bin_var = "BATON_TEST_PI_BIN"
    env_script = "pi-env.sh"
    home_dir = "pi-agent"
    model = "baton-standin/baton-test"
    asks = False
    listed = "baton-standin/baton-test"  # provider/id (pi-env.sh's models.json)


class LiveClaude(Live, acpsdk.Case):
    coder = "claude"
    bin_var = "BATON_TEST_CLAUDE_BIN"
    env_script = "claude-env.sh"
    home_dir = "claude-config"


def main():
    """argv[1]: the coder whose story runs (one ctest entry per coder, each
    skipped on its own: a coder without its CLI is never counted as
    passed)."""
    acpsdk.require()
    if not os.access(acpsdk.STANDIN, os.X_OK):
        print(f"error: baton-standin is not built: {acpsdk.STANDIN}", file=sys.stderr)
        sys.exit(1)
    cases = {c.coder: c for c in (LiveCodex, LivePi, LiveClaude)}
    if len(sys.argv) != 2 or sys.argv[1] not in cases:
        print(f"usage: {sys.argv[0]} {'|'.join(cases)}", file=sys.stderr)
        sys.exit(2)
    case = cases[sys.argv[1]]
    bin = os.environ.get(case.bin_var, "")
    if not bin or not os.access(bin, os.X_OK):
        acpsdk.skip(f"{case.bin_var} does not name an executable "
                    f"(tests/scripts/install-{case.coder}.sh installs the pinned one)")
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(case)
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    if result.wasSuccessful() and not STARTED:
        acpsdk.skip(f"{case.coder}'s tests did not start")
    sys.exit(0 if result.wasSuccessful() else 1)


if __name__ == "__main__":
    main()
