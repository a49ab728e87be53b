"""``replcheck explore``'s page: one HTML document with its style and script inline.

The script draws each state from the server's ``/api/state`` and fetches nothing
else, so the page works offline and behind any proxy.
"""

from __future__ import annotations

from html import escape

from replcheck.traces.explore import FIND_MAX_STATES, FIND_TIME_LIMIT, MAX_BODY_BYTES, Explorer
from replcheck.traces.html import STYLE

__all__ = ["page_html"]


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
