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
from collections.abc import Hashable, Sequence
from html import escape
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from replcheck.invariants import registry
from replcheck.model.errors import InputError
from replcheck.model.interface import Action
from replcheck.model.kafka.config import Config
from replcheck.model.registry import AnyConfig, action_docs, action_params, build_model
from replcheck.traces.html import STYLE, render_plain_state, render_state
from replcheck.traces.itf import trace_to_itf
from replcheck.traces.load import parse_action
from replcheck.traces.text import describe_action, state_changes

SEPARATOR = "/"  # between the steps of a path
MAX_PATH_CHARS = 10_000  # paths are short (ten steps: 250); a request past this is not one

__all__ = ["ExploreError", "ExploreServer", "Explorer", "make_server", "page_html"]


class ExploreError(InputError):
    """A path that cannot be taken, or a server that cannot start: one line."""


Steps = list[tuple[Action | None, Hashable]]


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
        state = self.model.init_states()[0]
        steps: Steps = [(None, state)]
        for index, action in enumerate(actions, start=1):
            enabled = list(self.model.actions(state))
            if action not in enabled:
                names = ", ".join(self.label(a) for a in enabled) or "none"
                raise ExploreError(
                    f"path: step {index}: {self.label(action)} is not enabled (enabled: {names})"
                )
            state = self.model.next_state(state, action)
            steps.append((action, state))
        return steps

    # ------------------------------------------------------------------ views

    def state(self, actions: Sequence[Action]) -> dict[str, Any]:
        """Everything the page shows for a path (see docs/explore.md, ``/api/state``)."""
        steps = self.execute(actions)
        action, state = steps[-1]
        prev = steps[-2][1] if len(steps) > 1 else None
        last = len(steps) - 1
        statuses = self._invariants(steps)
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

    def _invariants(self, steps: Steps) -> list[dict[str, Any]]:
        """Each invariant in the last state, and the first step along the path to break it."""
        out = []
        for inv in self.invariants:
            first = next((k for k, (_a, s) in enumerate(steps) if inv(s) is not None), None)
            message = inv(steps[-1][1])
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
    """The page and its API on one address; one thread per request, none kept at exit."""

    daemon_threads = True
    allow_reuse_port = False  # a port another server listens on is "in use", not shared

    def __init__(self, address: tuple[str, int], explorer: Explorer) -> None:
        self.explorer = explorer
        self.page = page_html(explorer)
        super().__init__(address, _Handler)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}/"

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A browser that hangs up mid-answer is not news; anything else is one line."""
        exc = sys.exc_info()[1]
        if isinstance(exc, ConnectionError):
            return
        print(f"replcheck explore: {type(exc).__name__}: {exc}", file=sys.stderr)


def make_server(explorer: Explorer, host: str = "127.0.0.1", port: int = 0) -> ExploreServer:
    """The server, bound and listening (``port`` 0: a free one); ExploreError if it cannot."""
    try:
        return ExploreServer((host, port), explorer)
    except OSError as exc:
        if exc.errno in _IN_USE:
            raise ExploreError(
                f"--port {port}: in use on {host} (another server listens there; "
                "--port 0 picks a free one)"
            ) from None
        raise ExploreError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None


_IN_USE = {98, 48, 10048}  # EADDRINUSE: Linux, macOS, Windows


class _Handler(BaseHTTPRequestHandler):
    server: ExploreServer
    server_version = "replcheck-explore"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        """Quiet: the terminal shows the URL, not every request."""

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        url = urlsplit(self.path)
        explorer = self.server.explorer
        try:
            if url.path in ("/", "/index.html"):
                self._send(200, self.server.page.encode(), "text/html; charset=utf-8")
            elif url.path == "/api/state":
                self._json(200, explorer.state(self._actions(url.query)))
            elif url.path == "/api/export.itf.json":
                doc = explorer.export_itf(self._actions(url.query))
                self._json(200, doc, download="explore.itf.json")
            elif url.path == "/api/export.actions.json":
                doc = explorer.export_actions(self._actions(url.query))
                self._json(200, doc, download="explore.actions.json")
            else:
                self._json(404, {"error": f"not found: {url.path[:80]} (see docs/explore.md)"})
        except InputError as exc:
            self._json(400, {"error": str(exc)})

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """http.server's own refusals (a request line too long, a method other than GET)
        as the API's: a JSON ``error``, one line."""
        self.close_connection = True
        self._json(code, {"error": message or self.responses.get(code, ("error",))[0]})

    def _actions(self, query: str) -> list[Action]:
        values = parse_qs(query, keep_blank_values=True).get("steps", [""])
        if len(values) > 1:
            raise ExploreError("steps: give it once")
        return self.server.explorer.parse_path(values[0])

    def _json(self, status: int, body: Any, download: str | None = None) -> None:
        data = (json.dumps(body, indent=1) + "\n").encode()
        extra = {"Content-Disposition": f'attachment; filename="{download}"'} if download else {}
        self._send(status, data, "application/json", extra)

    def _send(
        self, status: int, data: bytes, kind: str, extra: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        for key, value in (extra or {}).items():
            self.send_header(key, value)
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
      button.title = a.description || a.label;
      button.addEventListener('click', function () { go(steps.concat([a.step])); });
      li.appendChild(button);
      if (a.description) li.appendChild(element('span', 'doc', a.description));
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
  window.addEventListener('hashchange', load);
  load();
})();
"""


def page_html(explorer: Explorer) -> str:
    """The page: a frame the script fills from ``/api/state``; no file or network fetch
    beyond this server's API."""
    start = escape(explorer.path_text(explorer.start))
    title = f"replcheck explore: {explorer.config.describe()}"
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{escape(title)}</title>
<style>{STYLE}{EXPLORE_STYLE}</style>
</head>
<body data-start="{start}">
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
</section>
</main>
<script>{SCRIPT}</script>
</body>
</html>
"""
