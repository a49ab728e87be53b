"""``replcheck explore``: take a model's steps by hand, in a browser, and keep the path.

A counterexample shows one execution; to ask "and if the follower had fetched
first?" a person wants to take the steps themselves, see each state as the
timeline draws it, and see at once which invariant breaks.  The server is a thin
JSON API over the ``Model`` interface: every request names the whole path (the
actions from the initial state, in the action-list syntax of ``traces/load.py``,
separated by ``/``) and the server re-executes it, so it keeps nothing between
requests and a URL (``#/steps/<path>``) reproduces a state.  It serves its own page
and API only, and reads no file a request names.  Only the view is chosen by the
kind of configuration, as ITF export does: the Kafka model's lanes, or any other
model's fields as a table.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from html import escape
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from replcheck.invariants import Invariant, registry
from replcheck.model.errors import InputError
from replcheck.model.interface import Action
from replcheck.model.kafka.config import Config
from replcheck.model.registry import AnyConfig, action_docs, action_params, build_model
from replcheck.traces.html import STYLE, render_plain_state, render_state
from replcheck.traces.itf import trace_to_itf
from replcheck.traces.load import parse_action, trace_from_text
from replcheck.traces.replay import NotEnabled, execute, replay_trace
from replcheck.traces.text import describe_action, state_changes

SEPARATOR = "/"  # between the steps of a path
MAX_PATH_CHARS = 10_000  # paths are short (ten steps: 250); a request past this is not one
MAX_BODY_BYTES = 4 * 2**20  # a POST's body: a trace of 50 steps on 5 replicas is ~0.3 MiB
# A find's limits: the defaults the page offers, and the most a request may ask for.
FIND_MAX_STATES, FIND_TIME_LIMIT = 200_000, 30.0
FIND_MAX_STATES_CAP, FIND_TIME_LIMIT_CAP = 50_000_000, 3600.0

__all__ = [
    "ExploreError",
    "ExploreServer",
    "Explorer",
    "FindFunction",
    "FindOutcome",
    "FindRequest",
    "make_server",
    "page_html",
]


class ExploreError(InputError):
    """A path that cannot be taken, or a server that cannot start: one line."""


Steps = list[tuple[Action | None, Hashable]]


@dataclass
class FindRequest:
    """A search the page asked for: from the end of ``actions``, for ``invariant``."""

    actions: list[Action]
    invariant: Invariant
    max_states: int
    time_limit: float


@dataclass
class FindOutcome:
    """What a search from a path's last state established.  ``status`` is the engine's
    (``complete``, ``all-violated``, ``max-states``, ``timeout``, ``memory``);
    ``steps`` the shortest continuation into a violation, or None if none was found."""

    status: str
    states: int
    depth: int
    seconds: float
    steps: list[Action] | None
    message: str | None = None


# The search behind "find": (explorer, request, on_progress(states, depth, seconds)).
# The engines live above this layer (README, "Where things live"), so the server is given
# one: ``replcheck explore`` wires in ``replcheck.checker.explore_find.find_violation``.
FindFunction = Callable[["Explorer", FindRequest, Callable[[int, int, float], None]], FindOutcome]


class Explorer:
    """A configuration's model, the paths through it, and what each path's last state is.

    Stateless: each call re-executes the path it is given from the initial state.
    """

    def __init__(self, config: AnyConfig, start: Sequence[Action] = ()) -> None:
        self.config = config
        self.model = build_model(config)
        self.kafka = isinstance(config, Config)
        self.params = action_params(config)
        self.docs = action_docs(config)
        self.invariants = registry(config)
        self.start = list(start)
        self.execute(self.start)  # the path to start on must be one

    # ------------------------------------------------------------------ paths

    def step_text(self, action: Action) -> str:
        """One step as the path writes it: ``fetch(follower=r1,leader=r0)``."""
        return self.label(action).replace(" ", "")

    def label(self, action: Action) -> str:
        """One step as the step table prints it: ``fetch(follower=r1, leader=r0)``."""
        return describe_action(action, None if self.kafka else self.params)

    def path_text(self, actions: Sequence[Action]) -> str:
        return SEPARATOR.join(self.step_text(a) for a in actions)

    def parse_path(self, text: str) -> list[Action]:
        """The actions of ``a/b/c`` (each in the action-list syntax); '' is the initial state."""
        if len(text) > MAX_PATH_CHARS:
            raise ExploreError(f"path: longer than {MAX_PATH_CHARS:,} characters")
        text = text.strip().strip(SEPARATOR)
        if not text:
            return []
        parts = text.split(SEPARATOR)
        actions = []
        for index, part in enumerate(parts, start=1):
            if not part.strip():
                raise ExploreError(f"path: step {index} is empty (two '{SEPARATOR}' in a row)")
            try:
                actions.append(parse_action(part, f"path: step {index}", self.params))
            except InputError as exc:
                raise ExploreError(str(exc)) from None
        return actions

    def execute(self, actions: Sequence[Action]) -> Steps:
        """[(None, initial), (action 1, state 1), ...]; each action must be enabled."""
        try:
            return execute(self.model, actions)
        except NotEnabled as e:
            names = ", ".join(self.label(a) for a in e.enabled) or "none"
            raise ExploreError(
                f"path: step {e.step}: {self.label(e.action)} is not enabled (enabled: {names})"
            ) from None

    # ------------------------------------------------------------------ views

    def state(self, actions: Sequence[Action]) -> dict[str, Any]:
        """Everything the page shows for a path (see docs/explore.md, ``/api/state``)."""
        steps = self.execute(actions)
        action, state = steps[-1]
        prev = steps[-2][1] if len(steps) > 1 else None
        last = len(steps) - 1
        statuses = self._invariants(steps)
        holding = [
            inv for inv, s in zip(self.invariants, statuses, strict=True) if not s["violated"]
        ]
        return {
            "config": self.config.describe(),
            "model": "kafka" if self.kafka else self.config.model,
            "path": self.path_text(actions),
            "start": self.path_text(self.start),
            "steps": [
                {"index": k, "step": self.step_text(a), "label": self.label(a)}
                for k, (a, _s) in enumerate(steps)
                if a is not None
            ],
            "view": self._view(state, prev, action, last),
            "changes": self._changes(prev, state),
            "enabled": [
                {
                    "step": self.step_text(a),
                    "label": self.label(a),
                    "action": a.name,
                    "description": self.docs.get(a.name, ""),
                    **self._preview(state, a, holding),
                }
                for a in dict.fromkeys(self.model.actions(state))
            ],
            "invariants": statuses,
            "violations": [
                {"id": s["id"], "message": s["message"]} for s in statuses if s["violated"]
            ],
        }

    def _view(self, state: Any, prev: Any, action: Action | None, step: int) -> str:
        if self.kafka:
            return render_state(state, prev, action, step)
        text = self.label(action) if action is not None else "initial state"
        return render_plain_state(state, prev, text, step)

    def _changes(self, prev: Any, state: Any) -> list[str]:
        if prev is None:
            return []
        if self.kafka:
            return state_changes(prev, state)
        fields = zip(state._fields, state, prev, strict=True)
        return [f"{name} = {now!r}" for name, now, before in fields if now != before]

    def _preview(self, state: Any, action: Action, holding: Sequence[Invariant]) -> dict[str, Any]:
        """Where an enabled action leads: the step's changes, and which of the invariants
        ``holding`` in ``state`` it breaks (the page shows both on the action's button)."""
        after = self.model.next_state(state, action)
        breaks = [inv.id for inv in holding if inv(after) is not None]
        return {"changes": self._changes(state, after), "breaks": breaks}

    def _invariants(self, steps: Steps) -> list[dict[str, Any]]:
        """Each invariant in the last state, and the first step along the path to break it."""
        out = []
        for inv in self.invariants:
            messages = [inv(s) for _a, s in steps]
            first = next((k for k, m in enumerate(messages) if m is not None), None)
            message = messages[-1]
            out.append(
                {
                    "id": inv.id,
                    "description": inv.description,
                    "default": inv.default,
                    "violated": message is not None,
                    "message": message,
                    "first_violated_step": first,
                }
            )
        return out

    def headline(self, state: Any) -> tuple[str | None, str | None]:
        """The invariant a trace ending in ``state`` records: the first one it violates,
        those checked by default before the others (registry order)."""
        ordered = [i for i in self.invariants if i.default] + [
            i for i in self.invariants if not i.default
        ]
        for inv in ordered:
            message = inv(state)
            if message is not None:
                return inv.id, message
        return None, None

    # ------------------------------------------------------------ load, find

    def load(self, text: str, name: str) -> dict[str, Any]:
        """A trace's text (ITF or an action list, as ``replcheck replay`` reads a file) as a
        path of this model: it must be of this configuration and replay exactly."""
        trace = trace_from_text(text, name)
        if trace.config.to_dict() != self.config.to_dict():
            raise ExploreError(
                f"{name}: a trace of {trace.config.describe()}, not of this server's "
                f"{self.config.describe()} (replcheck explore --trace {name} serves its own)"
            )
        result = replay_trace(trace, self.model)
        if result.divergence is not None:
            div = result.divergence
            raise ExploreError(f"{name}: does not replay here: step {div.step}: {div.reason}")
        return {
            "path": self.path_text(trace.actions),
            "steps": len(trace.actions),
            "kind": trace.kind,
            "invariant": result.invariant,
        }

    def find_request(self, body: Any) -> FindRequest:
        """A find's request (``{"steps", "invariant", "max_states", "time_limit"}``),
        checked: the path taken, a known invariant, limits within the caps."""
        if not isinstance(body, dict):
            raise ExploreError("find: the body must be a JSON object (steps, invariant, ...)")
        unknown = sorted(set(body) - {"steps", "invariant", "max_states", "time_limit"})
        if unknown:
            raise ExploreError(f"find: unknown key {unknown[0]!r}"[:200])
        steps = body.get("steps", "")
        if not isinstance(steps, str):
            raise ExploreError("find: steps: expected the path as text")
        actions = self.parse_path(steps)
        self.execute(actions)  # a path that cannot be taken is refused before a search
        ids = {inv.id: inv for inv in self.invariants}
        wanted = body.get("invariant")
        if wanted not in ids:
            raise ExploreError(
                f"find: invariant: expected one of {', '.join(ids)} (got {wanted!r})"[:300]
            )
        max_states = body.get("max_states", FIND_MAX_STATES)
        if type(max_states) is not int or not 1 <= max_states <= FIND_MAX_STATES_CAP:
            raise ExploreError(
                f"find: max_states: expected a whole number from 1 to "
                f"{FIND_MAX_STATES_CAP:,} (got {max_states!r})"[:200]
            )
        time_limit = body.get("time_limit", FIND_TIME_LIMIT)
        if (
            type(time_limit) not in (int, float)
            or not 0 < time_limit <= FIND_TIME_LIMIT_CAP  # NaN fails this too
        ):
            raise ExploreError(
                f"find: time_limit: expected seconds, more than 0 and at most "
                f"{FIND_TIME_LIMIT_CAP:g} (got {time_limit!r})"[:200]
            )
        return FindRequest(actions, ids[wanted], max_states, float(time_limit))

    # ----------------------------------------------------------------- export

    def export_itf(self, actions: Sequence[Action]) -> dict[str, Any]:
        """The path as ``check --trace-out`` writes a trace (``replcheck replay`` reads it)."""
        steps = self.execute(actions)
        invariant, message = self.headline(steps[-1][1])
        return trace_to_itf(self.config, steps, invariant, message)

    def export_actions(self, actions: Sequence[Action]) -> dict[str, Any]:
        """The path as a hand-written JSON action list (``replcheck replay`` reads it)."""
        steps = self.execute(actions)
        invariant, message = self.headline(steps[-1][1])
        doc: dict[str, Any] = {
            "description": f"a path taken in replcheck explore ({len(actions)} steps)",
            "config": self.config.to_dict(),
        }
        if invariant is not None:
            doc["invariant"], doc["violation"] = invariant, message
        doc["actions"] = [self.label(a) for a in actions]
        return doc


# ---------------------------------------------------------------------- server


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

EXPLORE_STYLE = """
[hidden] { display: none !important; }
.bar { display: flex; gap: .5rem; align-items: center; flex-wrap: wrap; margin: .5rem 0; }
.bar button, .bar a { font: inherit; padding: .2rem .7rem; }
.explore { display: grid; grid-template-columns: minmax(0, 3fr) minmax(320px, 2fr); gap: 1rem;
  align-items: start; }
@media (max-width: 1000px) { .explore { grid-template-columns: 1fr; } }
.state .cell { min-width: 180px; }
.state.plain td { font-family: monospace; font-size: 12px; }
#banner { padding: .5rem .8rem; border-radius: 4px; margin: .5rem 0; background: #fde2e2;
  border-left: 4px solid #c62828; }
#banner .inv { font-weight: 600; }
#error { padding: .5rem .8rem; border-radius: 4px; margin: .5rem 0; background: #fff3cd;
  border-left: 4px solid #b8860b; }
#actions { list-style: none; padding: 0; margin: 0; }
#actions li { margin: 0 0 .4rem; }
#actions button { font-family: monospace; font-size: 12px; cursor: pointer; }
#actions .doc { display: block; color: #555; font-size: 12px; margin-left: .3rem; }
#path { font-family: monospace; font-size: 12px; padding-left: 2.2rem; margin: 0; }
#path li.current { font-weight: 600; }
#changes { color: #444; font-size: 13px; padding-left: 1.1rem; }
#invariants { font-size: 13px; width: 100%; }
#invariants td, #invariants th { border-bottom: 1px solid #eee; padding: 3px 6px;
  text-align: left; vertical-align: top; }
#invariants tr.violated td.status { color: #c62828; font-weight: 600; }
#invariants tr.ok td.status { color: #2e7d32; }
#invariants tr.optional td.id::after { content: " (on request)"; color: #777; }
#actions .breaks { display: block; color: #c62828; font-size: 12px; margin-left: .3rem; }
#actions button.breaks { border-color: #c62828; }
.tools { font-size: 13px; }
.tools label { margin-right: .4rem; }
.tools input[type=number] { width: 6.5em; }
#find-seconds { width: 4em; }
#find-status, #load-status { font-size: 13px; margin: .3rem 0; min-height: 1.2em; }
#find-status.violated { color: #c62828; }
.tools .error { color: #8a6d00; }
h2 { font-size: 1rem; margin: 1rem 0 .3rem; }
"""

# The page's one script.  The path lives in the address (#/steps/a/b/c); every change of
# it asks the server for that path's state, and a click on an action appends the
# action.  "Forward" re-takes the steps of the longest path seen that the current one
# starts.
SCRIPT = r"""
(function () {
  'use strict';
  var PREFIX = '#/steps/';
  var start = document.body.getAttribute('data-start');
  var shown = null;       // the path (text) the page shows, null before the first
  var furthest = [];      // the longest path seen that the shown one starts
  var asked = 0;          // answers to older requests are dropped
  function $(id) { return document.getElementById(id); }
  function split(path) { return path ? path.split('/') : []; }
  function go(steps) { location.hash = PREFIX + steps.join('/'); }
  function startsWith(long, short) {
    if (short.length > long.length) return false;
    for (var i = 0; i < short.length; i++) if (long[i] !== short[i]) return false;
    return true;
  }
  function apiUrl(name, path) { return '/api/' + name + '?steps=' + encodeURIComponent(path); }
  function element(tag, cls, text) {
    var el = document.createElement(tag);
    if (cls) el.className = cls;
    if (text !== undefined && text !== null) el.textContent = text;
    return el;
  }
  function showError(message) {
    var box = $('error');
    box.textContent = message + ' ';
    var home = element('a', null, 'back to the initial state');
    home.href = PREFIX;
    box.appendChild(home);
    box.hidden = false;
    $('banner').hidden = true;  // no state is shown: neither its verdict nor its actions
    document.querySelector('main').hidden = true;
    document.body.setAttribute('data-error', message);
    document.body.removeAttribute('data-path');
  }
  function pathFromAddress() {
    var h = location.hash;
    if (h === '#/steps' || h === PREFIX) return '';
    if (h.indexOf(PREFIX) !== 0) {
      throw new Error('malformed path: the address must end in ' + PREFIX +
                      'followed by the steps, separated by /');
    }
    try {
      return decodeURIComponent(h.slice(PREFIX.length));
    } catch (e) {
      throw new Error('malformed path: ' + e.message);
    }
  }
  function load() {
    if (location.hash === '' || location.hash === '#') {
      location.replace(PREFIX + start);
      return;
    }
    var path;
    try { path = pathFromAddress(); } catch (e) { showError(e.message); return; }
    var mine = ++asked;
    document.body.setAttribute('data-busy', '1');
    fetch(apiUrl('state', path)).then(function (r) {
      return r.json().then(function (body) { return {ok: r.ok, body: body}; });
    }).then(function (res) {
      if (mine !== asked) return;
      document.body.removeAttribute('data-busy');
      if (!res.ok) showError(res.body.error); else render(path, res.body);
    }).catch(function (e) {
      if (mine !== asked) return;
      document.body.removeAttribute('data-busy');
      showError('no answer from the server (is replcheck explore still running?): ' + e);
    });
  }
  function preview(a) {  // an action button's tooltip: what it does, and where it leads
    var lines = [a.description || a.label, '', 'leads to:'];
    if (!a.changes.length) lines.push('  (no visible change)');
    a.changes.forEach(function (c) { lines.push('  ' + c); });
    if (a.breaks.length) lines.push('', 'breaks: ' + a.breaks.join(', '));
    return lines.join('\n');
  }
  function invariantChoices(invariants) {  // once: the invariants "find" can look for
    var select = $('find-invariant');
    if (!select || select.options.length) return;
    invariants.forEach(function (inv) {
      var option = element('option', null, inv.id + (inv.default ? '' : ' (on request)'));
      option.value = inv.id;
      option.title = inv.description;
      select.appendChild(option);
    });
  }
  function render(path, data) {
    var steps = split(path);
    if (!startsWith(furthest, steps)) furthest = steps.slice();
    shown = path;
    $('error').hidden = true;
    document.querySelector('main').hidden = false;
    document.body.removeAttribute('data-error');
    $('config').textContent = data.config;
    $('view').innerHTML = data.view;  // built by the server, every text escaped
    var banner = $('banner');
    banner.textContent = '';
    data.violations.forEach(function (v) {
      var line = element('div', 'violation');
      line.appendChild(element('span', 'inv', v.id));
      line.appendChild(document.createTextNode(' is violated: ' + v.message));
      banner.appendChild(line);
    });
    banner.hidden = data.violations.length === 0;
    var list = $('path');
    list.textContent = '';
    var first = element('li', steps.length ? null : 'current');
    var link = element('a', null, 'initial state');
    link.href = PREFIX;
    first.appendChild(link);
    list.appendChild(first);
    data.steps.forEach(function (s) {
      var li = element('li', s.index === data.steps.length ? 'current' : null);
      var a = element('a', null, s.label);
      a.href = PREFIX + steps.slice(0, s.index).join('/');
      li.appendChild(a);
      list.appendChild(li);
    });
    var changes = $('changes');
    changes.textContent = '';
    data.changes.forEach(function (c) { changes.appendChild(element('li', null, c)); });
    $('changes-head').hidden = data.changes.length === 0;
    var actions = $('actions');
    actions.textContent = '';
    data.enabled.forEach(function (a) {
      var li = element('li');
      var button = element('button', 'action', a.label);
      button.type = 'button';
      button.setAttribute('data-step', a.step);
      button.title = preview(a);
      button.setAttribute('data-breaks', a.breaks.join(' '));
      if (a.breaks.length) button.classList.add('breaks');
      button.addEventListener('click', function () { go(steps.concat([a.step])); });
      li.appendChild(button);
      if (a.description) li.appendChild(element('span', 'doc', a.description));
      if (a.breaks.length) {
        li.appendChild(element('span', 'breaks', 'breaks ' + a.breaks.join(', ')));
      }
      actions.appendChild(li);
    });
    if (!data.enabled.length) actions.appendChild(element('li', null, 'nothing is enabled'));
    var table = $('invariants').tBodies[0];
    table.textContent = '';
    data.invariants.forEach(function (inv) {
      var tr = element('tr', (inv.violated ? 'violated' : 'ok') + (inv.default ? '' : ' optional'));
      tr.setAttribute('data-invariant', inv.id);
      tr.title = inv.description;
      tr.appendChild(element('td', 'id', inv.id));
      var status = inv.violated ? 'violated' :
        inv.first_violated_step !== null ? 'holds (violated at step ' + inv.first_violated_step +
        ')' : 'holds';
      tr.appendChild(element('td', 'status', status));
      tr.appendChild(element('td', 'message', inv.message || ''));
      table.appendChild(tr);
    });
    invariantChoices(data.invariants);
    $('back').disabled = steps.length === 0;
    $('forward').disabled = furthest.length <= steps.length;
    $('export-itf').href = apiUrl('export.itf.json', path);
    $('export-actions').href = apiUrl('export.actions.json', path);
    $('count').textContent = steps.length + (steps.length === 1 ? ' step' : ' steps');
    document.body.setAttribute('data-path', path);
  }
  $('back').addEventListener('click', function () {
    var steps = split(shown);
    if (steps.length) go(steps.slice(0, -1));
  });
  $('forward').addEventListener('click', function () {
    var steps = split(shown);
    if (furthest.length > steps.length) go(furthest.slice(0, steps.length + 1));
  });
  $('restart').addEventListener('click', function () { go([]); });

  // Find: POST /api/find starts a search from the shown state; GET /api/find?job=N is
  // polled until it ends; a violation found is loaded as the path (this path + its steps).
  function number(n) { return n.toLocaleString('en-US'); }
  function findStatus(text, cls, result) {
    var box = $('find-status');
    box.textContent = text;
    box.className = cls || '';
    if (result) document.body.setAttribute('data-find', result);
  }
  function post(url, body) {
    return fetch(url, {method: 'POST', body: body}).then(function (r) {
      return r.json().then(function (answer) { return {ok: r.ok, body: answer}; });
    });
  }
  function finished(job) {
    $('find').disabled = false;
    if (job.error) { findStatus(job.error, 'error', 'error'); return; }
    var counted = number(job.states) + (job.states === 1 ? ' state' : ' states');
    if (job.violated) {
      var where = job.added === 0 ? 'already violated here' :
        'violated ' + job.added + (job.added === 1 ? ' step' : ' steps') + ' from here';
      findStatus(job.invariant + ': ' + where + ' (shortest; ' + counted + ' searched, ' +
                 job.seconds.toFixed(1) + ' s): ' + job.message, 'violated', 'violated');
      go(split(job.path));
    } else {
      var why = job.complete ? 'complete: every state reachable from here' :
        job.status === 'max-states' ? 'stopped at the limit of ' + number(job.max_states) +
        ' states' : job.status === 'timeout' ? 'stopped at the time limit' : 'stopped: ' +
        job.status;
      findStatus(job.invariant + ': not violated within ' + counted + ' (' + why + ')',
                 'holds', job.complete ? 'holds' : 'stopped');
    }
  }
  function poll(number_) {
    fetch('/api/find?job=' + number_).then(function (r) { return r.json(); }).then(function (job) {
      if (job.error && job.job === undefined) { finished(job); return; }
      if (!job.running) { finished(job); return; }
      findStatus('searching for ' + job.invariant + ': ' + number(job.states) + ' states, depth ' +
                 job.depth + ', ' + job.seconds.toFixed(1) + ' s', 'running', 'running');
      setTimeout(function () { poll(number_); }, 300);
    }).catch(function (e) {
      finished({error: 'no answer from the server (is replcheck explore still running?): ' + e});
    });
  }
  if ($('find')) $('find').addEventListener('click', function () {
    var body = {steps: shown || '', invariant: $('find-invariant').value,
                max_states: Number($('find-max').value),
                time_limit: Number($('find-seconds').value)};
    $('find').disabled = true;
    findStatus('starting the search...', 'running', 'running');
    post('/api/find', JSON.stringify(body)).then(function (res) {
      if (!res.ok) { finished({error: res.body.error}); return; }
      poll(res.body.job);
    }).catch(function (e) {
      finished({error: 'no answer from the server (is replcheck explore still running?): ' + e});
    });
  });

  // Load: the file is read here (FileReader) and its text posted; the server parses and
  // replays it (it must be of this configuration) and answers its path.
  var maxBody = Number(document.body.getAttribute('data-max-body'));
  function loadStatus(text, cls, result) {
    var box = $('load-status');
    box.textContent = text;
    box.className = cls || '';
    document.body.setAttribute('data-load', result);
  }
  $('load-file').addEventListener('change', function () {
    var file = this.files[0];
    this.value = '';  // the same file chosen again is a change again
    if (!file) return;
    if (file.size > maxBody) {
      loadStatus(file.name + ': ' + number(file.size) + ' bytes, more than the ' +
                 number(maxBody) + ' accepted', 'error', 'error');
      return;
    }
    loadStatus('reading ' + file.name + '...', '', 'busy');
    var reader = new FileReader();
    reader.onerror = function () { loadStatus(file.name + ': cannot read it', 'error', 'error'); };
    reader.onload = function () {
      post('/api/load?name=' + encodeURIComponent(file.name), reader.result).then(function (res) {
        if (!res.ok) { loadStatus(res.body.error, 'error', 'error'); return; }
        loadStatus('loaded ' + file.name + ': ' + res.body.steps +
                   (res.body.steps === 1 ? ' step' : ' steps'), '', 'loaded');
        go(split(res.body.path));
      }).catch(function (e) {
        loadStatus('no answer from the server (is replcheck explore still running?): ' + e,
                   'error', 'error');
      });
    };
    reader.readAsText(file);
  });
  window.addEventListener('hashchange', load);
  load();
})();
"""


def page_html(explorer: Explorer, find: bool = True) -> str:
    """The page: a frame the script fills from ``/api/state``; no file or network fetch
    beyond this server's API.  ``find``: whether it offers a search (the server has one)."""
    start = escape(explorer.path_text(explorer.start))
    finder = (
        f"""<h2>Find a violation from here</h2>
<div class="tools" id="find-panel">
<select id="find-invariant" aria-label="invariant"></select>
<label>max states <input type="number" id="find-max" min="1" step="1"
 value="{FIND_MAX_STATES}"></label>
<label>seconds <input type="number" id="find-seconds" min="1" step="1"
 value="{FIND_TIME_LIMIT:g}"></label>
<button type="button" id="find">find</button>
<div id="find-status"></div>
</div>
"""
        if find
        else ""
    )
    title = f"replcheck explore: {explorer.config.describe()}"
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{escape(title)}</title>
<style>{STYLE}{EXPLORE_STYLE}</style>
</head>
<body data-start="{start}" data-max-body="{MAX_BODY_BYTES}">
<header>
<h1>replcheck explore</h1>
<div class="config" id="config">{escape(explorer.config.describe())}</div>
<div class="bar">
<button type="button" id="back" disabled>&larr; back</button>
<button type="button" id="forward" disabled>forward &rarr;</button>
<button type="button" id="restart">initial state</button>
<span id="count"></span>
<a id="export-itf" href="/api/export.itf.json?steps=" download="explore.itf.json">export ITF</a>
<a id="export-actions" href="/api/export.actions.json?steps="
 download="explore.actions.json">export action list</a>
</div>
<div id="error" hidden></div>
<div id="banner" hidden></div>
</header>
<main class="explore">
<section>
<div class="timeline" id="view"></div>
<h2 id="changes-head" hidden>What the last step changed</h2>
<ul id="changes"></ul>
<h2>Invariants in this state</h2>
<table id="invariants"><thead><tr><th>invariant</th><th>status</th><th>message</th></tr>
</thead><tbody></tbody></table>
</section>
<section>
<h2>Enabled actions</h2>
<ul id="actions"></ul>
<h2>Path</h2>
<ol id="path" start="0"></ol>
{finder}<h2>Load a trace</h2>
<div class="tools">
<label>an ITF trace or an action list <input type="file" id="load-file"
 accept=".json,.toml,application/json"></label>
<div id="load-status"></div>
</div>
</section>
</main>
<script>{SCRIPT}</script>
</body>
</html>
"""
