#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""serve-web-ask: the page's answers to a running turn under approval
"ask" (src/serve/web/conv-ask.js) in headless chromium over WebDriver, against
the real server and the fake coder as codex replaying
fixtures/codex/0.171.0/shell-approved.jsonl (codex asks to run a command,
request 0, and waits): the request is shown with its command and Allow /
Always / Deny, and Allow gets codex decision accept, shown accepted by
user; a file change's card shows its file and diff, and Deny gets
decline; a question (the same replay with item/tool/requestUserInput in
place of the approval) is shown with its choices and a text box, and
Answer sends the option chosen and the words typed. What baton wrote to
the coder is the fake's stdin log.

Skipped (exit 77) as serve-web is, without chromium, chromedriver or
python3-selenium.
"""
import os
import sys

import servetest
from servetest import wait_for

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_web import BrowserCase  # noqa: E402 (it skips without selenium or chromium)
from selenium.webdriver.common.by import By  # noqa: E402

FIXTURE = servetest.TOP / "fixtures/codex/0.171.0/shell-approved.jsonl"
QUESTION = ('{"id":0,"method":"item/tool/requestUserInput","params":{"threadId":'
            '"01a22760-2b05-77b0-a417-30527fa9d43e","turnId":"01a22760-2b46-7471-9b27-'
            'b0c3c20705d3","itemId":"call_q","isBlocking":true,"questions":[{"id":"color",'
            '"header":"Colour","question":"Which colour?","options":[{"label":"Red"},'
            '{"label":"Blue"}]},{"id":"name","header":"Name","question":"What name?",'
            '"options":null}]}}\n')


class WebAsk(BrowserCase):
    home_name = "web-ask"

    def restart(self, replay):
        """serve again with this replay and a stdin log of this test's own."""
        self.home.env["FAKE_CODER_REPLAY"] = str(replay)
        self.home.env["FAKE_CODER_LOG_STDIN"] = self.log
        type(self).serve.stop()
        type(self).serve = self.home.serve()
        type(self).client = type(self).serve.client()
        self.sign_in()

    @property
    def log(self):
        return os.path.join(self.home.dir, f"stdin-{self._testMethodName}.log")

    def coder_stdin(self):
        with open(self.log) as f:
            return f.read()

    def card(self):
        cards = self.q(".asks:not([hidden]) .ask")
        return cards[0] if cards else None

    def test_allow_a_command(self):
        self.restart(FIXTURE)
        self.assertIn("ask", [o.get_attribute("value") for o in self.q("#new-approval option")])
        conv, _ = self.create("run it", approval="ask", idle_timeout=60)
        self.open_conv(conv)
        card = self.until(self.card, "the request's card")
        self.assertIn("/bin/bash -lc 'echo baton-ok'", card.text)
        labels = [b.text for b in card.find_elements(By.TAG_NAME, "button")]
        self.assertEqual(labels, ["Allow", "Always", "Deny"])
        self.shot("ask-request")
        card.find_element(By.XPATH, ".//button[text()='Allow']").click()
        self.idle(conv)
        self.until(lambda: not self.card(), "the card to go")
        self.until(lambda: any("accepted by user" in e.text for e in self.q(".tool")),
                   "the request shown accepted by user")
        self.assertIn('{"id":0,"result":{"decision":"accept"}}', self.coder_stdin())

    def test_deny_a_file_change(self):
        """codex's file change approval: the card shows the file and its
        diff (from the tool call it names); Deny gets decision decline."""
        self.restart(servetest.TOP / "fixtures/codex/0.171.0/file-change-approved.jsonl")
        conv, _ = self.create("write it", approval="ask", idle_timeout=60)
        self.open_conv(conv)
        card = self.until(self.card, "the request's card")
        self.assertIn("The coder asks to: file_change", card.text)
        self.assertIn("--- /root/baton-fixtures/project/hello-approved.txt", card.text)
        self.assertIn("written by baton-standin", card.text)
        self.shot("ask-file-change")
        card.find_element(By.XPATH, ".//button[text()='Deny']").click()
        self.idle(conv)
        self.until(lambda: not self.card(), "the card to go")
        self.assertIn('{"id":0,"result":{"decision":"decline"}}', self.coder_stdin())

    def test_answer_a_question(self):
        path = os.path.join(self.home.dir, "question.jsonl")
        with open(FIXTURE) as src, open(path, "w") as out:
            for n, line in enumerate(src, 1):
                out.write(QUESTION if n == 12 else line)
        self.restart(path)
        conv, _ = self.create("ask me", approval="ask", idle_timeout=60)
        self.open_conv(conv)
        card = self.until(self.card, "the question's card")
        self.assertIn("Which colour?", card.text)
        self.assertIn("What name?", card.text)
        blue = card.find_element(By.CSS_SELECTOR, "input[type=radio][value=Blue]")
        blue.click()
        texts = card.find_elements(By.CSS_SELECTOR, "input.ask-text")
        texts[1].send_keys("Ada")
        self.shot("ask-question")
        card.find_element(By.XPATH, ".//button[text()='Answer']").click()
        self.idle(conv)
        wait_for(lambda: '"answers"' in self.coder_stdin(), 10, "the answers to reach codex")
        self.assertIn('{"id":0,"result":{"answers":{"color":{"answers":["Blue"]},'
                      '"name":{"answers":["Ada"]}}}}', self.coder_stdin())


if __name__ == "__main__":
    servetest.main()
