"""A real HTTP server on 127.0.0.1 that answers like GitHub's issues API (for G8 tests and benchmark).

Not a mocked transport: the client under test opens real sockets. ``LocalServer(app)`` runs
``app(request) -> Reply`` in a ThreadingHTTPServer thread and records every request it saw (GETs
and POSTs with their bodies: the notification tests' webhook receiver is one too).
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterable
from urllib.parse import parse_qs, urlsplit


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]  # lower-cased names
    body: bytes = b""  # a POST's
    target: str = ""  # the path and query as sent
    t: float = field(default_factory=time.monotonic)  # when it came


@dataclass
class Reply:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | Iterable[bytes] = b""  # an iterable is streamed without Content-Length
    delay_s: float = 0.0


class LocalServer:
    def __init__(self, app: Callable[[Request], Reply]) -> None:
        self.app = app
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        self.stopping = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:
                self._answer("GET")

            def do_POST(self) -> None:
                self._answer("POST")

            def _answer(self, method: str) -> None:
                parts = urlsplit(self.path)
                n = int(self.headers.get("Content-Length") or 0)
                req = Request(method, parts.path, {k: v[-1] for k, v in parse_qs(parts.query).items()},
                              {k.lower(): v for k, v in self.headers.items()}, self.rfile.read(n) if n else b"",
                              self.path)
                with server._lock:
                    server.requests.append(req)
                reply = server.app(req)
                if reply.delay_s and server.stopping.wait(reply.delay_s):
                    return
                try:
                    self.send_response(reply.status)
                    for k, v in reply.headers.items():
                        self.send_header(k, v)
                    if isinstance(reply.body, (bytes, bytearray)):
                        if "Content-Length" not in reply.headers and reply.status not in (204, 304):
                            self.send_header("Content-Length", str(len(reply.body)))
                        self.end_headers()
                        self.wfile.write(reply.body)
                    else:
                        self.send_header("Connection", "close")
                        self.close_connection = True
                        self.end_headers()
                        for chunk in reply.body:
                            if server.stopping.is_set():
                                break
                            self.wfile.write(chunk)
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def seen(self, path_part: str = "") -> list[Request]:
        with self._lock:
            return [r for r in self.requests if path_part in r.path]

    def close(self) -> None:
        self.stopping.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> "LocalServer":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def make_issue(number: int, title: str, body: str = "", *, pr: bool = False, comments: int = 0,
               created_at: str = "2026-03-01T10:00:00Z", updated_at: str | None = None) -> dict[str, Any]:
    item: dict[str, Any] = {
        "number": number, "title": title, "body": body, "state": "open", "comments": comments,
        "html_url": f"https://github.com/NVIDIA/dgx-spark-playbooks/{'pull' if pr else 'issues'}/{number}",
        "created_at": created_at, "updated_at": updated_at or created_at, "user": {"login": f"user{number}"},
        "labels": [], "reactions": {"total_count": 0},
    }
    if pr:
        item["pull_request"] = {"url": f"https://api.github.com/repos/NVIDIA/dgx-spark-playbooks/pulls/{number}"}
    return item


class IssuesApp:
    """GitHub-like: paginated /issues with Link and ETag/304, /commits?path=nvidia/<slug>."""

    def __init__(self, items: list[dict[str, Any]], repo: str = "NVIDIA/dgx-spark-playbooks",
                 commit_dates: dict[str, str] | None = None, link_base: str | None = None) -> None:
        self.items = items
        self.repo = repo
        self.commit_dates = commit_dates or {}
        self.link_base = link_base  # where Link: next points (default: this server)
        self.base = ""
        self.remaining = 60
        self.reset_at = int(time.time()) + 3600

    def bind(self, server: LocalServer) -> "IssuesApp":
        self.base = server.url
        return self

    def _rate_headers(self) -> dict[str, str]:
        return {"X-RateLimit-Limit": "60", "X-RateLimit-Remaining": str(self.remaining),
                "X-RateLimit-Reset": str(self.reset_at)}

    def _json(self, req: Request, payload: Any, extra: dict[str, str] | None = None) -> Reply:
        body = json.dumps(payload).encode()
        etag = 'W/"%s"' % hashlib.sha1(body).hexdigest()
        if req.headers.get("if-none-match") == etag:
            return Reply(304, {"ETag": etag, **self._rate_headers()}, b"")
        self.remaining = max(0, self.remaining - 1)
        return Reply(200, {"Content-Type": "application/json", "ETag": etag, **self._rate_headers(), **(extra or {})}, body)

    def __call__(self, req: Request) -> Reply:
        if req.path == f"/repos/{self.repo}/issues":
            per_page = int(req.query.get("per_page", "30"))
            page = int(req.query.get("page", "1"))
            last = max(1, -(-len(self.items) // per_page))
            chunk = self.items[(page - 1) * per_page: page * per_page]
            base = self.link_base or self.base
            links = []
            if page < last:
                links.append(f'<{base}/repos/{self.repo}/issues?state=open&per_page={per_page}&page={page + 1}>; rel="next"')
                links.append(f'<{base}/repos/{self.repo}/issues?state=open&per_page={per_page}&page={last}>; rel="last"')
            return self._json(req, chunk, {"Link": ", ".join(links)} if links else None)
        if req.path == f"/repos/{self.repo}/commits":
            slug = req.query.get("path", "").removeprefix("nvidia/")
            date = self.commit_dates.get(slug)
            payload = [] if date is None else [{"sha": "a" * 40, "commit": {
                "message": f"Update {slug} playbook\n\nmore", "committer": {"date": date}}}]
            return self._json(req, payload)
        return Reply(404, {"Content-Type": "application/json"}, b'{"message": "Not Found"}')


def serve_issues(items: list[dict[str, Any]], **kw: Any) -> tuple[LocalServer, IssuesApp]:
    app = IssuesApp(items, **kw)
    server = LocalServer(app)
    app.bind(server)
    return server, app
