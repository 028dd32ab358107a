"""The HTTP server behind `sparktui export`: one asyncio loop in one thread, serving bytes
rendered elsewhere.

Why not prometheus_client's ``start_http_server``: it listens with a backlog of 5 (1.5 % of 200
concurrent scrapes timed out), starts a thread per connection without limit, renders the metrics
inside the request (a scrape waits on whatever the collectors wait on) and answers the metrics on
any path. Here the text is rendered off the request path and handed over with ``publish`` (one
reference swapped whole: a scrape sends either the old text or the new, never a mix). One event
loop holds every connection, so a stalled or slow client costs a file descriptor and a small
buffer, never a thread; each request head must arrive within ``head_timeout_s`` and each answer
be taken within ``send_timeout_s``; at most ``max_connections`` are open (more get 503).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import gzip
import os
import threading
from dataclasses import dataclass

BACKLOG = 1024  # the kernel caps it at net.core.somaxconn (4096 on current kernels)
MAX_HEAD_BYTES = 8192  # request line + headers; more is 431
HEAD_TIMEOUT_S = 10.0  # to send a whole request head (also how long an idle keep-alive stays open)
SEND_TIMEOUT_S = 10.0  # to take an answer
MAX_CONNECTIONS = 512  # well under the usual 1024 open files
LINGER_S = 1.0  # after the last answer: how long what the client still sends is read before closing
LINGER_BYTES = 64 * 1024  # ... and how much of it
INDEX = b'<html><body><a href="/metrics">/metrics</a> (sparktui export)</body></html>\n'
_REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed",
            431: "Request Header Fields Too Large", 503: "Service Unavailable"}


@dataclass(frozen=True)
class Page:
    """The rendered metrics, plain and gzipped (Prometheus asks for gzip)."""
    body: bytes
    gzipped: bytes


@dataclass(frozen=True)
class Answer:
    status: int
    body: bytes = b""
    content_type: str = "text/plain; charset=utf-8"
    extra: tuple[tuple[str, str], ...] = ()
    keep_alive: bool = False
    send_body: bool = True  # False for HEAD: the headers of GET, no body


class MetricsServer:
    """Serves the last ``publish``-ed page at /metrics, a short index at /, 404 elsewhere."""

    def __init__(self, content_type: str, *, head_timeout_s: float = HEAD_TIMEOUT_S,
                 send_timeout_s: float = SEND_TIMEOUT_S, max_connections: int = MAX_CONNECTIONS) -> None:
        self.content_type = content_type
        self.head_timeout_s, self.send_timeout_s = head_timeout_s, send_timeout_s
        self.max_connections = max_connections
        self.open_connections = 0
        self._page = Page(b"", gzip.compress(b""))
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    def publish(self, text: bytes) -> None:
        """Make ``text`` what scrapes get from now on (any thread)."""
        self._page = Page(text, gzip.compress(text, compresslevel=1))

    # -- lifecycle -----------------------------------------------------------------------------
    def start(self, host: str, port: int) -> tuple[str, int]:
        """Listen and serve in a daemon thread; returns the bound (host, port). Raises OSError
        when the address cannot be bound."""
        ready: concurrent.futures.Future = concurrent.futures.Future()
        self._thread = threading.Thread(target=self._run, args=(host, port, ready), name="sparktui-export-http",
                                        daemon=True)
        self._thread.start()
        return ready.result()

    def stop(self, timeout: float = 5.0) -> None:
        loop, self._loop = self._loop, None
        if loop is not None:
            loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def _run(self, host: str, port: int, ready: concurrent.futures.Future) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)  # this thread's own loop
        try:
            server = loop.run_until_complete(asyncio.start_server(self._connection, host, port, backlog=BACKLOG,
                                                                  limit=MAX_HEAD_BYTES))
        except OSError as e:  # asyncio words it "error while attempting to bind on address (...)": the plain reason
            loop.close()
            ready.set_exception(OSError(e.errno, os.strerror(e.errno)) if e.errno else e)
            return
        self._loop = loop
        bound = server.sockets[0].getsockname()
        ready.set_result((str(bound[0]), int(bound[1])))
        try:
            loop.run_forever()
        finally:
            server.close()
            tasks = asyncio.all_tasks(loop)
            for t in tasks:
                t.cancel()
            loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
            loop.close()

    # -- one connection ------------------------------------------------------------------------
    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.open_connections += 1
        writer.transport.set_write_buffer_limits(high=0)  # drain() returns once all is handed to the kernel
        try:
            if self.open_connections > self.max_connections:
                await self._send(writer, Answer(503, b"too many connections\n"))
                return
            while True:
                try:
                    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), self.head_timeout_s)
                except (asyncio.LimitOverrunError, ValueError):
                    await self._send(writer, Answer(431, b"request head over %d bytes\n" % MAX_HEAD_BYTES))
                    return
                except (asyncio.IncompleteReadError, asyncio.TimeoutError, OSError):
                    return  # gone, stalled or idle too long: drop it
                answer = self.answer(head)
                if not await self._send(writer, answer) or not answer.keep_alive:
                    return
        finally:
            self.open_connections -= 1
            if writer.transport.get_write_buffer_size():
                writer.transport.abort()  # a reader too slow to take its answer: dropped, never waited on
            else:
                await self._linger(reader, writer)
                writer.close()

    @staticmethod
    async def _linger(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Half-close, then read what the client still sends (a request not read: the 503 of a
        connection over the limit is sent before it; a body) until it closes, at most LINGER_S and
        LINGER_BYTES. Closing a socket with unread data makes the kernel send a reset, and a client
        that has not read its answer yet gets "connection reset" instead of it (seen on a 16-CPU
        machine: the 503 was lost every time)."""
        loop = asyncio.get_running_loop()
        deadline, got = loop.time() + LINGER_S, 0
        try:
            if writer.can_write_eof():
                writer.write_eof()
            while got < LINGER_BYTES and (left := deadline - loop.time()) > 0:
                chunk = await asyncio.wait_for(reader.read(LINGER_BYTES), left)
                if not chunk:
                    return
                got += len(chunk)
        except (asyncio.TimeoutError, OSError, RuntimeError):
            return

    async def _send(self, writer: asyncio.StreamWriter, a: Answer) -> bool:
        lines = [f"HTTP/1.1 {a.status} {_REASONS[a.status]}", f"Content-Type: {a.content_type}",
                 f"Content-Length: {len(a.body)}", *(f"{k}: {v}" for k, v in a.extra)]
        if not a.keep_alive:
            lines.append("Connection: close")
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + (a.body if a.send_body else b""))
        try:
            await asyncio.wait_for(writer.drain(), self.send_timeout_s)
        except (asyncio.TimeoutError, OSError):
            return False
        return True

    def answer(self, head: bytes) -> Answer:
        """The answer to one request head (request line and headers, ending in a blank line)."""
        request_line, *header_lines = head.split(b"\r\n")
        parts = request_line.split()
        if len(parts) != 3 or parts[2] not in (b"HTTP/1.0", b"HTTP/1.1"):
            return Answer(400, b"bad request line\n")
        method, target, version = parts
        headers: dict[bytes, bytes] = {}
        for line in header_lines:
            if line:
                name, sep, value = line.partition(b":")
                if not sep or not name.strip():
                    return Answer(400, b"bad header line\n")
                headers[name.strip().lower()] = value.strip().lower()
        has_body = headers.get(b"content-length", b"0") != b"0" or b"transfer-encoding" in headers
        wants_close = (b"close" in headers.get(b"connection", b"") if version == b"HTTP/1.1"
                       else b"keep-alive" not in headers.get(b"connection", b""))
        keep = not (has_body or wants_close)  # a body is never read: answer, then close
        if method not in (b"GET", b"HEAD"):
            return Answer(405, b"only GET and HEAD\n", extra=(("Allow", "GET, HEAD"),), keep_alive=keep)
        path = target.split(b"?", 1)[0]
        head_only = method == b"HEAD"
        if path == b"/metrics":
            page = self._page
            if b"gzip" in headers.get(b"accept-encoding", b""):
                return Answer(200, page.gzipped, self.content_type, (("Content-Encoding", "gzip"),), keep, not head_only)
            return Answer(200, page.body, self.content_type, (), keep, not head_only)
        if path == b"/":
            return Answer(200, INDEX, "text/html; charset=utf-8", (), keep, not head_only)
        return Answer(404, b"not found: the metrics are at /metrics\n", keep_alive=keep, send_body=not head_only)
