#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""serve-security: what `baton serve` refuses (docs/api.md,
"Authentication and origin checks", "Errors", "Limits").

The token on every /v1 route (none, wrong, as a cookie); the login
cookie; a foreign Host (421) and Origin (403), no CORS header ever; path
tricks that must not reach another route; bodies over 4 MiB (413, with a
length and chunked); malformed, mistyped, unknown, non-UTF-8 and empty
input (400) and other media types (415), with nothing stored (checked
with the CLI on the same home); --listen on a non-loopback address
without --allow-remote (exit 2); a port in use (exit 1); the token
file; clients that send half a request or never read do not hold up
others; more clients stuck in their headers than the connection limit
(the oldest let go, never a listen backlog), headers or a body sent
byte by byte (closed at the deadline), the connection limit of streams; an
escaped NUL in a query (400) and a target over 8192 bytes (414), both
JSON; SIGTERM and SIGINT.
"""
import os
import select
import signal
import socket
import stat
import time

import httpc
import servetest
from contract import no_cors
from servetest import Client, Home, ServeCase, wait_for

CONV = "/v1/conversations/{id}"
MiB = 1024 * 1024


class Security(ServeCase):
    home_name = "security"

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        r = cls.client.post("/v1/conversations", {"prompt": "the one conversation",
                                                  "cwd": cls.home.project})
        assert r.status == 201, r
        cls.conv = r.json()["conversation"]["id"]
        wait_for(lambda: cls.home.ls()[0]["last_run_state"] == "completed", 30,
                 "the first turn")

    def stored(self):
        """What the store holds, as the CLI prints it."""
        return self.home.ls(), self.home.show(self.conv)["messages"]

    def routes(self):
        c = self.conv
        return [("GET", "/v1/coders", "/v1/coders", None),
                ("GET", "/v1/conversations", "/v1/conversations", None),
                ("POST", "/v1/conversations", "/v1/conversations",
                 {"prompt": "sneaked in", "cwd": self.home.project}),
                ("GET", f"/v1/conversations/{c}", CONV, None),
                ("DELETE", f"/v1/conversations/{c}", CONV, None),
                ("POST", f"/v1/conversations/{c}/messages", CONV + "/messages",
                 {"prompt": "sneaked in"}),
                ("DELETE", f"/v1/conversations/{c}/queue/1", CONV + "/queue/{n}", None),
                ("POST", f"/v1/conversations/{c}/cancel", CONV + "/cancel", None),
                ("POST", f"/v1/conversations/{c}/retry", CONV + "/retry", None),
                ("POST", f"/v1/conversations/{c}/handoff", CONV + "/handoff", {"tmux": True}),
                ("GET", f"/v1/conversations/{c}/events", CONV + "/events", None),
                ("GET", "/v1/events", "/v1/events", None),
                ("POST", "/v1/login", "/v1/login", None)]  # all but GET /v1/openapi.json

    # --- the token ------------------------------------------------------

    def test_token_required(self):
        before = self.stored()
        t = self.serve.token
        other = ("0" if t[0] != "0" else "1") + t[1:]
        ways = {"none": {"token": None},
                "wrong": {"token": other},
                "upper case": {"token": t.upper()},
                "cut": {"token": t[:-1]},
                "longer": {"token": t + "0"},
                "empty": {"token": ""},
                "basic": {"token": None, "headers": [("Authorization", f"Basic {t}")]},
                "no scheme": {"token": None, "headers": [("Authorization", t)]},
                "wrong cookie": {"token": None, "headers": [("Cookie", f"baton_token={other}")]},
                "query": {"token": None, "query": f"?token={t}"}}
        for method, target, template, body in self.routes():
            for name, way in ways.items():
                with self.subTest(route=f"{method} {target}", way=name):
                    r = self.client.request(method, target + way.get("query", ""), body,
                                            token=way["token"], headers=way.get("headers"))
                    self.api.check_error(r, 401, "unauthorized", method, template)
        self.assertEqual(self.stored(), before)

    def test_token_required_however_spelled(self):
        """The router unescapes each segment, so /%76%31/coders is
        /v1/coders: every spelling of a route needs the token as the
        plain one does (a check on the raw path let these through)."""
        before = self.stored()
        spell = [lambda t: t.replace("/v1", "/%761", 1),
                 lambda t: t.replace("/v1", "/v%31", 1),
                 lambda t: t.replace("/v1", "/%76%31", 1),
                 lambda t: t.replace("/v1/", "/v1%2F", 1),
                 lambda t: t.replace("conversations", "c%6Fnversations", 1)]
        for method, target, template, body in self.routes():
            for way in spell:
                t = way(target)
                if t == target:
                    continue
                with self.subTest(target=t, method=method):
                    r = self.client.request(method, t, body, token=None)
                    self.api.check_error(r, 401, "unauthorized")
        self.assertEqual(self.stored(), before)
        # with the token the spelling names the route: the test above
        # asked for real resources, not for paths that name nothing
        self.api.check(self.client.get("/%76%31/coders"), "GET", "/v1/coders", 200)
        self.api.check(self.client.get("/%76%31/openapi.json", token=None), "GET",
                       "/v1/openapi.json", 200)

    def test_login_cookie(self):
        r = self.client.post("/v1/login")
        self.api.check(r, "POST", "/v1/login", 204)
        cookie = r.header("set-cookie")
        attrs = [a.strip() for a in cookie.split(";")]
        self.assertEqual(attrs[0], f"baton_token={self.serve.token}")
        self.assertEqual({a.lower() for a in attrs[1:]},
                         {"httponly", "samesite=strict", "path=/"})
        jar = [("Cookie", f"baton_token={self.serve.token}")]
        r = self.client.get("/v1/coders", token=None, headers=jar)
        self.api.check(r, "GET", "/v1/coders", 200)
        r = self.client.get("/v1/coders", token=None,
                            headers=[("Cookie", f"theme=dark; baton_token={self.serve.token}")])
        self.api.check(r, "GET", "/v1/coders", 200)
        s = self.client.stream("/v1/events", headers=jar, token=None)
        self.addCleanup(s.close)
        self.api.check(s.response, "GET", "/v1/events", 200)
        self.api.check_error(self.client.post("/v1/login", token=None), 401, "unauthorized",
                             "POST", "/v1/login")

    # --- Host and Origin ------------------------------------------------

    def test_foreign_host(self):
        port = self.serve.port
        for host in (f"evil.example:{port}", "evil.example", f"127.0.0.1:{port + 1}",
                     "127.0.0.1", f"127.0.0.1.evil.example:{port}", f"{port}",
                     f"127.0.0.1:{port}@evil.example"):
            with self.subTest(host=host):
                r = self.client.get("/v1/coders", host=host)
                self.api.check_error(r, 421, "misdirected", "GET", "/v1/coders")
                r = self.client.get("/", token=None, host=host)
                self.assertEqual(r.status, 421, r)
        for host in (None, ""):  # no Host at all, an empty one
            with self.subTest(host=host):
                r = self.client.get("/v1/coders", host=host)
                self.assertIn(r.status, (400, 421), r)
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"):
            with self.subTest(host=host):
                self.api.check(self.client.get("/v1/coders", host=host), "GET", "/v1/coders",
                               200)
        # ours first, then another: only the first was checked
        before = self.stored()
        for name, value in (("Host", f"evil.example:{port}"), ("Host", f"127.0.0.1:{port}"),
                            ("Origin", "http://evil.example")):
            with self.subTest(duplicate=f"{name}: {value}"):
                extra = [("Origin", f"http://127.0.0.1:{port}")] if name == "Origin" else []
                r = self.client.post("/v1/conversations",
                                     {"prompt": "twice", "cwd": self.home.project},
                                     headers=extra + [(name, value)])
                self.api.check_error(r, 400, "bad_request")
        self.assertEqual(self.stored(), before)

    def test_foreign_origin(self):
        port = self.serve.port
        before = self.stored()
        for origin in ("http://evil.example", f"http://evil.example:{port}", "null",
                       f"http://127.0.0.1:{port + 1}", f"https://127.0.0.1:{port}",
                       f"http://127.0.0.1:{port}.evil.example", "file://"):
            with self.subTest(origin=origin):
                for method, target, template, body in self.routes() + [
                        ("GET", "/v1/openapi.json", "/v1/openapi.json", None)]:
                    r = self.client.request(method, target, body,
                                            headers=[("Origin", origin)])
                    self.api.check_error(r, 403, "forbidden_origin", method, template)
                r = self.client.request("OPTIONS", "/v1/conversations", headers=[
                    ("Origin", origin), ("Access-Control-Request-Method", "POST"),
                    ("Access-Control-Request-Headers", "content-type")])
                self.api.check_error(r, 403, "forbidden_origin")
        self.assertEqual(self.stored(), before)
        for host, origin in ((f"127.0.0.1:{port}", f"http://127.0.0.1:{port}"),
                             (f"localhost:{port}", f"http://localhost:{port}")):
            with self.subTest(own=origin):
                r = self.client.get("/v1/coders", host=host, headers=[("Origin", origin)])
                self.api.check(r, "GET", "/v1/coders", 200)
        r = self.client.request("OPTIONS", "/v1/conversations", headers=[
            ("Access-Control-Request-Method", "POST")])
        self.assertGreaterEqual(r.status, 400, r)  # a preflight is never granted
        no_cors(r)

    # --- paths ------------------------------------------------------------

    def test_path_tricks(self):
        c = self.conv
        targets = [
            "/v1/conversations/../coders", "/v1/conversations/%2e%2e/coders",
            "/v1/conversations/%2E%2E/coders", "/v1/%2e%2e/v1/coders",
            "/v1/conversations/.%2e/coders", "/v1/./coders", "/v1/coders/.",
            "/v1/coders/", "//v1/coders", "/v1//coders", "/v1/coders%2f",
            "/v1%2fcoders", "/v1/conversations%2f" + c,
            f"/v1/conversations/{c}%2fevents", f"/v1/conversations/{c}/events%2f..",
            f"/v1/conversations/{c}/../../coders", f"/v1/conversations/{c}/.",
            f"/v1/conversations/{c}/queue/1%2f..%2f..",
            f"/v1/conversations/{c}%00", "/v1/conversations/%00",
            f"/v1/conversations/{c}%00/events", "/v1/coders%00",
            "/v1/conversations/" + c.upper(), "/v1/conversations/" + c[:-1],
            "/v1/conversations/" + c + "0", "/v1/conversations/" + "a" * 4096,
            "/v1/conversations/" + c[:21] + "%41", "/v1/conversations/%20" + c,
            f"/v1/conversations/{c};/events", "/v1/coders;x", "/v1/openapi.json/..",
        ]
        for t in targets:
            with self.subTest(target=t):
                self.api.check_error(self.client.get(t), 404, "not_found")
        # a raw NUL byte or a space inside the target: refused, never routed
        for t in (b"/v1/coders\x00", b"/v1/conversations/\x00/events", b"/v1/co ders",
                  b"/v1/conversations/" + c.encode() + b"\x00/../../coders"):
            with self.subTest(raw=t):
                req = httpc.build("GET", t, self.client.headers([], Client.AUTO, Client.AUTO,
                                                                None, None))
                r = self.client.raw(req)
                self.assertTrue(r is None or r.status in (400, 404), r)
        self.api.check(self.client.get("/v1/coders"), "GET", "/v1/coders", 200)
        self.assertIn(c, [x["id"] for x in self.home.ls()])

    # --- bodies -----------------------------------------------------------

    def big(self, target, body, chunked=False, ctype="application/json"):
        """POST a body that may be refused before it is all sent."""
        conn = httpc.Conn(self.serve.port, 30)
        try:
            hs = [("Host", self.client.host), ("Authorization", f"Bearer {self.serve.token}"),
                  ("Content-Type", ctype), ("Connection", "close")]
            if chunked:
                hs.append(("Transfer-Encoding", "chunked"))
                piece = 65536
                body = b"".join(b"%x\r\n%s\r\n" % (len(body[i:i + piece]), body[i:i + piece])
                                for i in range(0, len(body), piece)) + b"0\r\n\r\n"
            else:
                hs.append(("Content-Length", str(len(body))))
            conn.send(httpc.build("POST", target, hs))
            httpc.send_body_watching(conn, body)
            r = conn.head(30)
            r.body = conn.body_all(30)
            return r
        finally:
            conn.close()

    def test_body_too_large(self):
        before = self.stored()
        over = (b'{"prompt":"' + b"a" * (4 * MiB) + b'","cwd":"'
                + self.home.project.encode() + b'"}')
        for chunked in (False, True):
            with self.subTest(chunked=chunked):
                r = self.big("/v1/conversations", over, chunked)
                self.api.check_error(r, 413, "too_large", "POST", "/v1/conversations")
                r = self.big(f"/v1/conversations/{self.conv}/messages",
                             b'{"prompt":"' + b"a" * (4 * MiB + 1) + b'"}', chunked)
                self.api.check_error(r, 413, "too_large", "POST", CONV + "/messages")
        # just over 4 MiB of any bytes, not only of a prompt
        r = self.big("/v1/conversations", b" " * (4 * MiB + 1))
        self.api.check_error(r, 413, "too_large", "POST", "/v1/conversations")
        self.assertEqual(self.stored(), before)
        self.api.check(self.client.get("/v1/coders"), "GET", "/v1/coders", 200)
        # 4 MiB exactly is not over the limit
        head, tail = b'{"prompt":"', b'","cwd":"' + self.home.project.encode() + b'"}'
        exact = head + b"b" * (4 * MiB - len(head) - len(tail)) + tail
        self.assertEqual(len(exact), 4 * MiB)
        r = self.big("/v1/conversations", exact)
        doc = self.api.check(r, "POST", "/v1/conversations", 201)
        conv = doc["conversation"]["id"]
        d = self.idle(conv)
        self.assertEqual(len(d["messages"][0]["text"]), 4 * MiB - len(head) - len(tail))
        self.api.check(self.client.delete(f"/v1/conversations/{conv}"), "DELETE", CONV, 200)

    def test_bad_bodies(self):
        before = self.stored()
        p = self.home.project
        create = [
            b'{"prompt":', b"", b"[]", b'"prompt"', b"null", b"42",
            b'{"prompt":"x","cwd":"' + p.encode() + b'"} trailing',
            b'{"prompt":"x","cwd":"' + p.encode() + b'",}',
            b"[" * 100000 + b"]" * 100000,
            b'{"prompt":"\xff\xfe","cwd":"' + p.encode() + b'"}',
            b'{"prompt":"caf\xc3","cwd":"' + p.encode() + b'"}',
            b'{"prompt":"\\ud800","cwd":"' + p.encode() + b'"}',
            b'{"prompt":"\\udc00x","cwd":"' + p.encode() + b'"}',
            {"prompt": "", "cwd": p}, {"prompt": " \n\t ", "cwd": p},
            {"prompt": "a\u0000b", "cwd": p}, {"prompt": 5, "cwd": p}, {"prompt": None, "cwd": p},
            {"prompt": ["x"], "cwd": p}, {"prompt": {"text": "x"}, "cwd": p},
            {"cwd": p}, {"prompt": "no cwd"}, {"prompt": "x", "cwd": 5},
            {"prompt": "x", "cwd": "project"}, {"prompt": "x", "cwd": "/no/such/dir"},
            {"prompt": "x", "cwd": os.path.join(self.home.dir, "go")},  # a file
            {"prompt": "x", "cwd": ""}, {"prompt": "x", "cwd": p, "approval": "maybe"},
            {"prompt": "x", "cwd": p, "approval": 1}, {"prompt": "x", "cwd": p, "approval": None},
            {"prompt": "x", "cwd": p, "timeout": "10"}, {"prompt": "x", "cwd": p, "timeout": -1},
            {"prompt": "x", "cwd": p, "idle_timeout": True},
            {"prompt": "x", "cwd": p, "idle_timeout": -0.5},
            {"prompt": "x", "cwd": p, "coder": 7}, {"prompt": "x", "cwd": p, "coder": ""},
            {"prompt": "x", "cwd": p, "model": 5}, {"prompt": "x", "cwd": p, "model": ""},
            {"prompt": "x", "cwd": p, "model": "-c"}, {"prompt": "x", "cwd": p, "model": "a\nb"},
            {"prompt": "x", "cwd": p, "model": "m" * 257},
            {"prompt": "x", "cwd": p, "colour": "red"},
            {"prompt": "x", "cwd": p, "force": True},  # a field of messages, not here
        ]
        for body in create:
            with self.subTest(create=repr(body)[:80]):
                self.error("POST", "/v1/conversations", "/v1/conversations", 400,
                           "bad_request", body)
        messages = [
            b'{"prompt":', b"{}", b'{"prompt":"\xff"}', b'{"prompt":"\\ud83d"}',
            {"prompt": ""}, {"prompt": "\n \n"}, {"prompt": "x\u0000"}, {"prompt": 5},
            {"prompt": "x", "force": "yes"},
            {"prompt": "x", "force": 1}, {"prompt": "x", "extra": 1},
            {"prompt": "x", "approval": "always"}, {"prompt": "x", "timeout": []},
            {"prompt": "x", "cwd": p},  # create's field, not a message's
        ]
        for body in messages:
            with self.subTest(message=repr(body)[:80]):
                self.error("POST", f"/v1/conversations/{self.conv}/messages",
                           CONV + "/messages", 400, "bad_request", body)
        # the requests without fields refuse a body that has any (they did
        # what they were asked, whatever came with it)
        c = self.conv
        fieldless = [("POST", f"/v1/conversations/{c}/cancel", CONV + "/cancel"),
                     ("DELETE", f"/v1/conversations/{c}/queue/1", CONV + "/queue/{n}"),
                     ("DELETE", f"/v1/conversations/{c}", CONV),
                     ("POST", "/v1/login", "/v1/login")]
        for method, target, template in fieldless:
            for body in (b"{not json", b"[]", {"unknown_field": 1}, {"force": True}):
                with self.subTest(fieldless=f"{method} {target}", body=repr(body)[:40]):
                    self.error(method, target, template, 400, "bad_request", body)
        for body in (b"{", {"timeout": -1}, {"approval": "maybe"}, {"prompt": "x"}):
            with self.subTest(retry=repr(body)[:40]):
                self.error("POST", f"/v1/conversations/{c}/retry", CONV + "/retry", 400,
                           "bad_request", body)
        self.assertEqual(self.stored(), before)

    def test_media_types(self):
        before = self.stored()
        p = self.home.project
        body = {"prompt": "typed wrong", "cwd": p}
        for ctype in ("text/plain", "application/x-www-form-urlencoded",
                      "multipart/form-data; boundary=x", "application/jsonx",
                      "text/json", "application/json-seq", None):
            with self.subTest(ctype=ctype):
                self.error("POST", "/v1/conversations", "/v1/conversations", 415,
                           "unsupported_media_type", body, ctype=ctype)
                self.error("POST", f"/v1/conversations/{self.conv}/messages",
                           CONV + "/messages", 415, "unsupported_media_type",
                           {"prompt": "typed wrong"}, ctype=ctype)
                self.error("POST", f"/v1/conversations/{self.conv}/handoff",
                           CONV + "/handoff", 415, "unsupported_media_type",
                           {"tmux": True}, ctype=ctype)
        self.assertEqual(self.stored(), before)  # nothing sent, nothing handed off
        r, doc = self.call("POST", "/v1/conversations", "/v1/conversations", 201,
                           {"prompt": "typed right", "cwd": p},
                           ctype="application/json; charset=utf-8")
        self.idle(doc["conversation"]["id"])

    def test_html_never_passes_raw_html(self):
        conv, _ = self.create('<img src=x onerror="alert(1)"> <a href="javascript:alert(1)">'
                              'x</a> [y](javascript:alert(2))')
        self.idle(conv)
        html = self.detail(conv, "?html=1")["messages"][0]["html"]
        self.assertNotIn("<img", html)
        self.assertNotIn("<a href=\"javascript:", html)
        self.assertNotIn("href=\"javascript:alert(2)", html)

    # --- clients that hold a connection -----------------------------------

    def test_slow_clients_do_not_block(self):
        held = []
        try:
            for i in range(12):
                sock = socket.create_connection(("127.0.0.1", self.serve.port), timeout=5)
                held.append(sock)
                if i % 3 == 0:
                    sock.sendall(b"GET /v1/coders HTTP/1.1\r\nHost: ")
                elif i % 3 == 1:
                    sock.sendall(httpc.build("POST", f"/v1/conversations/{self.conv}/messages",
                                             [("Host", self.client.host),
                                              ("Authorization", f"Bearer {self.serve.token}"),
                                              ("Content-Type", "application/json"),
                                              ("Content-Length", "100")], b'{"prompt":'))
            unread = self.client.stream("/v1/events")  # opened, never read
            self.addCleanup(unread.close)
            for _ in range(5):
                t0 = time.monotonic()
                self.api.check(self.client.get("/v1/coders", timeout=5), "GET", "/v1/coders",
                               200)
                self.assertLess(time.monotonic() - t0, 2.0)
            for i in range(3):  # events flow past the stream that does not read
                conv, _ = self.create(f"busy {i}")
                self.idle(conv)
            t0 = time.monotonic()
            self.api.check(self.client.get("/v1/conversations", timeout=5), "GET",
                           "/v1/conversations", 200)
            self.assertLess(time.monotonic() - t0, 2.0)
        finally:
            for sock in held:
                sock.close()

    def test_slow_clients_over_the_limit(self):
        """More clients that never finish their headers than the 256
        connections serve holds (and the 16 spare): later requests are not
        left in the listen backlog; each new one takes the slot of the
        client that has waited longest for its headers (docs/api.md,
        "Limits")."""
        held = []
        try:
            for _ in range(300):
                sock = socket.create_connection(("127.0.0.1", self.serve.port), timeout=10)
                sock.sendall(b"GET /v1/coders HTTP/1.1\r\n")
                held.append(sock)
            for _ in range(3):
                self.api.check(self.client.get("/v1/coders", timeout=20), "GET", "/v1/coders",
                               200)
            # the oldest were let go: each reads its end (nothing was answered)
            for sock in held[:300 - 256]:
                sock.settimeout(20)
                try:
                    self.assertEqual(sock.recv(4096), b"")
                except ConnectionResetError:
                    pass
        finally:
            for sock in held:
                sock.close()

    def test_headers_byte_by_byte_closed(self):
        """A client that sends its headers a byte a second keeps no slot:
        the connection is closed once its 15 s for headers are over, long
        before the 60 s idle timeout could (it is never idle)."""
        sock = socket.create_connection(("127.0.0.1", self.serve.port), timeout=5)
        self.addCleanup(sock.close)
        sock.sendall(b"GET /v1/coders HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        sent, closed = 0, False
        for _ in range(90):  # a bound for "does not hang", not a timing
            ready, _, _ = select.select([sock], [], [], 1.0)
            if ready:
                try:
                    got = sock.recv(4096)
                except ConnectionResetError:
                    got = b""
                self.assertEqual(got, b"", "an answer to headers never finished")
                closed = True
                break
            try:
                sock.sendall(b"a")
            except (BrokenPipeError, ConnectionResetError):
                closed = True
                break
            sent += 1
        self.assertTrue(closed, "a client trickling its headers was kept 90 s")
        self.assertGreater(sent, 5, "closed before it trickled: not the header deadline")
        self.api.check(self.client.get("/v1/coders"), "GET", "/v1/coders", 200)

    def test_body_byte_by_byte_closed(self):
        """The same for a body sent a byte a second, with no token, to the
        open page route: its headers are in, but its slot is not kept
        past the 15 s either (256 of them locked every client out with
        503s)."""
        port = self.serve.port
        sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.addCleanup(sock.close)
        sock.sendall(b"POST / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: "
                     b"application/json\r\nContent-Length: 100000\r\n\r\n{" % port)
        sent, closed = 0, False
        for _ in range(90):  # a bound for "does not hang", not a timing
            ready, _, _ = select.select([sock], [], [], 1.0)
            if ready:
                try:
                    got = sock.recv(4096)
                except ConnectionResetError:
                    got = b""
                self.assertEqual(got, b"", "an answer to a body never finished")
                closed = True
                break
            try:
                sock.sendall(b" ")
            except (BrokenPipeError, ConnectionResetError):
                closed = True
                break
            sent += 1
        self.assertTrue(closed, "a client trickling its body was kept 90 s")
        self.assertGreater(sent, 5, "closed before it trickled: not the deadline")
        self.api.check(self.client.get("/v1/coders"), "GET", "/v1/coders", 200)

    def test_open_routes_keep_no_body(self):
        """Bodies sent without a token to the routes that need none (the
        page, /v1/openapi.json) are read and dropped, never kept: 40 of
        4 MiB, all but their last byte, held 160 MiB in the server (272
        of them over 1 GiB). What such a request is answered stays."""
        port = self.serve.port
        body = b" " * (4 * MiB - 10)
        held = []

        def rss_kib():
            with open(f"/proc/{self.serve.proc.pid}/status") as f:
                return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))

        before = rss_kib()  # what the server holds already (under memcheck: a lot)
        try:
            for _ in range(40):
                sock = socket.create_connection(("127.0.0.1", port), timeout=10)
                held.append(sock)
                sock.sendall(b"POST / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: "
                             b"application/json\r\nContent-Length: %d\r\n\r\n"
                             % (port, len(body) + 1) + body)
            time.sleep(1)
            grown = rss_kib() - before
            self.assertLess(grown, 48 * 1024, "bodies to routes without a token were kept")
        finally:
            for sock in held:
                sock.close()
        for ct, status, kind in (("application/json", 405, "method_not_allowed"),
                                 ("text/plain", 415, "unsupported_media_type")):
            with self.subTest(content_type=ct):
                sock = socket.create_connection(("127.0.0.1", port), timeout=10)
                self.addCleanup(sock.close)
                sock.sendall(b"POST / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: %s\r\n"
                             b"Content-Length: 2\r\nConnection: close\r\n\r\n{}"
                             % (port, ct.encode()))
                got = b""
                while True:
                    b = sock.recv(65536)
                    if not b:
                        break
                    got += b
                self.assertTrue(got.startswith(b"HTTP/1.1 %d " % status), got[:80])
                self.assertIn(b'"kind":"%s"' % kind.encode(), got)

    def test_query_nul(self):
        """An escaped NUL in a query parameter is a 400, as in bodies:
        libmicrohttpd would hand the parameter on cut at the NUL."""
        c = self.conv
        before = self.stored()
        for t in ("/v1/conversations?q=a%00b", "/v1/conversations?limit=1%00",
                  "/v1/coders?x=%00", f"/v1/conversations/{c}/events?after=%00",
                  f"/v1/conversations/{c}?x=1&y=%00", "/v1/openapi.json?x=%00"):
            with self.subTest(target=t):
                self.api.check_error(self.client.get(t), 400, "bad_request")
        r = self.client.post(f"/v1/conversations/{c}/cancel?x=%00", None)
        self.api.check_error(r, 400, "bad_request")
        self.assertEqual(self.stored(), before)

    def test_uri_too_long(self):
        """A request target over 8192 bytes is a 414 with the JSON error
        object, as every other error."""
        for t in ("/v1/conversations?q=" + "a" * 9000, "/v1/conversations/" + "a" * 9000,
                  "/v1/coders?" + "x=" * 10000, "/v1/coders?" + "x=1&" * 500 + "y" * 8000):
            with self.subTest(length=len(t)):
                self.api.check_error(self.client.get(t), 414, "uri_too_long")
        r = self.client.get("/v1/conversations?q=" + "a" * 9000)
        self.api.check_error(r, 414, "uri_too_long", "GET", "/v1/conversations")
        self.api.check(self.client.get("/v1/conversations?q=" + "a" * 8000), "GET",
                       "/v1/conversations", 200)


class Slots(ServeCase):
    """The slots of event streams whose clients went away come free when
    they are needed, not at the next ping (none comes in this test)."""

    home_name = "slots"
    serve_args = ("--ping", "30")  # the longest: none comes within the wait below

    def test_closed_streams_free_their_slots(self):
        streams = []
        try:
            for _ in range(256):
                s = self.client.stream("/v1/events", timeout=10)
                streams.append(s)
                self.api.check(s.response, "GET", "/v1/events", 200)
            r = self.client.get("/v1/coders", timeout=10)
            self.api.check_error(r, 503, "unavailable", "GET", "/v1/coders")
        finally:
            for s in streams:
                s.close()
        # a stream waits unpolled: only a write finds its client gone
        # within 20 s, before the first ping (30 s after the start), which
        # freed them too
        wait_for(lambda: self.client.get("/v1/coders", timeout=10).status == 200, 20,
                 "serve to answer again once the streams' clients went away")


class Idle(ServeCase):
    """Half a body is let go of at the 15 s a request's headers and body
    take (before, it held its slot until the 60 s idle timeout); a stream
    with pings is never idle, past the 60 s too."""

    home_name = "idle"
    serve_args = ("--ping", "25")

    def test_idle_connections_closed_streams_kept(self):
        half = socket.create_connection(("127.0.0.1", self.serve.port), timeout=5)
        self.addCleanup(half.close)
        half.sendall(httpc.build("POST", "/v1/login",
                                 [("Host", self.client.host),
                                  ("Authorization", f"Bearer {self.serve.token}"),
                                  ("Content-Type", "application/json"),
                                  ("Content-Length", "100")], b'{"x":'))
        s = self.client.stream("/v1/events")
        self.addCleanup(s.close)
        self.api.check(s.response, "GET", "/v1/events", 200)
        t0 = time.monotonic()
        half.settimeout(80)
        try:
            got = half.recv(4096)  # a 408, or nothing: then the close
            while got:
                got = half.recv(4096)
        except ConnectionResetError:
            pass
        except socket.timeout:
            self.fail("a connection with half a request was kept for 80 s")
        took = time.monotonic() - t0
        self.assertGreater(took, 12, "closed long before the 15 s")
        self.assertLess(took, 50, "half a body kept until the idle timeout")
        time.sleep(max(0.0, t0 + 62 - time.monotonic()))  # past the idle timeout
        pings = 0
        while True:  # what the stream got meanwhile, and it is still open
            try:
                b = s.next_block(0.2)
            except TimeoutError:
                break
            self.assertIsNotNone(b, "the stream with pings was closed as idle")
            pings += b.is_ping()
        self.assertGreaterEqual(pings, 2)
        self.api.check(self.client.get("/v1/coders"), "GET", "/v1/coders", 200)


class Listen(ServeCase):
    """The command line of serve, each case with serves of its own."""

    home_name = "listen"

    def test_remote_refused_without_allow_remote(self):
        for listen in ("0.0.0.0:0", "[::]:0", "192.0.2.1:0"):
            with self.subTest(listen=listen):
                p = self.home.baton("serve", "--listen", listen, check=False, timeout=10)
                self.assertEqual(p.returncode, 2, p)
                self.assertIn(b"--allow-remote", p.stderr)
                self.assertEqual(p.stdout, b"")
        for listen in ("nonsense", "127.0.0.1:99999", "127.0.0.1:-1", "127.0.0.1:x"):
            with self.subTest(listen=listen):
                p = self.home.baton("serve", "--listen", listen, check=False, timeout=10)
                self.assertEqual(p.returncode, 2, p)
                self.assertEqual(p.stdout, b"")

    def test_port_in_use(self):
        # a second server on the port of a running one fails: it never
        # shares the port (the kernel would split connections between them)
        first = self.home.serve()
        listen = f"127.0.0.1:{first.port}"
        p = self.home.baton("serve", "--listen", listen, check=False, timeout=10)
        self.assertEqual(p.returncode, 1, p)
        self.assertEqual(p.stdout, b"", "no address printed")
        # said once, by baton, naming the address asked for
        self.assertEqual(
            p.stderr, f"baton: cannot listen on {listen}: Address already in use\n".encode())
        self.api.check(first.client().get("/v1/coders"), "GET", "/v1/coders", 200)
        # once it stops, the port is free again at once (SO_REUSEADDR)
        first.stop()
        again = self.home.serve("--listen", listen)
        self.assertEqual(again.port, first.port)
        self.api.check(again.client().get("/v1/coders"), "GET", "/v1/coders", 200)
        again.stop()

    def test_token_file(self):
        path = os.path.join(self.home.home, "serve.token")
        st = os.stat(path)
        self.assertEqual(stat.S_IMODE(st.st_mode), 0o600)
        self.assertTrue(stat.S_ISREG(st.st_mode))
        with open(path, encoding="ascii") as f:
            self.assertEqual(f.read().strip(), self.serve.token)
        self.assertIn(path, self.serve.stderr())
        self.assertEqual(stat.S_IMODE(os.stat(self.home.home).st_mode), 0o700)
        second = self.home.serve()
        self.assertEqual(second.token, self.serve.token)
        self.assertNotEqual(second.port, self.serve.port)
        self.api.check(second.client().get("/v1/coders"), "GET", "/v1/coders", 200)
        second.stop()
        other = Home("listen-other")
        try:
            s = other.serve()
            self.assertNotEqual(s.token, self.serve.token)
        finally:
            other.cleanup()

    def test_token_file_others_can_read_refused(self):
        other = Home("listen-mode")
        try:
            os.makedirs(other.home, mode=0o700)
            path = os.path.join(other.home, "serve.token")
            with open(path, "w") as f:
                f.write("ab" * 32 + "\n")
            for mode in (0o644, 0o640, 0o604):
                with self.subTest(mode=oct(mode)):
                    os.chmod(path, mode)
                    p = other.baton("serve", "--listen", "127.0.0.1:0", check=False, timeout=10)
                    self.assertEqual(p.returncode, 1, p)
                    self.assertIn(path.encode(), p.stderr)
                    self.assertEqual(p.stdout, b"", "no token printed from a file others read")
            os.chmod(path, 0o600)
            s = other.serve()
            self.assertEqual(s.token, "ab" * 32)
        finally:
            other.cleanup()

    def test_stops_on_sigterm_and_sigint(self):
        for sig in (signal.SIGTERM, signal.SIGINT):
            with self.subTest(signal=sig.name):
                s = self.home.serve()
                self.api.check(s.client().get("/v1/coders"), "GET", "/v1/coders", 200)
                t0 = time.monotonic()
                code = s.stop(sig, timeout=5)
                self.assertLess(time.monotonic() - t0, 5)
                self.assertGreaterEqual(code, 0, f"serve died of {sig.name} unhandled")
                with self.assertRaises(OSError):
                    socket.create_connection(("127.0.0.1", s.port), timeout=2).close()


if __name__ == "__main__":
    servetest.main()
