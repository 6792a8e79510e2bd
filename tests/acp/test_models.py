# SPDX-License-Identifier: MIT
"""`baton acp`'s model select with the coders' own model lists: codex
app-server's model/list and pi rpc's get_available_models, their
recorded answers (fixtures/<coder>/<version>/model-list*.stdout) replayed
by the fake coder. session/new is answered at once with what baton knows
(the default, the models used before); the list follows as a
config_option_update, once per coder and agent process. A coder that
cannot list leaves the select as it was and says why on stderr;
--no-model-list starts no coder. Every message baton writes is checked
against the ACP schema (acptest.py)."""
import os
import time
from pathlib import Path

import acptest
import servetest
from acptest import PROMPT, AgentCase

FIXTURES = servetest.TOP / "fixtures"
# codex 0.171.0's own catalog, in its order; GPT-6.2-Sol its default
CODEX_MODELS = ["gpt-6.2-sol", "gpt-6.2-astra", "gpt-6.1-terra", "gpt-6.1-sol", "gpt-6-astra",
                "gpt-6-sol", "gpt-6-luna", "gpt-5.6-sol", "gpt-5.6-terra", "gpt-5.6-luna",
                "gpt-5.5"]


def model_option(options):
    (model,) = [o for o in options if o["id"] == "model"]
    return model


def values(model):
    return [c["value"] for c in model["options"]]


class Models(AgentCase):
    def setUp(self):
        super().setUp()
        self.log = os.path.join(self.home.dir, "coder-stdin.log")

    def replay(self, recording):
        """Coders started from now on answer with recording, freely."""
        for k in ("FAKE_CODER_PAUSE_AFTER", "FAKE_CODER_PAUSE_FILE"):
            self.home.env.pop(k, None)
        self.home.env["FAKE_CODER_REPLAY"] = str(recording)
        self.home.env["FAKE_CODER_LOG_STDIN"] = self.log

    def listings(self, request):
        """How many listings the coders were asked for (request: the line
        a listing writes, as the stdin log has it)."""
        if not os.path.exists(self.log):
            return 0
        with open(self.log, encoding="utf-8") as f:
            return sum(request in line for line in f)

    def update(self, a, sid):
        """The next message: sid's config_option_update; its model select."""
        msg = a.next(30)
        self.assertEqual(msg.get("method"), "session/update", msg)
        self.assertEqual(msg["params"]["sessionId"], sid)
        u = msg["params"]["update"]
        self.assertEqual(u["sessionUpdate"], "config_option_update", u)
        return model_option(u["configOptions"])

    def test_codex_lists_its_models(self):
        self.home.baton("run", "-C", self.home.project, "-m", "model-a", PROMPT)
        self.replay(FIXTURES / "codex/0.171.0/model-list-builtin.stdout")
        a = self.agent()
        r = a.request("session/new", {"cwd": self.home.project, "mcpServers": []})
        sid = r["sessionId"]
        # answered at once with what baton knew
        self.assertEqual(values(model_option(r["configOptions"])), ["default", "model-a"])
        model = self.update(a, sid)
        self.assertEqual(model["currentValue"], "default")
        self.assertEqual(values(model), ["default", *CODEX_MODELS, "model-a"])
        self.assertEqual(model["options"][0]["name"], "the coder's default (GPT-6.2-Sol)")
        self.assertEqual(model["options"][3], {"value": "gpt-6.1-terra", "name": "GPT-6.1 Terra"})
        # a second session has them in its answer; codex was asked once
        r = a.request("session/new", {"cwd": self.home.project, "mcpServers": []})
        self.assertEqual(values(model_option(r["configOptions"])), values(model))
        r = a.request("session/set_config_option", {"sessionId": sid, "configId": "model",
                                                    "value": "gpt-5.5"})
        chosen = model_option(r["configOptions"])
        self.assertEqual(chosen["currentValue"], "gpt-5.5")
        self.assertEqual(values(chosen), values(model), "a listed model is not added again")
        self.assertEqual(self.listings('"model/list"'), 1)
        self.assertEqual(a.close(), 0)

    def test_pi_lists_its_models(self):
        self.replay(FIXTURES / "pi/1.6.0/model-list-anthropic.stdout")
        self.home.env["BATON_PI_BIN"] = servetest.FAKE
        a = self.agent("-c", "pi", "-m", "baton-standin/baton-test")
        sid = a.new_session()
        model = self.update(a, sid)
        self.assertEqual(model["currentValue"], "baton-standin/baton-test")
        got = values(model)
        self.assertEqual(got[0], "default")
        self.assertEqual(len(got), 20)  # the default and 19 listed, the session's among them
        self.assertEqual(got[4], "anthropic/claude-haiku-4-5")
        self.assertEqual(got[-1], "baton-standin/baton-test")
        self.assertEqual(model["options"][0]["name"],
                         "the coder's default (baton-standin: baton-test)")
        self.assertEqual(model["options"][1]["name"], "anthropic: Claude Fable 5")
        self.assertEqual(self.listings('"get_available_models"'), 1)

    def test_coder_changed_and_one_that_cannot_list(self):
        """A session switched to another coder gets that coder's list; one
        not installed leaves the select as it is and says why."""
        self.replay(FIXTURES / "pi/1.6.0/model-list.stdout")
        self.home.env["BATON_PI_BIN"] = servetest.FAKE
        self.home.env["BATON_CODEX_BIN"] = os.path.join(self.home.dir, "no-such-codex")
        a = self.agent()
        sid = a.new_session()
        r = a.request("session/set_config_option", {"sessionId": sid, "configId": "coder",
                                                    "value": "pi"})
        self.assertEqual(values(model_option(r["configOptions"])), ["default"])
        model = self.update(a, sid)
        self.assertEqual(values(model), ["default", "baton-standin/baton-test"])
        servetest.wait_for(lambda: "no-such-codex is not an executable file" in a.stderr(), 30,
                           "the listing's failure on stderr")
        self.assertIn("the model select offers the models used before", a.stderr())
        self.assertEqual(a.close(), 0)

    def test_listed_where_a_loaded_conversation_was(self):
        """A stored conversation whose directory is gone: loading it lists
        codex's models all the same (in baton's own directory), for it
        and the sessions after it."""
        gone = os.path.join(self.home.dir, "gone")
        os.mkdir(gone)
        self.home.baton("run", "-C", gone, PROMPT)
        os.rmdir(gone)
        (conv,) = self.home.ls()
        self.replay(FIXTURES / "codex/0.171.0/model-list-builtin.stdout")
        a = self.agent()
        a.request("session/load", {"sessionId": conv["id"], "cwd": self.home.project,
                                   "mcpServers": []}, updates=[])
        self.assertEqual(values(self.update(a, conv["id"]))[1:], CODEX_MODELS)
        r = a.request("session/new", {"cwd": self.home.project, "mcpServers": []})
        self.assertEqual(values(model_option(r["configOptions"]))[1:], CODEX_MODELS)

    def test_no_model_list(self):
        self.replay(FIXTURES / "codex/0.171.0/model-list.stdout")
        a = self.agent("--no-model-list")
        sid = a.new_session()
        # what a listing would answer in well under a second (above): given
        # time, nothing comes and no coder was started
        time.sleep(2)
        self.assertTrue(a.messages.empty(), "an update came")
        self.assertFalse(os.path.exists(self.log), "a coder was started")
        r = a.request("session/set_config_option", {"sessionId": sid, "configId": "model",
                                                    "value": "baton-test"})
        self.assertEqual(values(model_option(r["configOptions"])), ["default", "baton-test"])

    def test_stdin_closed_while_listing(self):
        """The agent ends at once: the listing is stopped, no coder is
        left."""
        self.replay(FIXTURES / "codex/0.171.0/model-list.stdout")
        self.home.env["FAKE_CODER_HANG_AFTER"] = "0"  # it never answers
        pidfile = os.path.join(self.home.dir, "grandchild.pid")
        self.home.env["FAKE_CODER_GRANDCHILD"] = "1"
        self.home.env["FAKE_CODER_PIDFILE"] = pidfile
        a = self.agent()
        a.new_session()
        servetest.wait_for(lambda: os.path.exists(pidfile) and Path(pidfile).read_text().strip(),
                           30, "the listing to start")
        t0 = time.monotonic()
        self.assertEqual(a.close(60), 0)
        self.assertLess(time.monotonic() - t0, 15, "not the listing's 20 s bound")
        pid = int(Path(pidfile).read_text())
        servetest.wait_for(lambda: not alive(pid), 10, "the listing's process group to go")


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:
        return f.read().split()[2] != "Z"


if __name__ == "__main__":
    acptest  # noqa: B018  (imported for its checks: skipped without the SDK)
    servetest.main()
