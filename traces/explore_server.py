"""``replcheck explore``'s HTTP server: the page and its JSON API over an :class:`Explorer`.

Every request names its whole path and is answered from the explorer alone, so
the server keeps nothing between requests but the latest "find" job, which runs in
a thread of its own while the page polls it (docs/explore.md lists the API).
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from replcheck.model.errors import InputError
from replcheck.model.interface import Action
from replcheck.traces.explore import (
    MAX_BODY_BYTES,
    ExploreError,
    Explorer,
    FindFunction,
    FindOutcome,
    FindRequest,
)
from replcheck.traces.explore_page import page_html

__all__ = ["ExploreServer", "FindJob", "make_server"]


class ExploreServer(ThreadingHTTPServer):
    """The page and its API on one address; one thread per request, none kept at exit.

    ``find`` is the search behind the page's "find" (None: the page has no find); it
    runs one search at a time, in a thread of its own, while the server goes on
    answering; the page polls the search's job.
    """

    daemon_threads = True
    allow_reuse_port = False  # a port another server listens on is "in use", not shared

    def __init__(
        self, address: tuple[str, int], explorer: Explorer, find: FindFunction | None = None
    ) -> None:
        self.explorer = explorer
        self.find = find
        self.job: FindJob | None = None  # the latest search; earlier ones are forgotten
        self._jobs = threading.Lock()
        self._numbered = 0
        self.page = page_html(explorer, find is not None)
        super().__init__(address, _Handler)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}/"

    def start_find(self, request: FindRequest) -> FindJob:
        """Start a search in a thread; a _Refusal (409) while another one runs."""
        if self.find is None:
            raise _Refusal(404, "find: this server has no search engine (see docs/explore.md)")
        with self._jobs:
            running = self.job
            if running is not None and not running.done.is_set():
                raise _Refusal(
                    409,
                    f"find: search {running.number} is still running "
                    f"({running.request.invariant.id}); one at a time: wait for it to end",
                )
            self._numbered += 1
            self.job = FindJob(self._numbered, self.explorer, request, self.find)
            self.job.thread.start()
            return self.job

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A browser that hangs up mid-answer is not news; anything else is one line."""
        exc = sys.exc_info()[1]
        if isinstance(exc, ConnectionError):
            return
        print(f"replcheck explore: {type(exc).__name__}: {exc}", file=sys.stderr)


class FindJob:
    """One search, run in a daemon thread (Ctrl-C ends the server without waiting for it:
    its limits end it otherwise); ``answer()`` is what the page polls."""

    def __init__(
        self, number: int, explorer: Explorer, request: FindRequest, find: FindFunction
    ) -> None:
        self.number = number
        self.request = request
        self.explorer = explorer
        self.progress: tuple[int, int, float] = (0, 0, 0.0)
        self.outcome: FindOutcome | None = None
        self.error: str | None = None
        self.done = threading.Event()
        self._find = find
        self.thread = threading.Thread(target=self._run, name=f"find-{number}", daemon=True)

    def _run(self) -> None:
        try:
            self.outcome = self._find(self.explorer, self.request, self._note)
        except Exception as exc:  # an engine's failure is the job's answer, one line
            self.error = " ".join(f"find: {type(exc).__name__}: {exc}".split())[:500]
        finally:
            self.done.set()

    def _note(self, states: int, depth: int, seconds: float) -> None:
        self.progress = (states, depth, seconds)

    def answer(self) -> dict[str, Any]:
        """The job as ``GET /api/find`` answers it (docs/explore.md)."""
        req, explorer = self.request, self.explorer
        out: dict[str, Any] = {
            "job": self.number,
            "running": not self.done.is_set(),
            "invariant": req.invariant.id,
            "from": explorer.path_text(req.actions),
            "max_states": req.max_states,
            "time_limit": req.time_limit,
        }
        outcome = self.outcome
        if out["running"] or outcome is None:
            states, depth, seconds = self.progress
            out.update(states=states, depth=depth, seconds=round(seconds, 3))
            if self.error is not None and not out["running"]:
                out["error"] = self.error
            return out
        out.update(
            states=outcome.states,
            depth=outcome.depth,
            seconds=round(outcome.seconds, 3),
            status=outcome.status,
            complete=outcome.status in ("complete", "all-violated"),
            violated=outcome.steps is not None,
        )
        if outcome.steps is not None:
            out.update(
                added=len(outcome.steps),
                path=explorer.path_text([*req.actions, *outcome.steps]),
                message=outcome.message,
            )
        return out


def make_server(
    explorer: Explorer,
    host: str = "127.0.0.1",
    port: int = 0,
    find: FindFunction | None = None,
) -> ExploreServer:
    """The server, bound and listening (``port`` 0: a free one); ExploreError if it cannot.
    ``find``: the search behind the page's "find" (None: no find)."""
    try:
        return ExploreServer((host, port), explorer, find)
    except OSError as exc:
        if exc.errno in _IN_USE:
            raise ExploreError(
                f"--port {port}: in use on {host} (another server listens there; "
                "--port 0 picks a free one)"
            ) from None
        raise ExploreError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None


_IN_USE = {98, 48, 10048}  # EADDRINUSE: Linux, macOS, Windows
_GET_ONLY = ("/", "/index.html", "/api/state", "/api/export.itf.json", "/api/export.actions.json")
_DRAIN_BYTES = 64 * 2**20  # an oversized body is read (and dropped) up to this, to answer 413


class _Refusal(Exception):
    """A request answered with ``status`` and a one-line JSON error."""

    def __init__(self, status: int, message: str, allow: str | None = None) -> None:
        super().__init__(message)
        self.status, self.allow = status, allow


class _Handler(BaseHTTPRequestHandler):
    server: ExploreServer
    server_version = "replcheck-explore"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        """Quiet: the terminal shows the URL, not every request."""

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        self._answer(self._get)

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        self._answer(self._post)

    def _answer(self, route: Callable[[str, str], None]) -> None:
        url = urlsplit(self.path)
        try:
            route(url.path, url.query)
        except InputError as exc:
            self._json(400, {"error": str(exc)})
        except _Refusal as exc:
            extra = {"Allow": exc.allow} if exc.allow else None
            self._json(exc.status, {"error": str(exc)}, extra=extra)

    def _get(self, path: str, query: str) -> None:
        explorer = self.server.explorer
        if path in ("/", "/index.html"):
            self._send(200, self.server.page.encode(), "text/html; charset=utf-8")
        elif path == "/api/state":
            self._json(200, explorer.state(self._actions(query)))
        elif path == "/api/export.itf.json":
            doc = explorer.export_itf(self._actions(query))
            self._json(200, doc, download="explore.itf.json")
        elif path == "/api/export.actions.json":
            doc = explorer.export_actions(self._actions(query))
            self._json(200, doc, download="explore.actions.json")
        elif path == "/api/find":
            self._json(200, self._job(query).answer())
        elif path == "/api/load":
            raise _Refusal(405, "load: POST the trace's text (see docs/explore.md)", "POST")
        else:
            raise _Refusal(404, f"not found: {path[:80]} (see docs/explore.md)")

    def _post(self, path: str, query: str) -> None:
        explorer = self.server.explorer
        if path == "/api/find":
            request = explorer.find_request(self._json_body())
            self._json(202, self.server.start_find(request).answer())
        elif path == "/api/load":
            name = self._one(query, "name", "trace.json")
            name = " ".join(name.split())[:100] or "trace.json"  # only named in messages
            try:
                text = self._body().decode("utf-8-sig")
            except UnicodeDecodeError as exc:
                raise ExploreError(f"{name}: not UTF-8 text (byte {exc.start})") from None
            self._json(200, explorer.load(text, name))
        elif path in _GET_ONLY:
            raise _Refusal(405, f"{path}: GET only (see docs/explore.md)", "GET")
        else:
            raise _Refusal(404, f"not found: {path[:80]} (see docs/explore.md)")

    def _job(self, query: str) -> FindJob:
        job = self.server.job
        if job is None:
            raise _Refusal(404, "find: no search yet (POST /api/find starts one)")
        wanted = self._one(query, "job", "")
        if wanted and wanted != str(job.number):
            raise _Refusal(
                404,
                f"find: no search {wanted[:20]!r} (the latest is {job.number}; "
                "only the latest is kept)",
            )
        return job

    def _body(self) -> bytes:
        """The request's body, at most MAX_BODY_BYTES (a bigger one is 413)."""
        if self.headers.get("Transfer-Encoding"):
            self.close_connection = True
            raise _Refusal(411, "a body with a Content-Length, please (no chunked encoding)")
        length = self.headers.get("Content-Length")
        if length is None:
            raise _Refusal(411, "a body with a Content-Length, please")
        if not length.isdigit():
            self.close_connection = True
            raise _Refusal(400, f"Content-Length: not a byte count ({length[:20]!r})")
        size = int(length)
        if size > MAX_BODY_BYTES:
            self.close_connection = True
            left = min(size, _DRAIN_BYTES)  # read what was sent, so the client sees the 413
            while left > 0 and (chunk := self.rfile.read(min(left, 2**16))):
                left -= len(chunk)
            raise _Refusal(413, f"body: {size:,} bytes, more than the {MAX_BODY_BYTES:,} accepted")
        data = self.rfile.read(size)
        if len(data) != size:
            self.close_connection = True
            raise _Refusal(400, f"body: {len(data):,} bytes of the {size:,} announced")
        return data

    def _json_body(self) -> Any:
        try:
            return json.loads(self._body())
        except (ValueError, RecursionError) as exc:
            raise ExploreError(f"body: not JSON ({' '.join(str(exc).split())[:120]})") from None

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """http.server's own refusals (a request line too long, a method other than GET or
        POST) as the API's: a JSON ``error``, one line."""
        self.close_connection = True
        self._json(code, {"error": message or self.responses.get(code, ("error",))[0]})

    def _one(self, query: str, key: str, default: str) -> str:
        values = parse_qs(query, keep_blank_values=True).get(key, [default])
        if len(values) > 1:
            raise ExploreError(f"{key}: give it once")
        return values[0]

    def _actions(self, query: str) -> list[Action]:
        return self.server.explorer.parse_path(self._one(query, "steps", ""))

    def _json(
        self,
        status: int,
        body: Any,
        download: str | None = None,
        extra: dict[str, str] | None = None,
    ) -> None:
        data = (json.dumps(body, indent=1) + "\n").encode()
        headers = dict(extra or {})
        if download:
            headers["Content-Disposition"] = f'attachment; filename="{download}"'
        self._send(status, data, "application/json", headers)

    def _send(
        self, status: int, data: bytes, kind: str, extra: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        for key, value in (extra or {}).items():
            self.send_header(key, value)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)


# ------------------------------------------------------------------------ page
