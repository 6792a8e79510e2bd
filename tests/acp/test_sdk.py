#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""acp-sdk: `baton acp` driven by the official ACP TypeScript SDK
(@agentclientprotocol/sdk 2.4.0, BATON_TEST_ACP_SDK) as the client, a
client no one here wrote (tests/acp/sdk-client.mjs over the SDK's
ClientApp and ndJsonStream; acpsdk.py), with the fake coder as codex
replaying fixtures/codex/0.171.0.

Every run checks that the SDK took every message baton wrote (its zod
schemas parse each session/update before the client sees it, and each
response here) and that baton exits 0 when its stdin closes. Then:
initialize (agentInfo, loadSession, sessionCapabilities list, resume and
close); session/new; a prompt streamed as agent_message_chunk equal to the
fixture's answer, with usage_update; reasoning as agent_thought_chunk; a
shell tool call as tool_call then tool_call_update (kind execute), declined
by baton's default policy (failed) and accepted with --approval auto (its
output as content); a failed turn as a JSON-RPC error (auth_required as
-32000); session/cancel of a turn that runs until interrupted (stopReason
cancelled, the partial text kept in `baton show --json`); a prompt sent
while a turn runs, answered after the turn it went out with; session/load
in a new `baton acp` process (the transcript replayed: the user's prompt as
user_message_chunk, then the answer) and the next prompt resuming the same
codex thread (thread/resume in the fake's stdin log; `baton show` with two
turns of one native session); session/resume likewise without the replay;
session/list with and without the cwd filter; session/close.

usage_update carries no cost (ACP's is the session's total, baton's
cost_usd the turn's); the config options use no category ACP reserves.
A coder's approval request reaches the client as
session/request_permission: the client's cancelled answer declines it,
its allow_once runs the command.
"""
import json
import os
import unittest

import acpsdk
from acpsdk import FIXTURES, INITIALIZE, Facts, new_session, notify, prompt, sid

PI_FIXTURES = FIXTURES.parents[1] / "pi" / "0.73.1"

ANSWER = "Hello! You said: Say hello banana"  # text.jsonl's answer, in 5 deltas
NATIVE = "01a22760-0481-7d43-b595-86e7298639e7"  # text.jsonl's codex thread
CHUNKS = 5


def fixture(name, **knobs):
    """The fake coder's environment for fixture name (and knobs)."""
    env = {"FAKE_CODER_REPLAY": str(FIXTURES / f"{name}.jsonl")}
    env.update({f"FAKE_CODER_{k.upper()}": str(v) for k, v in knobs.items()})
    return env


def pi_fixture(name):
    """The fake coder as pi 0.73.1 replaying fixtures/pi/0.73.1/NAME, and
    the cost_usd of that turn's last usage event."""
    with open(PI_FIXTURES / f"{name}.events.jsonl", encoding="utf-8") as f:
        usage = [json.loads(line) for line in f if '"type":"usage"' in line]
    env = {"BATON_PI_BIN": acpsdk.FAKE, "FAKE_CODER_VERSION": "0.73.1",
           "FAKE_CODER_REPLAY": str(PI_FIXTURES / f"{name}.jsonl")}
    return env, usage[-1]["cost_usd"]


# ACP's SessionConfigOptionCategory values; others must begin with "_"
# (names without one are reserved for the spec)
CATEGORIES = {"mode", "model", "model_config", "thought_level"}


class SdkClient(acpsdk.Case):
    home_name = "sdk"

    def turn(self, text="Say hello banana", name="text", args=("acp",), cwd=None, **knobs):
        """initialize, session/new in cwd (the project), one prompt; the
        checked Facts and the session id."""
        cwd = cwd or self.home.project
        f = self.home.client([INITIALIZE, new_session(cwd), prompt(sid(), text, **{"as": "p"})],
                             args=args, env=fixture(name, **knobs)).check(self)
        return f, f.result("s")["sessionId"]

    def test_initialize(self):
        f = self.home.client([INITIALIZE], env=fixture("text")).check(self)
        r = f.result(0)
        self.assertEqual(r["protocolVersion"], 1)
        self.assertEqual(r["agentInfo"]["name"], "baton")
        self.assertTrue(r["agentInfo"]["version"])
        caps = r["agentCapabilities"]
        self.assertIs(caps["loadSession"], True)
        for c in ("list", "resume", "close"):
            self.assertIsInstance(caps["sessionCapabilities"].get(c), dict, c)
        self.assertEqual(r["authMethods"], [])

    def test_prompt_streamed(self):
        f, s = self.turn()
        new = f.result("s")
        opts = {o["id"]: o for o in new["configOptions"]}
        self.assertEqual(opts["coder"]["currentValue"], "codex")
        self.assertEqual(f.result("p"), {"stopReason": "end_turn"})
        chunks = f.updates("p", "agent_message_chunk", s)
        self.assertEqual(len(chunks), CHUNKS, f)
        self.assertEqual(Facts.text(chunks), ANSWER)
        usage = f.updates("p", "usage_update", s)
        self.assertEqual([(u["used"], u["size"]) for u in usage], [(3705, 258400)])
        self.assertEqual(f.updates("p", "user_message_chunk"), [])
        # the session is the conversation
        doc = self.home.show(s)
        self.assertEqual(doc["conversation"]["id"], s)
        self.assertEqual(doc["conversation"]["cwd"], self.home.project)
        self.assertEqual(doc["conversation"]["native_session_id"], NATIVE)
        self.assertEqual([(m["role"], m["state"], m["text"]) for m in doc["messages"]],
                         [("user", "complete", "Say hello banana"),
                          ("assistant", "complete", ANSWER)])

    def test_the_sdks_session_helper(self):
        # buildSession().withSession(), ActiveSession.prompt and readText:
        # the SDK routing baton's updates to the session by itself
        f = self.home.client([INITIALIZE, {"active": self.home.project, "as": "s",
                                           "prompt": "Say hello banana"}],
                             env=fixture("text")).check(self)
        end = f.of("read_text")
        self.assertEqual(len(end), 1, f)
        self.assertEqual(end[0]["sessionId"], f.result("s")["sessionId"])
        self.assertEqual((end[0]["text"], end[0]["stopReason"]), (ANSWER, "end_turn"))

    def test_reasoning_as_thought_chunks(self):
        f, s = self.turn("[[reasoning]] Think first", "reasoning")
        thought = Facts.text(f.updates("p", "agent_thought_chunk", s), "agent_thought_chunk")
        self.assertEqual(thought, "Thinking about: [[reasoning]] Think first")
        said = Facts.text(f.updates("p", "agent_message_chunk", s))
        self.assertEqual(said, "Hello! You said: [[reasoning]] Think first")
        kinds = [u["sessionUpdate"] for u in f.updates("p", session=s)]
        self.assertLess(kinds.index("agent_thought_chunk"), kinds.index("agent_message_chunk"))

    def tool_calls(self, f, s):
        ups = [u for u in f.updates("p", session=s)
               if u["sessionUpdate"] in ("tool_call", "tool_call_update")]
        self.assertTrue(ups, f)
        first = ups[0]
        self.assertEqual(first["sessionUpdate"], "tool_call")
        self.assertEqual(first["toolCallId"], "call_1_0")
        self.assertEqual(first["kind"], "execute")
        self.assertIn("echo baton-ok", first["title"])
        self.assertIn(first["status"], ("pending", "in_progress"))
        rest = ups[1:]
        self.assertTrue(rest, f)
        self.assertTrue(all(u["sessionUpdate"] == "tool_call_update" and
                            u["toolCallId"] == "call_1_0" for u in rest), rest)
        return first, rest[-1]

    def test_tool_call_declined(self):
        # codex's approval request goes to the SDK client, which answers
        # cancelled (its default here): declined
        f, s = self.turn("[[shell:echo baton-ok]]", "shell-declined")
        self.assertEqual(f.result("p"), {"stopReason": "end_turn"})
        _, last = self.tool_calls(f, s)
        self.assertEqual(last["status"], "failed")
        self.assertIn("rejected by user", Facts.text(f.updates("p", "agent_message_chunk", s)))
        asked = f.of("permission")
        self.assertEqual(len(asked), 1, f)
        self.assertEqual(asked[0]["params"]["sessionId"], s)
        self.assertEqual(asked[0]["params"]["toolCall"]["status"], "pending")

    def test_tool_call_allowed_by_the_client(self):
        # the SDK client picks allow_once: codex gets accept (its recording
        # of an approved command runs it)
        f = self.home.client([INITIALIZE, new_session(self.home.project),
                              prompt(sid(), "[[shell:echo baton-ok]]", **{"as": "p"})],
                             env=fixture("shell-approved"), permission="allow_once").check(self)
        self.assertEqual(f.result("p"), {"stopReason": "end_turn"})
        self.assertEqual(len(f.of("permission")), 1, f)
        s = f.result("s")["sessionId"]
        _, last = self.tool_calls(f, s)
        self.assertEqual(last["status"], "completed")

    def test_tool_call_output(self):
        f, s = self.turn("[[shell:echo baton-ok]]", "shell-auto",
                         args=("acp", "--approval", "auto"))
        self.assertEqual(f.result("p"), {"stopReason": "end_turn"})
        _, last = self.tool_calls(f, s)
        self.assertEqual(last["status"], "completed")
        self.assertEqual(last["content"], [{"type": "content",
                                            "content": {"type": "text", "text": "baton-ok\n"}}])
        self.assertEqual(Facts.text(f.updates("p", "agent_message_chunk", s)),
                         "Tool output: baton-ok")

    def test_failed_turn_is_an_error(self):
        for name, code, kind in (("http500", -32603, "model_error"),
                                 ("http401", -32000, "auth_required")):
            with self.subTest(name):
                f = self.home.client([INITIALIZE, new_session(self.home.project),
                                      prompt(sid(), "Say hello banana", **{"as": "p"})],
                                     env=fixture(name)).check(self)
                err = f.answer("p")
                self.assertEqual(err["fact"], "error", f)
                self.assertEqual(err["code"], code, err)
                self.assertIn(kind, err["message"])

    def test_cancel(self):
        # interrupt.jsonl streams "tick 001. tick 002. " and then waits for
        # turn/interrupt, which it answers with the turn interrupted
        f = self.home.client([
            INITIALIZE, new_session(self.home.project),
            prompt(sid(), "[[slow]]", **{"as": "p", "async": True}),
            {"until": {"sessionUpdate": "agent_message_chunk"}, "count": 2},
            notify("session/cancel", sid()),
            {"wait": "p", "timeout_ms": 20000},
        ], env=fixture("interrupt", delay_ms=100)).check(self)
        s = f.result("s")["sessionId"]
        self.assertEqual(f.result("p"), {"stopReason": "cancelled"})
        said = Facts.text(f.updates("p", "agent_message_chunk", s))
        self.assertEqual(said, "tick 001. tick 002. ")
        sent = f.of("notified")[0]["t"]
        self.assertLess(f.answer("p")["t"] - sent, 5000, "cancelled in under 5 s")
        doc = self.home.show(s)
        self.assertEqual([(m["role"], m["state"], m["text"]) for m in doc["messages"]],
                         [("user", "complete", "[[slow]]"),
                          ("assistant", "cancelled", "tick 001. tick 002. ")])

    def test_prompt_while_a_turn_runs(self):
        f = self.home.client([
            INITIALIZE, new_session(self.home.project),
            prompt(sid(), "first", **{"as": "a", "async": True}),
            {"until": {"sessionUpdate": "agent_message_chunk"}},
            prompt(sid(), "second", **{"as": "b", "async": True}),
            {"wait": "a"}, {"wait": "b"},
        ], env=fixture("text", delay_ms=40)).check(self)
        s = f.result("s")["sessionId"]
        self.assertEqual(f.result("a"), {"stopReason": "end_turn"})
        self.assertEqual(f.result("b"), {"stopReason": "end_turn"})
        a, b = f.answer("a"), f.answer("b")
        self.assertLess(f.facts.index(a), f.facts.index(b))
        # b's turn streamed after a's answer
        self.assertEqual(Facts.text(f.updates("b", "agent_message_chunk", s)), ANSWER)
        doc = self.home.show(s)
        self.assertEqual([(m["role"], m["text"]) for m in doc["messages"]],
                         [("user", "first"), ("assistant", ANSWER),
                          ("user", "second"), ("assistant", ANSWER)])
        self.assertNotEqual(doc["messages"][0]["run"], doc["messages"][2]["run"])

    def test_load_in_a_new_process_then_prompt(self):
        _, s = self.turn("Say hello banana")
        log = os.path.join(self.home.dir, f"stdin-{s}.log")
        f = self.home.client([
            INITIALIZE,
            {"request": "session/load", "as": "load",
             "params": {"sessionId": s, "cwd": self.home.project, "mcpServers": []}},
            prompt(s, "And again, kumquat?", **{"as": "p"}),
        ], env={**fixture("text"), "FAKE_CODER_LOG_STDIN": log}).check(self)
        opts = {o["id"]: o["currentValue"] for o in f.result("load")["configOptions"]}
        self.assertEqual(opts["coder"], "codex")
        replay = f.updates("load", session=s)
        self.assertTrue(replay, f)
        self.assertEqual(replay[0], {"sessionUpdate": "user_message_chunk",
                                     "content": {"type": "text", "text": "Say hello banana"}})
        self.assertEqual([u["sessionUpdate"] for u in replay[1:CHUNKS + 1]],
                         ["agent_message_chunk"] * CHUNKS)
        self.assertEqual(Facts.text(replay), ANSWER)
        self.assertEqual(f.updates("load", "user_message_chunk"), [replay[0]])
        # the next prompt: the same conversation, codex's thread resumed
        self.assertEqual(f.result("p"), {"stopReason": "end_turn"})
        self.assertEqual(Facts.text(f.updates("p", "agent_message_chunk", s)), ANSWER)
        with open(log, encoding="utf-8") as fh:
            sent = [json.loads(line) for line in fh if line.strip()]
        methods = [m.get("method") for m in sent]
        self.assertIn("thread/resume", methods)
        self.assertNotIn("thread/start", methods)
        resume = sent[methods.index("thread/resume")]
        self.assertEqual(resume["params"]["threadId"], NATIVE)
        doc = self.home.show(s)
        self.assertEqual(doc["conversation"]["native_session_id"], NATIVE)
        msgs = doc["messages"]
        self.assertEqual([(m["role"], m["text"]) for m in msgs],
                         [("user", "Say hello banana"), ("assistant", ANSWER),
                          ("user", "And again, kumquat?"), ("assistant", ANSWER)])
        self.assertEqual(len({m["run"] for m in msgs}), 2)
        self.assertEqual(len([c for c in self.home.ls() if c["id"] == s]), 1)

    def test_resume_in_a_new_process_then_prompt(self):
        _, s = self.turn("Say hello banana")
        f = self.home.client([
            INITIALIZE,
            {"request": "session/resume", "as": "resume",
             "params": {"sessionId": s, "cwd": self.home.project, "mcpServers": []}},
            prompt(s, "Once more", **{"as": "p"}),
            {"request": "session/close", "as": "close", "params": {"sessionId": s}},
        ], env=fixture("text")).check(self)
        self.assertEqual(f.updates("resume"), [])  # no replay
        self.assertIn("configOptions", f.result("resume"))
        self.assertEqual(f.result("p"), {"stopReason": "end_turn"})
        self.assertEqual(Facts.text(f.updates("p", "agent_message_chunk", s)), ANSWER)
        self.assertEqual(f.result("close"), {})
        self.assertEqual(len(self.home.show(s)["messages"]), 4)

    def test_load_unknown_session(self):
        f = self.home.client([
            INITIALIZE,
            {"request": "session/load", "as": "load",
             "params": {"sessionId": "0mx0000000000000000000", "cwd": self.home.project,
                        "mcpServers": []}},
        ], env=fixture("text")).check(self)
        err = f.answer("load")
        self.assertEqual((err["fact"], err["code"]), ("error", -32002), err)

    def test_usage_has_no_turn_cost(self):
        """usage_update's cost.amount is ACP's "total cumulative cost for
        session" (Cost, UsageUpdate in schema/v1/schema.json); baton's
        cost_usd is the turn's (docs/events.md), so baton sends no cost
        rather than a wrong total (pi reports each turn's cost: 0.001065,
        then 0.001086), live and in session/load's replay alike."""
        env1, _ = pi_fixture("text")
        env2, _ = pi_fixture("resume")
        f = self.home.client([INITIALIZE, new_session(self.home.project),
                              prompt(sid(), "Say hello banana", **{"as": "p"})],
                             args=("acp", "-c", "pi"), env=env1).check(self)
        s = f.result("s")["sessionId"]
        first = f.updates("p", "usage_update", s)
        self.assertTrue(first, f)
        self.assertEqual([u for u in first if "cost" in u], [])
        g = self.home.client([
            INITIALIZE,
            {"request": "session/load", "as": "load",
             "params": {"sessionId": s, "cwd": self.home.project, "mcpServers": []}},
            prompt(s, "And again?", **{"as": "p"}),
        ], args=("acp", "-c", "pi"), env=env2).check(self)
        self.assertEqual(g.result("p"), {"stopReason": "end_turn"})
        replayed = g.updates("load", "usage_update", s)
        second = g.updates("p", "usage_update", s)
        self.assertEqual(len(replayed), 1, g)
        self.assertTrue(second, g)
        self.assertEqual([u for u in replayed + second if "cost" in u], [])

    def test_config_option_categories(self):
        """A category name without "_" is the spec's own
        (SessionConfigOptionCategory: "Category names that do not begin
        with `_` are reserved for the ACP spec"): baton's coder option has
        none, its model option "model"."""
        f = self.home.client([INITIALIZE, new_session(self.home.project)],
                             env=fixture("text")).check(self)
        for o in f.result("s")["configOptions"]:
            cat = o.get("category")
            with self.subTest(o["id"]):
                self.assertTrue(cat is None or cat in CATEGORIES or cat.startswith("_"),
                                f"option {o['id']}: category {cat!r}")

    def test_list(self):
        here = self.home.mkdir("list-here")
        there = self.home.mkdir("list-there")
        _, a = self.turn("Say hello banana", cwd=here)
        _, b = self.turn("Say hello banana", cwd=there)
        f = self.home.client([
            INITIALIZE,
            {"request": "session/list", "as": "all", "params": {}},
            {"request": "session/list", "as": "here", "params": {"cwd": here}},
            {"request": "session/list", "as": "none",
             "params": {"cwd": self.home.mkdir("list-empty")}},
        ], env=fixture("text")).check(self)
        every = {e["sessionId"]: e for e in f.result("all")["sessions"]}
        self.assertIn(a, every)
        self.assertIn(b, every)
        self.assertEqual(every[a]["cwd"], here)
        self.assertEqual(every[a]["title"], "Say hello banana")
        self.assertTrue(every[a]["updatedAt"])
        self.assertEqual([e["sessionId"] for e in f.result("here")["sessions"]], [a])
        self.assertEqual(f.result("none")["sessions"], [])


if __name__ == "__main__":
    acpsdk.require()
    unittest.main(verbosity=2)
