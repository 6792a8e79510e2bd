# SPDX-License-Identifier: MIT
"""httpc: a small HTTP/1.1 client over a raw socket, for the tests of
`baton serve`.

The standard library's clients normalise what these tests must send
verbatim (paths with `..`, `%2f` or NUL bytes, a foreign Host, half a
request), and http.client loses its place in a chunked body when a read
times out, which a test of an event stream does all the time. Here every
byte sent is the caller's, and the body decoder keeps what it has read
across timeouts, so a stream can be read with a deadline and read on.
"""
import json
import select
import socket
import time


class Closed(Exception):
    """The server closed the connection before a whole response head."""


class Response:
    """A response: status, reason, headers (a list of (lower-case name,
    value)), body (bytes, all of it for a non-streaming read)."""

    def __init__(self, status, reason, headers, body=b""):
        self.status = status
        self.reason = reason
        self.headers = headers
        self.body = body
        self._json = None

    def header(self, name):
        """The value of the first header called name, or None."""
        name = name.lower()
        for k, v in self.headers:
            if k == name:
                return v
        return None

    def header_all(self, name):
        name = name.lower()
        return [v for k, v in self.headers if k == name]

    def media_type(self):
        """The Content-Type without parameters, lower-case, or None."""
        ct = self.header("content-type")
        return ct.split(";")[0].strip().lower() if ct is not None else None

    def json(self):
        """The body as JSON; AssertionError (with the body) if it is not."""
        if self._json is None:
            try:
                self._json = json.loads(self.body.decode("utf-8"))
            except (UnicodeDecodeError, ValueError) as e:
                raise AssertionError(
                    f"{self.status} response body is not JSON ({e}): {self.body[:500]!r}")
        return self._json

    def __repr__(self):
        return f"<{self.status} {self.reason} {self.body[:300]!r}>"


class Conn:
    """One connection to 127.0.0.1:port. send() writes bytes as given;
    head() reads the status line and headers; body_some() and body_all()
    read the (de-chunked) body."""

    def __init__(self, port, timeout=15.0, host="127.0.0.1"):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.buf = b""  # read, not yet used
        self.eof = False
        self.chunked = False
        self.left = None  # bytes of body (Content-Length) or of the chunk left
        self.state = "head"  # head, size, data, crlf, trailer, done, close
        self.response = None

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def send(self, data):
        self.sock.sendall(data)

    def _fill(self, deadline):
        """Read more into buf; False at EOF. TimeoutError past deadline."""
        if self.eof:
            return False
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("no data from the server in time")
        self.sock.settimeout(left)
        try:
            data = self.sock.recv(65536)
        except socket.timeout:
            raise TimeoutError("no data from the server in time") from None
        except ConnectionResetError:
            data = b""
        if not data:
            self.eof = True
            return False
        self.buf += data
        return True

    def _line(self, deadline):
        """One CRLF-ended line of the head or of the chunk framing."""
        while b"\r\n" not in self.buf:
            if not self._fill(deadline):
                raise Closed(f"connection closed in a line: {self.buf[:200]!r}")
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def head(self, timeout=15.0, method="GET"):
        """Read the status line and headers; a Response without body."""
        deadline = time.monotonic() + timeout
        while b"\r\n\r\n" not in self.buf:
            if not self._fill(deadline):
                raise Closed(f"connection closed before a response: {self.buf[:200]!r}")
        status_line = self._line(deadline).decode("latin-1")
        parts = status_line.split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
            raise AssertionError(f"not an HTTP/1.x status line: {status_line!r}")
        headers = []
        while True:
            line = self._line(deadline).decode("latin-1")
            if not line:
                break
            name, _, value = line.partition(":")
            headers.append((name.strip().lower(), value.strip()))
        r = Response(int(parts[1]), parts[2] if len(parts) > 2 else "", headers)
        te = (r.header("transfer-encoding") or "").lower()
        cl = r.header("content-length")
        if method == "HEAD" or r.status in (204, 304) or 100 <= r.status < 200:
            self.state = "done"
        elif "chunked" in te:
            self.state = "size"
        elif cl is not None:
            self.left = int(cl)
            self.state = "data" if self.left else "done"
        else:
            self.state = "close"
        self.chunked = "chunked" in te
        self.response = r
        return r

    def body_some(self, timeout):
        """The next piece of body (bytes, maybe empty when only framing
        arrived), or None at its end. TimeoutError when nothing came."""
        deadline = time.monotonic() + timeout
        while True:
            if self.state == "done":
                return None
            if self.state == "close":
                if self.buf:
                    out, self.buf = self.buf, b""
                    return out
                if not self._fill(deadline):
                    self.state = "done"
                    return None
                continue
            if self.state == "size":
                line = self._line(deadline)
                size = int(line.split(b";")[0].strip() or b"x", 16)
                self.left = size
                self.state = "data" if size else "trailer"
                continue
            if self.state == "trailer":
                if not self._line(deadline):
                    self.state = "done"
                continue
            if self.state == "crlf":
                while len(self.buf) < 2:
                    if not self._fill(deadline):
                        raise Closed("connection closed in chunk framing")
                if self.buf[:2] != b"\r\n":
                    raise AssertionError(f"bad chunk end: {self.buf[:20]!r}")
                self.buf = self.buf[2:]
                self.state = "size"
                continue
            # data
            if not self.buf and not self._fill(deadline):
                raise Closed(f"connection closed with {self.left} body bytes to come")
            out = self.buf[: self.left]
            self.buf = self.buf[len(out):]
            self.left -= len(out)
            if self.left == 0:
                self.state = "crlf" if self.chunked else "done"
            return out

    def body_all(self, timeout=15.0):
        deadline = time.monotonic() + timeout
        parts = []
        while True:
            piece = self.body_some(max(0.001, deadline - time.monotonic()))
            if piece is None:
                return b"".join(parts)
            parts.append(piece)


def build(method, target, headers, body=None):
    """The bytes of a request: target and header values as given (str is
    encoded as latin-1 after UTF-8 bytes are kept: pass bytes for raw)."""
    def enc(x):
        return x if isinstance(x, bytes) else x.encode("utf-8")

    out = [enc(method), b" ", enc(target), b" HTTP/1.1\r\n"]
    for k, v in headers:
        out += [enc(k), b": ", enc(v), b"\r\n"]
    out.append(b"\r\n")
    if body:
        out.append(body)
    return b"".join(out)


def send_body_watching(conn, body, timeout=30.0):
    """Send body while watching for an early response (a server refusing
    a large body may answer before reading it): stops sending when the
    server has something to say or closed its side."""
    deadline = time.monotonic() + timeout
    view = memoryview(body)
    conn.sock.setblocking(False)
    try:
        while view:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("the server took no more of the body in time")
            r, w, _ = select.select([conn.sock], [conn.sock], [], left)
            if r:
                return False  # an answer (or EOF) is waiting: stop sending
            if w:
                try:
                    n = conn.sock.send(view[:65536])
                except (BlockingIOError, InterruptedError):
                    continue
                except (BrokenPipeError, ConnectionResetError):
                    return False
                view = view[n:]
        return True
    finally:
        conn.sock.setblocking(True)
