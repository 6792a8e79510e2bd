# SPDX-License-Identifier: MIT
"""`baton acp` with the fake coder as codex (acptest.py): initialize,
sessions, a streamed prompt, tool calls, a queued prompt, cancel, load in
a new process, list, config options, close, bad input (JSON-RPC
envelopes, ids, bytes that are not UTF-8), stdin or stdout closed and
stop signals mid-turn.
Every message baton writes is checked against the ACP schema."""
import contextlib
import json
import os
import signal
import subprocess
import threading
import time
import unittest
from pathlib import Path

import acptest
import servetest
from acptest import AgentCase, kinds, text_of
from servetest import ANSWER, HELD_ANSWER, NATIVE_ID, wait_for

FIXTURES = Path(servetest.TOP) / "fixtures/codex/0.171.0"
PROMPT = acptest.PROMPT


class Initialize(AgentCase):
    def test_capabilities(self):
        a = self.agent(init=False)
        r = a.initialize()
        self.assertEqual(r["protocolVersion"], 1)
        caps = r["agentCapabilities"]
        self.assertIs(caps["loadSession"], True)
        self.assertEqual(caps["promptCapabilities"],
                         {"image": False, "audio": False, "embeddedContext": True})
        self.assertEqual(set(caps["sessionCapabilities"]), {"list", "resume", "close"})
        self.assertEqual(r["agentInfo"]["name"], "baton")
        self.assertEqual(r["authMethods"], [])

    def test_protocol_version_needed(self):
        """protocolVersion is ACP's uint16: one that is missing or not such
        an integer is refused (and the agent stays uninitialized); any
        other is answered with baton's 1."""
        a = self.agent(init=False)
        for params in ({}, {"protocolVersion": "1"}, {"protocolVersion": 1.5},
                       {"protocolVersion": -1}, {"protocolVersion": 65536},
                       {"protocolVersion": None}, {"protocolVersion": True}):
            with self.subTest(params=params):
                e = a.error("initialize", params)
                self.assertEqual(e["code"], -32602)
                self.assertIn("protocolVersion", e["message"])
        e = a.error("session/new", {"cwd": self.home.project, "mcpServers": []})
        self.assertIn("initialize", e["message"])
        for v in (0, 2, 65535):
            r = a.request("initialize", {"protocolVersion": v})
            self.assertEqual(r["protocolVersion"], 1)

    def test_requests_before_initialize(self):
        a = self.agent(init=False)
        e = a.error("session/new", {"cwd": self.home.project, "mcpServers": []})
        self.assertEqual(e["code"], -32600)
        self.assertIn("initialize", e["message"])


class Prompt(AgentCase):
    def test_streamed_answer(self):
        a = self.agent()
        sid = a.new_session()
        self.assertEqual(self.conversation(sid), [], "stored only with its first prompt")
        updates = []
        r = a.prompt(sid, PROMPT, updates)
        self.assertEqual(r, {"stopReason": "end_turn"})
        self.assertEqual(text_of(updates), ANSWER)
        self.assertGreater(kinds(updates).count("agent_message_chunk"), 1, "streamed")
        usage = [u["params"]["update"] for u in updates
                 if u["params"]["update"]["sessionUpdate"] == "usage_update"]
        self.assertEqual(usage[-1]["used"], 3705)
        self.assertEqual(usage[-1]["size"], 258400)
        for u in updates:
            self.assertEqual(u["params"]["sessionId"], sid)
        conv = self.conversation(sid)
        self.assertEqual(len(conv), 1)
        self.assertEqual(conv[0]["title"], PROMPT)
        self.assertEqual(conv[0]["cwd"], self.home.project)
        msgs = self.home.show(sid)["messages"]
        self.assertEqual([(m["role"], m["text"]) for m in msgs],
                         [("user", PROMPT), ("assistant", ANSWER)])

    def test_next_prompt_resumes(self):
        a = self.agent()
        sid = a.new_session()
        a.prompt(sid, PROMPT)
        self.assertEqual(a.prompt(sid, "and again"), {"stopReason": "end_turn"})
        show = self.home.show(sid)
        self.assertEqual(show["conversation"]["native_session_id"], NATIVE_ID)
        self.assertEqual([m["text"] for m in show["messages"] if m["role"] == "user"],
                         [PROMPT, "and again"])
        self.assertEqual(len({m["run"] for m in show["messages"]}), 2)

    def test_blocks_become_the_prompt(self):
        a = self.agent()
        sid = a.new_session()
        blocks = [{"type": "text", "text": "look at"},
                  {"type": "resource_link", "name": "main.c", "uri": "file:///p/main.c"},
                  {"type": "resource", "resource": {"uri": "file:///p/a.txt", "text": "abc"}}]
        r = a.request("session/prompt", {"sessionId": sid, "prompt": blocks}, [])
        self.assertEqual(r["stopReason"], "end_turn")
        user = self.home.show(sid)["messages"][0]["text"]
        self.assertEqual(user, "look at\n\n[main.c](file:///p/main.c)\n\n"
                               "file:///p/a.txt:\n```\nabc\n```")

    def test_tool_call(self):
        self.home.env["FAKE_CODER_REPLAY"] = str(FIXTURES / "shell-declined.jsonl")
        a = self.agent()
        sid = a.new_session()
        id = a.send("session/prompt", {"sessionId": sid, "prompt": [
            {"type": "text", "text": "[[shell:echo baton-ok]]"}]})
        updates = []
        while True:  # the coder asks: the editor rejects
            msg = a.next(30)
            if msg.get("method") == "session/request_permission":
                a.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {
                    "outcome": {"outcome": "selected", "optionId": "reject"}}}) + "\n")
            elif "method" in msg:
                updates.append(msg)
            else:
                self.assertEqual(msg["id"], id)
                break
        tools = [u["params"]["update"] for u in updates
                 if u["params"]["update"]["sessionUpdate"].startswith("tool_call")]
        self.assertEqual([t["sessionUpdate"] for t in tools], ["tool_call", "tool_call_update"])
        self.assertEqual(tools[0]["kind"], "execute")
        self.assertIn("echo baton-ok", tools[0]["title"])
        self.assertEqual(tools[0]["status"], "in_progress")
        self.assertEqual(tools[1]["toolCallId"], tools[0]["toolCallId"])
        self.assertEqual(tools[1]["status"], "failed", "declined")

    def test_question_shown_not_asked(self):
        """codex asks the user (requestUserInput) under --approval auto: the
        editor is not asked to allow it but shown it, one failed tool call
        with the question and its options; the turn ends normally, the
        stored request declined by the policy."""
        lines = (FIXTURES / "interrupt.jsonl").read_text().splitlines(keepends=True)
        ask = ('{"id":0,"method":"item/tool/requestUserInput","params":{"threadId":"t",'
               '"turnId":"u","itemId":"call_q","isBlocking":true,"questions":[{"id":"db",'
               '"header":"DB","question":"Which database?","options":[{"label":"SQLite",'
               '"description":"one file"},{"label":"Postgres","description":"a server"}]}]}}\n')
        replay = Path(self.home.dir) / "question.jsonl"
        replay.write_text("".join(lines[:12]) + ask
                          + lines[15].replace('"interrupted"', '"completed"'))
        self.home.env["FAKE_CODER_REPLAY"] = str(replay)
        a = self.agent("--approval", "auto")
        sid = a.new_session()
        id = a.send("session/prompt", {"sessionId": sid, "prompt": [
            {"type": "text", "text": "Ask me"}]})
        updates = []
        while True:
            msg = a.next(30)
            self.assertNotEqual(msg.get("method"), "session/request_permission", msg)
            if "method" in msg:
                updates.append(msg["params"]["update"])
            else:
                self.assertEqual(msg["id"], id)
                self.assertEqual(msg["result"], {"stopReason": "end_turn"})
                break
        (q,) = [u for u in updates if u.get("toolCallId", "").startswith("question-")]
        self.assertEqual(q["sessionUpdate"], "tool_call")
        self.assertEqual(q["title"], "Question: Which database?")
        self.assertEqual((q["kind"], q["status"]), ("other", "failed"))
        self.assertEqual(q["content"], [{"type": "content", "content": {
            "type": "text", "text": "DB: Which database? [SQLite (one file) / Postgres (a server)]"
            "\n(nobody could answer during the turn; answer it with your next message)"}}])
        ev = [json.loads(x) for x in self.home.attach_lines(sid) if '"approval.resolved"' in x]
        self.assertEqual([(e["kind"], e["decision"], e["by"]) for e in ev],
                         [("user_input", "decline", "policy")])

    def test_file_change_as_diff(self):
        """codex's recorded file change (a new file): a tool_call of kind
        edit with the file as its title and location, and ACP diff content
        (no oldText: a new file), kept in the update that ends it."""
        self.home.env["FAKE_CODER_REPLAY"] = str(FIXTURES / "file-change.jsonl")
        a = self.agent()
        sid = a.new_session()
        updates = []
        a.prompt(sid, "[[write:hello.txt]]", updates)
        tools = [u["params"]["update"] for u in updates
                 if u["params"]["update"]["sessionUpdate"].startswith("tool_call")]
        self.assertEqual([t["sessionUpdate"] for t in tools], ["tool_call", "tool_call_update"])
        path = "/root/baton-fixtures/project/hello.txt"
        self.assertEqual((tools[0]["kind"], tools[0]["title"]), ("edit", path))
        diff = {"type": "diff", "path": path, "newText": "written by baton-standin\n"}
        for t in tools:
            self.assertEqual(t["content"], [diff], t)
            self.assertEqual(t["locations"], [{"path": path}])
        self.assertEqual(tools[1]["status"], "completed")

    def test_coder_not_installed(self):
        a = self.agent()
        sid = a.new_session()
        r = a.request("session/set_config_option",
                      {"sessionId": sid, "configId": "coder", "value": "pi"})
        coder = [o for o in r["configOptions"] if o["id"] == "coder"][0]
        self.assertEqual(coder["currentValue"], "pi")
        e = a.error("session/prompt", {"sessionId": sid,
                                       "prompt": [{"type": "text", "text": PROMPT}]})
        self.assertIn("pi", e["message"])
        self.assertEqual(self.home.ls(), [], "nothing stored")


class Queue(AgentCase):
    def test_prompt_queued_while_a_turn_runs(self):
        a = self.agent()
        sid = a.new_session()
        first = self.start_held(a, sid)
        second = a.send("session/prompt", {"sessionId": sid,
                                           "prompt": [{"type": "text", "text": "next"}]})
        wait_for(lambda: any(m["state"] == "queued" for m in self.home.show(sid)["messages"]),
                 30, "the prompt to wait queued")
        self.home.gate.release()
        updates = []
        self.assertEqual(a.answer(first, 60, updates)["result"], {"stopReason": "end_turn"})
        self.assertEqual(text_of(updates), ANSWER)
        updates = []
        self.assertEqual(a.answer(second, 60, updates)["result"], {"stopReason": "end_turn"})
        self.assertEqual(text_of(updates), ANSWER, "the queued turn streamed too")
        users = [m for m in self.home.show(sid)["messages"] if m["role"] == "user"]
        self.assertEqual([(m["text"], m["state"]) for m in users],
                         [(PROMPT, "complete"), ("next", "complete")])

    def test_two_prompts_at_once(self):
        # both in one write: the second is queued before the first's turn
        # starts; they go out in the order they came, both answered
        a = self.agent()
        sid = a.new_session()
        a.methods.update({10: "session/prompt", 11: "session/prompt"})
        a.write("".join(json.dumps({"jsonrpc": "2.0", "id": n, "method": "session/prompt",
                                    "params": {"sessionId": sid, "prompt": [
                                        {"type": "text", "text": t}]}}) + "\n"
                        for n, t in ((10, "FIRST"), (11, "SECOND"))))
        answers = a.answers([10, 11])
        self.assertEqual(answers[10].get("result"), {"stopReason": "end_turn"}, answers)
        self.assertEqual(answers[11].get("result"), {"stopReason": "end_turn"}, answers)
        users = [m["text"] for m in self.home.show(sid)["messages"] if m["role"] == "user"]
        self.assertEqual(users, ["FIRST", "SECOND"])

    def test_two_prompts_at_once_in_many_sessions(self):
        # 25 sessions at once widen the moment a second prompt is stored
        # while the first's turn begins: it goes out with that turn and is
        # answered by it (it was answered "taken from the queue", 1 in 40)
        a = self.agent()
        sids = [a.new_session() for _ in range(25)]
        ids = []
        lines = []
        for i, sid in enumerate(sids):
            for j, t in enumerate(("FIRST", "SECOND")):
                n = 100 + 2 * i + j
                a.methods[n] = "session/prompt"
                ids.append(n)
                lines.append(json.dumps({"jsonrpc": "2.0", "id": n, "method": "session/prompt",
                                         "params": {"sessionId": sid, "prompt": [
                                             {"type": "text", "text": t}]}}) + "\n")
        a.write("".join(lines))
        answers = a.answers(ids, timeout=120)
        bad = {n: m for n, m in answers.items() if m.get("result") != {"stopReason": "end_turn"}}
        self.assertEqual(bad, {})
        for sid in sids:
            users = [m for m in self.home.show(sid)["messages"] if m["role"] == "user"]
            self.assertEqual([(m["text"], m["state"]) for m in users],
                             [("FIRST", "complete"), ("SECOND", "complete")])

    @contextlib.contextmanager
    def behind_a_cli_run(self, killed=False):
        """A `baton run` in the background whose turn waits at the gate,
        and an agent's prompt for its conversation waiting queued behind
        it: (the agent, the conversation, the prompt's id); the run's
        process is self.cli. At the end the gate opens and the CLI must
        end well (killed: by SIGKILL)."""
        self.home.gate.hold()
        p = subprocess.Popen(servetest.baton_argv(["run", "--json", "-C", self.home.project,
                                                   PROMPT]),
                             env=self.home.env, cwd=self.home.dir, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL)
        self.cli = p
        try:
            conv = json.loads(p.stdout.readline())["conversation"]
            wait_for(lambda: self.running(conv), 30, "the CLI's turn to run")
            a = self.agent()
            a.request("session/resume", {"sessionId": conv, "cwd": self.home.project})
            id = a.send("session/prompt", {"sessionId": conv, "prompt": [
                {"type": "text", "text": "from the editor"}]})
            wait_for(lambda: self.queued(conv), 30, "the prompt to wait queued")
            yield a, conv, id
            self.home.gate.release()
            self.assertEqual(p.wait(60), -signal.SIGKILL if killed else 0)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
            p.stdout.close()

    def test_prompt_while_another_process_runs(self):
        """The conversation's turn runs in a `baton run`: the editor's
        prompt waits queued, goes out with that process's next turn, is
        streamed from the store and answered with its end (it was answered
        with an error)."""
        with self.behind_a_cli_run() as (a, conv, id):
            self.home.gate.release()
            updates = []
            self.assertEqual(a.answer(id, 60, updates)["result"], {"stopReason": "end_turn"})
            self.assertEqual(text_of(updates), ANSWER, "the other process's turn streamed")
        users = [(m["text"], m["state"]) for m in self.home.show(conv)["messages"]
                 if m["role"] == "user"]
        self.assertEqual(users, [(PROMPT, "complete"), ("from the editor", "complete")])

    def test_prompt_behind_a_killed_process(self):
        """The `baton run` holding the conversation is killed (SIGKILL):
        the agent finds within seconds that its run's baton process is
        gone, the run ends interrupted (recovered as `baton attach` does,
        its coder's group stopped) and the editor's prompt goes out as the
        next turn. It waited for ever."""
        with self.behind_a_cli_run(killed=True) as (a, conv, id):
            self.cli.kill()
            self.home.gate.release()
            answer = a.answer(id, 30, [])
            self.assertEqual(answer.get("result"), {"stopReason": "end_turn"}, answer)
        msgs = self.home.show(conv)["messages"]
        self.assertEqual([(m["role"], m["state"]) for m in msgs],
                         [("user", "complete"), ("assistant", "interrupted"),
                          ("user", "complete"), ("assistant", "complete")], msgs)

    def test_cancel_while_another_process_runs(self):
        """Cancelled while it waits behind another process's turn: taken
        back, answered cancelled; that turn is not ours to stop."""
        with self.behind_a_cli_run() as (a, conv, id):
            a.notify("session/cancel", {"sessionId": conv})
            self.assertEqual(a.answer(id, 30, [])["result"], {"stopReason": "cancelled"})
            self.assertEqual(self.queued(conv), [])
            self.assertTrue(self.running(conv), "the CLI's turn goes on")

    def test_prompt_right_after_cancel(self):
        # stop, then type: the new prompt runs once the cancelled turn ended
        a = self.agent()
        sid = a.new_session()
        first = self.start_held(a, sid)
        a.notify("session/cancel", {"sessionId": sid})
        second = a.send("session/prompt", {"sessionId": sid,
                                           "prompt": [{"type": "text", "text": "two"}]})
        answers = a.answers([first])  # the cancelled turn ends first (stopped by baton)
        self.home.gate.release()
        a.answers([first, second], got=answers)
        self.assertEqual(answers[first]["result"], {"stopReason": "cancelled"})
        self.assertEqual(answers[second].get("result"), {"stopReason": "end_turn"}, answers)
        users = [(m["text"], m["state"]) for m in self.home.show(sid)["messages"]
                 if m["role"] == "user"]
        self.assertEqual(users, [(PROMPT, "complete"), ("two", "complete")])

    def test_cancel(self):
        a = self.agent()
        sid = a.new_session()
        first = self.start_held(a, sid)
        second = a.send("session/prompt", {"sessionId": sid,
                                           "prompt": [{"type": "text", "text": "next"}]})
        wait_for(lambda: any(m["state"] == "queued" for m in self.home.show(sid)["messages"]),
                 30, "the prompt to wait queued")
        a.notify("session/cancel", {"sessionId": sid})
        updates = []
        answers = a.answers([first, second], updates=updates)
        self.assertEqual(answers[first]["result"], {"stopReason": "cancelled"})
        self.assertEqual(answers[second]["result"], {"stopReason": "cancelled"})
        self.assertTrue(ANSWER.startswith(text_of(updates)))
        msgs = self.home.show(sid)["messages"]
        self.assertEqual([m["text"] for m in msgs if m["role"] == "user"], [PROMPT],
                         "the queued prompt was taken back")
        self.assertEqual(self.conversation(sid)[0]["last_run_state"], "cancelled")
        answer = [m for m in msgs if m["role"] == "assistant"][0]
        self.assertTrue(answer["text"].startswith(HELD_ANSWER), "the partial answer is kept")
        self.home.gate.release()
        self.assertEqual(a.prompt(sid, "after"), {"stopReason": "end_turn"})


class Sessions(AgentCase):
    def test_load_in_a_new_process(self):
        a = self.agent()
        sid = a.new_session()
        a.prompt(sid, PROMPT)
        self.assertEqual(a.close(), 0)
        b = self.agent()
        updates = []
        r = b.request("session/load", {"sessionId": sid, "cwd": self.home.project,
                                       "mcpServers": []}, updates)
        self.assertIn("configOptions", r)
        self.assertEqual(kinds(updates)[0], "user_message_chunk")
        self.assertEqual(text_of(updates, "user_message_chunk"), PROMPT)
        self.assertEqual(text_of(updates), ANSWER)
        self.assertEqual(b.prompt(sid, "and again"), {"stopReason": "end_turn"})
        show = self.home.show(sid)
        self.assertEqual(len([m for m in show["messages"] if m["role"] == "user"]), 2)
        self.assertEqual(show["conversation"]["native_session_id"], NATIVE_ID)

    def test_load_replays_a_retried_turn(self):
        """A turn cancelled, then run again with `baton retry`: load
        replays both runs' answers, as `baton show` lists them (it
        replayed the cancelled one only: a retry's run has no prompt of
        its own)."""
        a = self.agent()
        sid = a.new_session()
        first = self.start_held(a, sid)
        a.notify("session/cancel", {"sessionId": sid})
        self.assertEqual(a.answers([first])[first]["result"], {"stopReason": "cancelled"})
        self.assertEqual(a.close(), 0)
        self.home.gate.release()
        self.home.baton("retry", sid)
        answers = [m["text"] for m in self.home.show(sid)["messages"] if m["role"] == "assistant"]
        self.assertEqual(len(answers), 2, answers)
        self.assertEqual(answers[1], ANSWER)
        b = self.agent()
        updates = []
        b.request("session/load", {"sessionId": sid, "cwd": self.home.project,
                                   "mcpServers": []}, updates)
        self.assertEqual(text_of(updates, "user_message_chunk"), PROMPT)
        self.assertEqual(text_of(updates), answers[0] + answers[1])

    def test_load_replays_in_turn_order(self):
        """A turn cancelled with a prompt queued meanwhile (`baton send`),
        then retried (`baton retry`; its owner then sends the queued
        prompt): load replays each answer under the prompt it answers, as
        `baton show` lists them; the retry's answer, stored after the
        queued prompt, came under it (issue 29)."""
        a = self.agent()
        sid = a.new_session()
        first = self.start_held(a, sid)
        self.home.baton("send", sid, "queued meanwhile")
        a.notify("session/cancel", {"sessionId": sid})
        self.assertEqual(a.answers([first])[first]["result"], {"stopReason": "cancelled"})
        self.assertEqual(a.close(), 0)
        self.home.gate.release()
        self.home.baton("retry", sid)

        def settled():
            msgs = self.home.show(sid)["messages"]
            return msgs if [m["state"] for m in msgs] == [
                "complete", "cancelled", "complete", "complete", "complete"] else None
        msgs = wait_for(settled, 60, "the retry, then the queued prompt's turn")
        self.assertEqual([(m["role"], m["text"]) for m in msgs[2:]],
                         [("assistant", ANSWER), ("user", "queued meanwhile"),
                          ("assistant", ANSWER)])
        b = self.agent()
        updates = []
        b.request("session/load", {"sessionId": sid, "cwd": self.home.project,
                                   "mcpServers": []}, updates)
        said = []  # (kind, text) with the chunks of one message joined
        for u in updates:
            up = u["params"]["update"] if u.get("method") == "session/update" else None
            if not up or up["sessionUpdate"] not in ("user_message_chunk", "agent_message_chunk"):
                continue
            if said and said[-1][0] == up["sessionUpdate"]:
                said[-1] = (said[-1][0], said[-1][1] + up["content"]["text"])
            else:
                said.append((up["sessionUpdate"], up["content"]["text"]))
        self.assertEqual(said, [("user_message_chunk", PROMPT),
                                ("agent_message_chunk", msgs[1]["text"] + ANSWER),
                                ("user_message_chunk", "queued meanwhile"),
                                ("agent_message_chunk", ANSWER)])

    def test_cli_conversation_opens(self):
        p = self.home.baton("run", "--json", "-C", self.home.project, PROMPT)
        conv = json.loads(p.stdout.decode().splitlines()[0])["conversation"]
        a = self.agent()
        r = a.request("session/resume", {"sessionId": conv, "cwd": self.home.project})
        self.assertIn("configOptions", r)
        self.assertEqual(a.prompt(conv, "from the editor"), {"stopReason": "end_turn"})
        self.assertEqual(len(self.home.show(conv)["messages"]), 4)

    def test_close_then_open_again(self):
        """A closed session takes no prompt (one still ran after close)
        until session/load or session/resume opens it again."""
        a = self.agent()
        sid = a.new_session()
        a.prompt(sid, PROMPT)
        a.request("session/close", {"sessionId": sid})
        e = a.error("session/prompt", {"sessionId": sid,
                                       "prompt": [{"type": "text", "text": "after close"}]})
        self.assertEqual(e["code"], -32002)
        self.assertIn("closed", e["message"])
        self.assertEqual(a.error("session/set_config_option",
                                 {"sessionId": sid, "configId": "model",
                                  "value": "default"})["code"], -32002)
        self.assertEqual(a.error("session/close", {"sessionId": sid})["code"], -32002)
        self.assertEqual(len(self.home.show(sid)["messages"]), 2, "nothing ran")
        a.request("session/resume", {"sessionId": sid, "cwd": self.home.project})
        self.assertEqual(a.prompt(sid, "and again"), {"stopReason": "end_turn"})
        self.assertEqual(len(self.home.show(sid)["messages"]), 4)

    def test_load_unknown(self):
        a = self.agent()
        for sid in ("0000000000000000000000", "../../etc", ""):
            e = a.error("session/load", {"sessionId": sid, "cwd": self.home.project,
                                         "mcpServers": []})
            self.assertEqual(e["code"], -32002, sid)

    def test_list(self):
        other = os.path.join(self.home.dir, "other")
        os.mkdir(other)
        os.symlink(other, os.path.join(self.home.dir, "link"))
        a = self.agent()
        s1 = a.new_session()
        a.prompt(s1, PROMPT)
        s2 = a.new_session(os.path.join(self.home.dir, "link") + "/../other//")
        a.prompt(s2, "elsewhere")
        a.new_session()  # no prompt: not stored, not listed
        r = a.request("session/list", {})
        self.assertEqual([s["sessionId"] for s in r["sessions"]], [s2, s1])
        self.assertEqual(r["sessions"][0]["title"], "elsewhere")
        self.assertNotIn("nextCursor", r)
        r = a.request("session/list", {"cwd": other})
        self.assertEqual([s["sessionId"] for s in r["sessions"]], [s2], "stored resolved")
        self.assertEqual(r["sessions"][0]["cwd"], os.path.realpath(other))
        r = a.request("session/list", {"cwd": os.path.join(self.home.dir, "link")})
        self.assertEqual([s["sessionId"] for s in r["sessions"]], [s2], "asked resolved")
        for bad in ({"cursor": "x"}, {"cursor": 5}, {"cwd": "project"}, {"cwd": 7}):
            with self.subTest(params=bad):
                self.assertEqual(a.error("session/list", bad)["code"], -32602)

    def test_config_options(self):
        a = self.agent("-m", "gpt-test")
        sid = a.new_session()
        e = a.error("session/set_config_option", {"sessionId": sid, "configId": "coder",
                                                  "value": "nosuch"})
        self.assertEqual(e["code"], -32602)
        e = a.error("session/set_config_option", {"sessionId": sid, "configId": "colour",
                                                  "value": "red"})
        self.assertEqual(e["code"], -32602)
        for bad in ("", "-x", "--dangerously-bypass-approvals-and-sandbox", "a\nb", "m" * 300):
            with self.subTest(model=bad):
                e = a.error("session/set_config_option", {"sessionId": sid, "configId": "model",
                                                          "value": bad})
                self.assertEqual(e["code"], -32602)
        r = a.request("session/set_config_option", {"sessionId": sid, "configId": "model",
                                                    "value": "default"})
        model = [o for o in r["configOptions"] if o["id"] == "model"][0]
        self.assertEqual(model["currentValue"], "default")
        a.prompt(sid, PROMPT)
        e = a.error("session/set_config_option", {"sessionId": sid, "configId": "model",
                                                  "value": "default"})
        self.assertIn("first prompt", e["message"])

    def test_models_used_before_are_choices(self):
        """Without the coder's own list (--no-model-list; test_models.py
        has it) the select offers the default, the session's own, and
        those its coder ran with before."""
        self.home.baton("run", "-C", self.home.project, "-m", "model-a", PROMPT)
        self.home.baton("run", "-C", self.home.project, "-m", "model-b", PROMPT)
        a = self.agent("-m", "model-c", "--no-model-list")
        r = a.request("session/new", {"cwd": self.home.project, "mcpServers": []})
        (model,) = [o for o in r["configOptions"] if o["id"] == "model"]
        self.assertEqual(model["currentValue"], "model-c")
        self.assertEqual([c["value"] for c in model["options"]],
                         ["default", "model-c", "model-b", "model-a"])
        r = a.request("session/set_config_option", {"sessionId": r["sessionId"],
                                                    "configId": "coder", "value": "pi"})
        (model,) = [o for o in r["configOptions"] if o["id"] == "model"]
        self.assertEqual([c["value"] for c in model["options"]], ["default", "model-c"],
                         "pi never ran here")


class Permission(AgentCase):
    """A coder's approval request asked of the editor (codex's recorded
    command approval: the fake waits for baton's answer)."""

    def setUp(self):
        super().setUp()
        self.home.env["FAKE_CODER_REPLAY"] = str(FIXTURES / "shell-approved.jsonl")

    def resolved(self, sid):
        """The decision and who made it, from the stored events."""
        lines = self.home.attach_lines(sid)
        ev = [json.loads(x) for x in lines if '"approval.resolved"' in x]
        self.assertEqual(len(ev), 1, lines)
        return ev[0]["decision"], ev[0]["by"]

    def ask(self, a, sid):
        """Start a prompt; the permission request it brings."""
        id = a.send("session/prompt", {"sessionId": sid,
                                       "prompt": [{"type": "text", "text": "[[shell:echo hi]]"}]})
        while True:
            msg = a.next(30)
            if msg.get("method") == "session/request_permission":
                return id, msg
            self.assertIn("method", msg, f"answered before asking: {msg}")

    def test_allow_and_reject(self):
        for option, decision in (("allow", "accept"), ("reject", "decline")):
            with self.subTest(option=option):
                a = self.agent()
                sid = a.new_session()
                id, req = self.ask(a, sid)
                p = req["params"]
                self.assertEqual(p["sessionId"], sid)
                self.assertEqual(p["toolCall"]["kind"], "execute")
                self.assertEqual(p["toolCall"]["status"], "pending")
                self.assertEqual({o["kind"] for o in p["options"]},
                                 {"allow_once", "allow_always", "reject_once"})
                a.write(json.dumps({"jsonrpc": "2.0", "id": req["id"], "result": {
                    "outcome": {"outcome": "selected", "optionId": option}}}) + "\n")
                self.assertEqual(a.answer(id, 60, [])["result"], {"stopReason": "end_turn"})
                self.assertEqual(self.resolved(sid), (decision, "user"))
                a.close()

    def test_allow_always_asks_no_more(self):
        """allow_always to a command: the session's later commands are
        allowed without asking, a file change is still asked about."""
        replay = Path(self.home.dir) / "replay"  # what the next coder replays
        replay.write_text(str(FIXTURES / "shell-approved.jsonl"))
        codex = Path(self.home.dir) / "codex"
        codex.write_text(f'#!/bin/sh\nFAKE_CODER_REPLAY="$(cat {replay})" '
                         f'exec {servetest.FAKE} "$@"\n')
        codex.chmod(0o755)
        self.home.env["BATON_CODEX_BIN"] = str(codex)
        a = self.agent()
        sid = a.new_session()
        id, req = self.ask(a, sid)
        (always,) = [o for o in req["params"]["options"] if o["kind"] == "allow_always"]
        self.assertEqual(always["name"], "Allow commands for the rest of this session")
        a.write(json.dumps({"jsonrpc": "2.0", "id": req["id"], "result": {
            "outcome": {"outcome": "selected", "optionId": "allow_always"}}}) + "\n")
        a.answer(id, 60, [])
        updates = []
        a.prompt(sid, "[[shell:echo hi]]", updates)
        self.assertNotIn("session/request_permission", [u.get("method") for u in updates],
                         "commands allowed for the rest of the session: not asked again")
        self.assertEqual(self.resolved(sid), ("accept", "user"))
        replay.write_text(str(FIXTURES / "file-change-approved.jsonl"))
        id = a.send("session/prompt", {"sessionId": sid, "prompt": [
            {"type": "text", "text": "[[write:a.txt]]"}]})
        req = a.next(30)
        while req.get("method") != "session/request_permission":
            self.assertIn("method", req, f"answered before asking: {req}")
            req = a.next(30)
        self.assertEqual(req["params"]["toolCall"]["kind"], "edit")
        (always,) = [o for o in req["params"]["options"] if o["kind"] == "allow_always"]
        self.assertEqual(always["name"], "Allow file changes for the rest of this session")
        a.write(json.dumps({"jsonrpc": "2.0", "id": req["id"], "result": {
            "outcome": {"outcome": "selected", "optionId": "reject"}}}) + "\n")
        self.assertEqual(a.answer(id, 60, [])["result"], {"stopReason": "end_turn"})
        self.assertEqual(self.resolved(sid), ("decline", "user"))

    def test_no_answer_leaves_it_to_the_policy(self):
        a = self.agent("--idle-timeout", "1")
        sid = a.new_session()
        id, req = self.ask(a, sid)
        msg = a.answer(id, 60, [])  # nobody answers: deny, the policy's, after 1 s
        self.assertIn("result", msg)
        self.assertEqual(self.resolved(sid), ("decline", "timeout"))
        # an answer that comes late changes nothing
        a.write(json.dumps({"jsonrpc": "2.0", "id": req["id"], "result": {
            "outcome": {"outcome": "selected", "optionId": "allow"}}}) + "\n")
        a.initialize()

    def test_store_free_while_asking(self):
        # a turn waiting for the editor holds no write lock: the CLI and
        # another session store and run meanwhile (they waited 5 s, then
        # failed with "database is locked")
        a = self.agent()
        sid = a.new_session()
        id, req = self.ask(a, sid)
        p = self.home.baton("run", "--json", "-C", self.home.project, "meanwhile", timeout=30)
        self.assertEqual(p.returncode, 0)
        other = a.new_session()
        other_id = a.send("session/prompt", {"sessionId": other, "prompt": [
            {"type": "text", "text": "[[shell:echo hi]]"}]})
        second = None
        while second is None:  # the other session's own request
            msg = a.next(30)
            self.assertNotIn("error", msg, msg)
            if msg.get("method") == "session/request_permission":
                second = msg
        for r in (req, second):
            a.write(json.dumps({"jsonrpc": "2.0", "id": r["id"], "result": {
                "outcome": {"outcome": "selected", "optionId": "reject"}}}) + "\n")
        answers = a.answers([id, other_id])
        self.assertEqual(answers[id]["result"], {"stopReason": "end_turn"})
        self.assertEqual(answers[other_id]["result"], {"stopReason": "end_turn"})

    def test_cancel_while_asking(self):
        a = self.agent()
        sid = a.new_session()
        id, req = self.ask(a, sid)
        a.notify("session/cancel", {"sessionId": sid})
        self.assertEqual(a.answer(id, 60, [])["result"], {"stopReason": "cancelled"})
        self.assertEqual(self.conversation(sid)[0]["last_run_state"], "cancelled")
        # no one answered it: declined because of the cancel, not by the user
        self.assertEqual(self.resolved(sid), ("decline", "cancel"))

    def test_stdin_closed_while_asking(self):
        a = self.agent()
        sid = a.new_session()
        self.ask(a, sid)
        self.assertEqual(a.close(60), 0)
        self.assertEqual(self.resolved(sid), ("decline", "cancel"))


class BadInput(AgentCase):
    def test_not_json_rpc(self):
        a = self.agent()
        init = '"method":"initialize","params":{"protocolVersion":1}'
        for line, code, id in (
                ("{not json", -32700, None), ("[1,2]", -32600, None),
                ('{"jsonrpc":"2.0","id":{},"method":"x"}', -32600, None),
                ('{"jsonrpc":"2.0","id":1,"method":5}', -32600, 1),
                ("{}", -32600, None), ('{"jsonrpc":"2.0"}', -32600, None),
                ('{"id":3,' + init + "}", -32600, 3),
                ('{"jsonrpc":"1.0","id":4,' + init + "}", -32600, 4),
                ('{"jsonrpc":2,"id":"s",' + init + "}", -32600, "s"),
                # ids a double cannot hold, or not whole (1e308 was cast: undefined)
                ('{"jsonrpc":"2.0","id":1e308,' + init + "}", -32600, None),
                ('{"jsonrpc":"2.0","id":-1e300,' + init + "}", -32600, None),
                ('{"jsonrpc":"2.0","id":1.5,' + init + "}", -32600, None),
                ('{"jsonrpc":"2.0","id":9007199254740993,' + init + "}", -32600, None),
                ('{"jsonrpc":"2.0","id":-9007199254740992,' + init + "}", -32600, None),
                # more than the message on its line: refused whole, not run
                ('{"jsonrpc":"2.0","id":5,' + init + "} x", -32700, None),
                ('{"jsonrpc":"2.0","id":6,' + init + '}{"jsonrpc":"2.0","id":7,' + init + "}",
                 -32700, None)):
            a.write(line + "\n")
            msg = a.next()
            self.assertEqual(msg["error"]["code"], code, line)
            self.assertEqual(msg["id"], id, line)
        # a notification of an unknown method and a stray response: no answer
        a.write('{"jsonrpc":"2.0","method":"nosuch/thing"}\n')
        a.write('{"jsonrpc":"2.0","id":99,"result":{}}\n')
        a.write("\n")
        a.initialize()  # the next message is this answer: nothing came before it

    def test_ids_come_back_as_sent(self):
        """An id is answered as it came: an integer as its digits (cJSON's
        doubles printed 1e15 as 1e+15), a string, null."""
        a = self.agent()
        init = '"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}'
        for sent, back in (("1e15", b'"id":1000000000000000,'),
                           ("9007199254740991", b'"id":9007199254740991,'),
                           ("-9007199254740991", b'"id":-9007199254740991,'),
                           ("-7", b'"id":-7,'), ("0", b'"id":0,'), ("12.0", b'"id":12,'),
                           ('"x\\u00e9"', '"id":"x\u00e9",'.encode()), ("null", b'"id":null,')):
            n = len(a.lines)
            a.methods[json.loads(sent)] = "initialize"
            a.write('{"jsonrpc":"2.0","id":' + sent + "," + init + "}\n")
            msg = a.next()
            self.assertIn("result", msg, sent)
            self.assertIn(back, a.lines[n], sent)

    def test_not_utf8(self):
        """Bytes that are not UTF-8 are refused (they were echoed raw in
        errors and stored in cwd and model); every answer is UTF-8."""
        a = self.agent()
        sid = a.new_session()
        bad = (b'{"jsonrpc":"2.0","id":%d,"method":"session/new","params":{"cwd":"/tmp/\xff",'
               b'"mcpServers":[]}}',
               b'{"jsonrpc":"2.0","id":%d,"method":"session/nosuch\xc3"}',
               b'{"jsonrpc":"2.0","id":%d,"method":"session/set_config_option","params":'
               b'{"sessionId":"' + sid.encode() + b'","configId":"model","value":"m\xed\xa0\x80"}}',
               b'{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":"' +
               sid.encode() + b'","prompt":[{"type":"text","text":"Say \xc0\xaf"}]}}')
        for i, line in enumerate(bad):
            n = len(a.lines)
            a.write(line % (100 + i) + b"\n")
            msg = a.next()
            self.assertEqual((msg["id"], msg["error"]["code"]), (100 + i, -32602), line)
            self.assertIn("UTF-8", msg["error"]["message"])
            a.lines[n].decode("utf-8")  # strict
        # an id that holds the bad bytes, or a NUL, is not echoed: null
        for line in (b'{"jsonrpc":"2.0","id":"\xff","method":"initialize","params":{}}',
                     b'{"jsonrpc":"1.0","id":"\xff\xfe","method":"initialize"}',
                     b'{"jsonrpc":"2.0","id":"a\\u0000b","method":"initialize","params":{}}'):
            n = len(a.lines)
            a.write(line + b"\n")
            msg = a.next()
            self.assertIsNone(msg["id"], line)
            self.assertIn(msg["error"]["code"], (-32600, -32602), line)
            a.lines[n].decode("utf-8")
        # a notification or a response so: no answer, and nothing taken
        a.write(b'{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"\xff"}}\n')
        a.initialize()
        self.assertEqual(self.home.ls(), [], "nothing stored")
        opts = a.request("session/set_config_option",
                         {"sessionId": sid, "configId": "model", "value": "default"})
        (model,) = [o for o in opts["configOptions"] if o["id"] == "model"]
        self.assertEqual(model["currentValue"], "default")

    def test_cancel_sent_as_a_request(self):
        """session/cancel is a notification; sent with an id it still
        cancels, and it is answered, as JSON-RPC wants of a request (the
        client waited for ever)."""
        a = self.agent()
        sid = a.new_session()
        first = self.start_held(a, sid)
        self.assertEqual(a.request("session/cancel", {"sessionId": sid}, []), {})
        self.assertEqual(a.answers([first])[first]["result"], {"stopReason": "cancelled"})
        self.home.gate.release()

    def test_prompt_for_a_removed_conversation(self):
        """The session's conversation removed with `baton rm` meanwhile:
        the next prompt is refused as for an unknown session, -32002
        (resource not found), and nothing is stored again."""
        a = self.agent()
        sid = a.new_session()
        self.assertEqual(a.prompt(sid, PROMPT), {"stopReason": "end_turn"})
        self.home.baton("rm", "-y", sid)
        e = a.error("session/prompt", {"sessionId": sid,
                                       "prompt": [{"type": "text", "text": "still there?"}]})
        self.assertEqual(e["code"], -32002, e)
        self.assertEqual(self.home.ls(), [])

    def test_method_not_found(self):
        a = self.agent()
        e = a.error("session/nosuch", {})
        self.assertEqual(e["code"], -32601)
        self.assertIn("session/nosuch", e["message"])

    def test_bad_params(self):
        a = self.agent()
        sid = a.new_session()
        cases = [
            ("session/new", {"cwd": "relative", "mcpServers": []}),
            ("session/new", {"mcpServers": []}),
            ("session/new", {"cwd": "/no/such/dir", "mcpServers": []}),
            ("session/new", [1]),
            ("session/prompt", {"sessionId": sid}),
            ("session/prompt", {"sessionId": sid, "prompt": []}),
            ("session/prompt", {"sessionId": sid, "prompt": [{"type": "image",
                                                              "data": "", "mimeType": "x"}]}),
            ("session/prompt", {"sessionId": sid, "prompt": [{"type": "text"}]}),
            ("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "a\0b"}]}),
            ("session/new", {"cwd": self.home.project + "\0/x", "mcpServers": []}),
        ]
        for method, params in cases:
            with self.subTest(method=method, params=params):
                self.assertEqual(a.error(method, params)["code"], -32602)
        # a raw NUL byte in a string (cJSON takes it, and its strings end there)
        a.write(b'{"jsonrpc":"2.0","id":77,"method":"session/prompt","params":{"sessionId":"' +
                sid.encode() + b'","prompt":[{"type":"text","text":"Say hi\x00 rm -rf"}]}}\n')
        msg = a.next()
        self.assertEqual((msg["id"], msg["error"]["code"]), (77, -32602), msg)
        e = a.error("session/prompt", {"sessionId": "nosuch",
                                       "prompt": [{"type": "text", "text": "x"}]})
        self.assertEqual(e["code"], -32002)
        self.assertEqual(self.home.ls(), [], "nothing stored")

    def test_stdin_closed_mid_turn(self):
        pidfile = os.path.join(self.home.dir, "grandchild.pid")
        self.home.env.update(FAKE_CODER_GRANDCHILD="1", FAKE_CODER_PIDFILE=pidfile)
        a = self.agent()
        sid = a.new_session()
        self.start_held(a, sid)
        self.assertEqual(a.close(60), 0)
        conv = self.conversation(sid)[0]
        self.assertEqual(conv["last_run_state"], "cancelled")
        msgs = self.home.show(sid)["messages"]
        self.assertTrue([m for m in msgs if m["role"] == "assistant"][0]["text"]
                        .startswith(HELD_ANSWER))
        self.assert_gone(pidfile)

    def assert_gone(self, pidfile):
        pid = int(wait_for(lambda: Path(pidfile).read_text().strip() or None, 5, "the pid"))
        with self.assertRaises(ProcessLookupError, msg="the coder's group is gone"):
            os.kill(pid, 0)

    def test_stop_signal_mid_turn(self):
        """SIGINT, SIGTERM or SIGHUP stops baton acp as the end of stdin
        does (it only cancelled the turn, and baton acp went on); a prompt
        still queued stays queued."""
        pidfile = os.path.join(self.home.dir, "grandchild.pid")
        self.home.env.update(FAKE_CODER_GRANDCHILD="1", FAKE_CODER_PIDFILE=pidfile)
        for signo in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            with self.subTest(signal=signo.name):
                Path(pidfile).write_text("")
                # no model listing: its coder would write the pid file too
                a = self.agent("--no-model-list")
                sid = a.new_session()
                self.start_held(a, sid)
                # the run is "running" once spawned, before the coder has
                # made its grandchild: a stop before that left no pid to
                # check (a 5 s wait for it failed on a loaded machine)
                wait_for(lambda: Path(pidfile).read_text().strip() or None, 30,
                         "the coder's grandchild")
                a.send("session/prompt", {"sessionId": sid,
                                          "prompt": [{"type": "text", "text": "queued"}]})
                wait_for(lambda: self.queued(sid), 30, "the second prompt queued")
                a.proc.send_signal(signo)
                self.assertEqual(a.proc.wait(60), 130)
                self.assertIn(f"stopped by {signo.name}", a.stderr())
                self.assertEqual(self.conversation(sid)[0]["last_run_state"], "cancelled")
                self.assertEqual(self.queued(sid), ["queued"])
                self.assert_gone(pidfile)
                self.home.gate.release()

    def test_stop_signal_while_stdout_is_full(self):
        """An editor that reads nothing: baton acp blocks writing (the lock
        held), and a stop signal still ends it (it hung, even after three)."""
        p = subprocess.Popen(servetest.baton_argv(["acp"]), env=self.home.env,
                             cwd=self.home.dir, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        lines = b"".join(b'{"jsonrpc":"2.0","id":%d,"method":"bogus/x"}\n' % i
                         for i in range(3000))  # ~250 KiB of answers; the pipe holds 64

        def feed():
            try:
                p.stdin.write(lines)
                p.stdin.flush()
            except OSError:
                pass
        writer = threading.Thread(target=feed, daemon=True)
        writer.start()
        try:
            time.sleep(2)
            self.assertIsNone(p.poll(), "baton acp waits on its stdout")
            p.send_signal(signal.SIGTERM)
            self.assertEqual(p.wait(20), 130)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
            p.stdout.close()
            err = p.stderr.read().decode()
            p.stderr.close()
            writer.join(10)
            try:
                p.stdin.close()
            except OSError:
                pass
        self.assertIn("stopped by SIGTERM", err)

    def test_stdout_closed_mid_turn(self):
        """The editor stops reading: the turn is stopped at once, not left
        running for nobody, and baton acp exits 141 saying why."""
        pidfile = os.path.join(self.home.dir, "grandchild.pid")
        self.home.env.update(FAKE_CODER_GRANDCHILD="1", FAKE_CODER_PIDFILE=pidfile)
        self.home.gate.hold()
        p = subprocess.Popen(servetest.baton_argv(["acp"]), env=self.home.env,
                             cwd=self.home.dir, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)

        def call(id, method, params):
            p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": id, "method": method,
                                      "params": params}).encode() + b"\n")
            p.stdin.flush()
        call(1, "initialize", {"protocolVersion": 1})
        call(2, "session/new", {"cwd": self.home.project, "mcpServers": []})
        json.loads(p.stdout.readline())
        sid = json.loads(p.stdout.readline())["result"]["sessionId"]
        call(3, "session/prompt", {"sessionId": sid,
                                   "prompt": [{"type": "text", "text": PROMPT}]})
        wait_for(lambda: self.running(sid), 30, "the turn to run")
        p.stdout.close()
        try:
            self.assertEqual(p.wait(60), 141)
        finally:
            if p.poll() is None:
                p.kill()
            err = p.stderr.read().decode()
            p.stdin.close()
            p.stderr.close()
        self.assertIn("cannot write to stdout (the editor closed it)", err)
        self.assertEqual(self.conversation(sid)[0]["last_run_state"], "cancelled")
        self.assert_gone(pidfile)


if __name__ == "__main__":
    acptest  # noqa: B018  (imported for its checks: skipped without the SDK)
    servetest.main()
