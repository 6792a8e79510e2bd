#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`baton acp` and a conversation's work (docs/acp-agent.md): what each
turn changed in its git working tree comes as one tool_call of kind edit
at the turn's end, a diff content entry per hunk with absolute paths (and
nothing for a turn outside git or one that changed nothing); the session
config option "worktree" starts the conversation in a git worktree of its
own (`baton run --worktree`), fixed by the first prompt.

codex is the fake coder run after the home's edit.sh in the turn's
directory, so a turn changes files as a coder would; the agents run with
--no-model-list, as codex's model list would run the edit too. Every
message baton writes is checked against the ACP schema (acptest.py)."""
import os
import subprocess

import acptest
import servetest
from acptest import AgentCase

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org"]


def updates_of(msgs, kind):
    return [m["params"]["update"] for m in msgs
            if m["params"]["update"]["sessionUpdate"] == kind]


class Work(AgentCase):
    def setUp(self):
        super().setUp()
        self.edit = os.path.join(self.home.dir, "edit.sh")
        codex = os.path.join(self.home.dir, "codex")
        with open(codex, "w") as f:
            f.write(f"#!/bin/sh\n[ \"$1\" = app-server ] && [ -f '{self.edit}' ] && "
                    f"sh '{self.edit}'\nexec '{servetest.FAKE}' \"$@\"\n")
        os.chmod(codex, 0o755)
        self.home.env["BATON_CODEX_BIN"] = codex
        self.repo = os.path.join(self.home.dir, "repo")
        subprocess.run(["git", "init", "-q", "-b", "main", self.repo], check=True)
        with open(os.path.join(self.repo, "a.txt"), "w") as f:
            f.write("one\ntwo\n")
        subprocess.run(GIT + ["-C", self.repo, "add", "a.txt"], check=True)
        subprocess.run(GIT + ["-C", self.repo, "commit", "-qm", "a"], check=True)

    def edits(self, script):
        with open(self.edit, "w") as f:
            f.write(script)

    def agent(self, *args, init=True):
        return super().agent("--no-model-list", *args, init=init)

    def option(self, result, id_):
        (o,) = [o for o in result["configOptions"] if o["id"] == id_]
        return o

    def test_turn_changes(self):
        self.edits("printf 'new\\n' > new.txt\nprintf 'one\\nTWO\\n' > a.txt\n")
        a = self.agent()
        sid = a.new_session(self.repo)
        msgs = []
        self.assertEqual(a.prompt(sid, acptest.PROMPT, msgs), {"stopReason": "end_turn"})
        (t,) = [u for u in updates_of(msgs, "tool_call") if u["toolCallId"].startswith("changes-")]
        (c,) = self.conversation(sid)
        self.assertEqual(t["toolCallId"], f"changes-{c['last_run']}")
        self.assertEqual((t["kind"], t["status"]), ("edit", "completed"))
        self.assertEqual(t["title"], "Changes of turn 1: a.txt and 1 more file")
        a_txt, new_txt = os.path.join(self.repo, "a.txt"), os.path.join(self.repo, "new.txt")
        self.assertEqual(t["locations"], [{"path": a_txt}, {"path": new_txt}])
        self.assertEqual(t["content"], [
            {"type": "diff", "path": a_txt, "oldText": "one\ntwo\n", "newText": "one\nTWO\n"},
            {"type": "diff", "path": new_txt, "oldText": "", "newText": "new\n"}])
        # the same turn, as baton diff tells it
        diff = self.home.baton("diff", "--turn", "1", sid).stdout.decode()
        self.assertIn("+TWO", diff)
        # session/load in another agent replays it after the turn's events
        replay = []
        self.agent().request("session/load", {"sessionId": sid, "cwd": self.repo,
                                              "mcpServers": []}, replay)
        got = [m["params"]["update"] for m in replay]
        self.assertEqual([u for u in got if u.get("toolCallId", "").startswith("changes-")], [t])
        self.assertEqual(got[-1], t)  # the last of the turn
        # a turn that changes nothing: no such tool call
        self.edits("")
        msgs = []
        a.prompt(sid, "again", msgs)
        self.assertEqual([u for u in updates_of(msgs, "tool_call")
                          if u["toolCallId"].startswith("changes-")], [])

    def test_no_changes_outside_git(self):
        self.edits("printf 'x\\n' > x.txt\n")
        a = self.agent()
        sid = a.new_session()  # the home's project: in no repository
        msgs = []
        a.prompt(sid, acptest.PROMPT, msgs)
        self.assertEqual([u for u in updates_of(msgs, "tool_call")
                          if u["toolCallId"].startswith("changes-")], [])

    def test_worktree_option(self):
        self.edits("printf 'in the worktree\\n' > w.txt\n")
        a = self.agent()
        r = a.request("session/new", {"cwd": self.repo, "mcpServers": []})
        sid = r["sessionId"]
        wt = self.option(r, "worktree")
        self.assertEqual((wt["type"], wt["currentValue"]), ("select", "off"))
        self.assertEqual([c["value"] for c in wt["options"]], ["off", "on"])
        e = a.error("session/set_config_option",
                    {"sessionId": sid, "configId": "worktree", "value": "yes"})
        self.assertEqual(e["code"], -32602)
        r = a.request("session/set_config_option",
                      {"sessionId": sid, "configId": "worktree", "value": "on"})
        self.assertEqual(self.option(r, "worktree")["currentValue"], "on")
        msgs = []
        self.assertEqual(a.prompt(sid, acptest.PROMPT, msgs), {"stopReason": "end_turn"})
        (c,) = self.conversation(sid)
        path = os.path.join(self.home.home, "worktrees", sid[:12])
        self.assertEqual(c["worktree"]["path"], path)
        self.assertEqual((c["worktree"]["branch"], c["worktree"]["base"]),
                         (f"baton/{sid[:12]}", "main"))
        self.assertEqual(c["cwd"], path)
        # the coder worked there, not in the repository's own checkout
        self.assertTrue(os.path.isfile(os.path.join(path, "w.txt")))
        self.assertFalse(os.path.exists(os.path.join(self.repo, "w.txt")))
        (t,) = [u for u in updates_of(msgs, "tool_call") if u["toolCallId"].startswith("changes-")]
        self.assertEqual(t["locations"], [{"path": os.path.join(path, "w.txt")}])
        # fixed by the first prompt; a loaded session says it is on
        e = a.error("session/set_config_option",
                    {"sessionId": sid, "configId": "worktree", "value": "off"})
        self.assertEqual(e["code"], -32602)
        b = self.agent()
        replay = []
        r = b.request("session/load", {"sessionId": sid, "cwd": self.repo, "mcpServers": []},
                      replay)
        self.assertEqual(self.option(r, "worktree")["currentValue"], "on")
        # keep brings the work into main
        self.home.baton("keep", sid)
        with open(os.path.join(self.repo, "w.txt")) as f:
            self.assertEqual(f.read(), "in the worktree\n")

    def test_worktree_outside_git(self):
        a = self.agent()
        sid = a.new_session()  # in no repository
        a.request("session/set_config_option",
                  {"sessionId": sid, "configId": "worktree", "value": "on"})
        e = a.error("session/prompt", {"sessionId": sid,
                                       "prompt": [{"type": "text", "text": "x"}]})
        self.assertEqual(e["code"], -32602)
        self.assertIn("a worktree needs a git repository", e["message"])
        self.assertEqual(self.conversation(sid), [])  # nothing stored


if __name__ == "__main__":
    servetest.main()
