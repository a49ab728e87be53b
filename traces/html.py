"""A counterexample as one self-contained HTML page: a timeline and the step table.

The timeline has one lane per replica (and one for the controller), one column
per step.  Each cell shows the replica's role and epoch, its log as boxes
coloured by the epoch each record was written in, its HW and LEO marks, and
whether it is in the controller's ISR; crashed replicas are greyed out.  The
step where the invariant breaks is highlighted, and the page opens scrolled to
it (a long trace would otherwise show its first steps only).  No scripts or
styles are fetched: everything is inline, so the file can be attached to a
bug report.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

from replcheck.model.interface import Action
from replcheck.model.kafka.config import Config
from replcheck.model.kafka.state import (
    NO_LEADER,
    Replica,
    State,
    members,
    record_epoch,
    record_id,
    record_name,
)
from replcheck.traces.replay import ReplayResult
from replcheck.traces.text import (
    controller_cell,
    describe_action,
    disk_replaced,
    inflight_phrase,
    state_changes,
)

EPOCH_COLOURS = ["#9e9e9e", "#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#edc948", "#76b7b2"]

STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 1rem; color: #222; }
h1 { font-size: 1.3rem; margin: 0 0 .3rem; }
.config { color: #555; font-family: monospace; }
.verdict { padding: .5rem .8rem; border-radius: 4px; margin: .5rem 0; }
.verdict.violated { background: #fde2e2; border-left: 4px solid #c62828; }
.verdict.ok { background: #e3f2e1; border-left: 4px solid #2e7d32; }
.verdict.diverged { background: #fff3cd; border-left: 4px solid #b8860b; }
.layout { display: grid; grid-template-columns: minmax(0, 3fr) minmax(320px, 2fr); gap: 1rem;
  align-items: start; }
.steps { max-height: 75vh; overflow-y: auto; box-sizing: border-box; }
#step-table thead th { position: sticky; top: 0; background: #fff; z-index: 1; }
@media (max-width: 1100px) {
  .layout { grid-template-columns: 1fr; }
  .steps { max-height: none; }
}
.timeline { overflow-x: auto; border: 1px solid #ddd; }
table { border-collapse: collapse; }
.lanes { border-collapse: separate; border-spacing: 0; }  /* collapsed borders break sticky */
.lanes th, .lanes td { border: solid #e3e3e3; border-width: 0 1px 1px 0; padding: 4px 5px;
  vertical-align: top; }
.lanes thead th { background: #fafafa; font-weight: normal; font-size: 12px; }
.lanes tbody th { text-align: left; white-space: nowrap; }
.lanes .lane-head { position: sticky; left: 0; z-index: 2; background: #fafafa;
  box-shadow: inset -1px 0 0 #ccc; }
.cell { font-size: 12px; min-width: 76px; }
.cell.changed { box-shadow: inset 0 0 0 2px #1565c0; }
.cell.down { background: repeating-linear-gradient(45deg, #eee, #eee 4px, #f8f8f8 4px, #f8f8f8 8px);
  color: #666; }
.role { font-weight: 600; }
.role.leader { color: #1b5e20; }
.nw { white-space: nowrap; }
.log { display: flex; align-items: stretch; flex-wrap: nowrap; margin: 3px 0 3px 6px;
  min-height: 20px; }
.rec { display: inline-block; min-width: 24px; padding: 1px 3px; margin-right: 1px; color: #fff;
  text-align: center; border-radius: 2px; font-family: monospace; font-size: 11px; }
.rec.ghost { background: transparent; border: 1px dashed #c62828; color: #c62828; }
.mark { display: inline-block; width: 0; border-left: 2px solid; margin: -2px 2px;
  position: relative; }
.mark span { position: absolute; top: 100%; left: -6px; font-size: 9px; white-space: nowrap; }
/* the mark at the log's end labels leftwards, under its records, so it stays in the cell */
.log > .mark:last-child:not(:first-child) span { left: auto; right: -2px; }
.mark.hw { border-color: #c62828; }
.mark.leo { border-color: #1565c0; border-left-style: dotted; }
.mark.hw.leo { border-left: 3px double #6a1b9a; }
.legend .mark { height: 12px; margin: 0 4px; }
.nums { font-family: monospace; font-size: 11px; color: #444; margin-top: 12px; }
.cell.down .nums { color: #555; }
.isr { font-size: 10px; border-radius: 3px; padding: 0 3px; display: inline-block;
  white-space: nowrap; }
.isr.in { background: #e8f5e9; color: #1b5e20; }
.isr.out { background: #fbe9e7; color: #bf360c; }
.inflight { color: #6a1b9a; font-size: 11px; }
.crash-note { color: #b71c1c; font-weight: 600; white-space: nowrap; }
.broken { background: #ffebee !important; }
.cell.broken { box-shadow: inset 0 0 0 3px #c62828; }
.lanes thead th.broken { background: #c62828 !important; color: #fff; }
#step-table { width: 100%; font-size: 13px; }
#step-table th, #step-table td { border-bottom: 1px solid #eee; padding: 4px 6px; text-align: left;
  vertical-align: top; }
#step-table td.action { font-family: monospace; white-space: nowrap; }
#step-table ul { margin: 0; padding-left: 1.1rem; color: #444; }
.step-row.selected, .selected { outline: 2px solid #1565c0; }
.legend { margin: .5rem 0; font-size: 12px; }
.legend .rec { margin-right: 6px; }
"""

# Runs at the end of the body.  On load the timeline is scrolled so that the
# step of interest (the violation, or where a replay diverged) is its last
# fully visible column with as many whole columns before it as fit: a long
# trace must not open on its first steps with the violation behind a scroll.
# The step table, a scroll box of its own beside the timeline, shows that row.
# A resize before the reader has scrolled or clicked (a window opening at its
# final size after load) does it again.
SCRIPT = """
function offsetIn(box, el) {
  var b = box.getBoundingClientRect(), r = el.getBoundingClientRect();
  return {
    left: r.left - b.left - box.clientLeft + box.scrollLeft,
    right: r.right - b.left - box.clientLeft + box.scrollLeft,
    top: r.top - b.top - box.clientTop + box.scrollTop,
    bottom: r.bottom - b.top - box.clientTop + box.scrollTop
  };
}
function showColumn(step) {
  var tl = document.getElementById('timeline');
  var col = tl.querySelector('thead th[data-step="' + step + '"]');
  if (!col) return;
  var lane = tl.querySelector('thead .lane-head');
  var covered = lane ? lane.getBoundingClientRect().width : 0;
  var c = offsetIn(tl, col);
  if (c.left - covered >= tl.scrollLeft && c.right <= tl.scrollLeft + tl.clientWidth) return;
  var next = col.nextElementSibling;
  var right = c.right + (next ? Math.min(offsetIn(tl, next).right - c.right, 24) : 4);
  var target = Math.max(0, right - tl.clientWidth);
  var heads = tl.querySelectorAll('thead th[data-step]');
  for (var i = 0; i < heads.length; i++) {  // start on a whole column, not half of one
    var left = offsetIn(tl, heads[i]).left - covered;
    if (left >= target) { target = Math.min(left, c.left - covered); break; }
  }
  var room = tl.scrollWidth - tl.clientWidth;  // the last column: room after it to start whole
  if (target > room) tl.style.paddingRight = (target - room) + 'px';
  tl.scrollLeft = Math.max(0, target);
}
function showRow(step) {
  var box = document.querySelector('.steps');
  var row = box.querySelector('tr.step-row[data-step="' + step + '"]');
  if (!row || box.scrollHeight <= box.clientHeight) return;
  var head = box.querySelector('thead');
  var top = head ? head.getBoundingClientRect().height : 0;
  var r = offsetIn(box, row);
  if (r.top - top < box.scrollTop) { box.scrollTop = r.top - top; return; }
  if (r.bottom <= box.scrollTop + box.clientHeight) return;
  var target = r.bottom - box.clientHeight + 4;
  var rows = box.querySelectorAll('tr.step-row');
  for (var i = 0; i < rows.length; i++) {  // start on a whole row, not under the header
    var t = offsetIn(box, rows[i]).top - top;
    if (t >= target) { target = Math.min(t, r.top - top); break; }
  }
  var room = box.scrollHeight - box.clientHeight;
  if (target > room) box.style.paddingBottom = (target - room) + 'px';
  box.scrollTop = target;
}
document.querySelectorAll('[data-step]').forEach(function (el) {
  el.addEventListener('click', function () {
    var step = el.getAttribute('data-step');
    document.querySelectorAll('.selected').forEach(function (x) {
      x.classList.remove('selected');
    });
    document.querySelectorAll('[data-step="' + step + '"]').forEach(function (x) {
      x.classList.add('selected');
    });
    showColumn(step);
    showRow(step);
  });
});
(function () {
  var focus = document.getElementById('timeline').getAttribute('data-focus');
  if (focus === null) return;
  var touched = false;  // once the reader scrolls or clicks, the page stays where they put it
  ['wheel', 'mousedown', 'keydown', 'touchstart'].forEach(function (name) {
    window.addEventListener(name, function () { touched = true; }, true);
  });
  function open() {
    var tl = document.getElementById('timeline'), steps = document.querySelector('.steps');
    tl.style.paddingRight = '';
    steps.style.paddingBottom = '';
    tl.scrollLeft = 0;
    steps.scrollTop = 0;
    showColumn(focus);
    showRow(focus);
  }
  open();
  window.addEventListener('resize', function () { if (!touched) open(); });
})();
"""


def epoch_colour(epoch: int) -> str:
    return EPOCH_COLOURS[epoch % len(EPOCH_COLOURS)]


def _record(record: int, offset: int) -> str:
    epoch = record_epoch(record)
    title = f"{record_name(record)} at offset {offset} (written in epoch {epoch})"
    return (
        f'<span class="rec e{epoch}" style="background:{epoch_colour(epoch)}" '
        f'title="{escape(title)}">m{record_id(record)}</span>'
    )


def _mark(kind: str, value: int) -> str:
    label = kind.upper()
    return f'<span class="mark {kind}" title="{label} {value}"><span>{label}</span></span>'


def log_html(r: Replica, show_hw: bool = True) -> str:
    """The log as epoch-coloured boxes with the HW and LEO marks between them."""
    parts = []
    leo = len(r.log)
    end = max(leo, r.hw if show_hw else 0)
    for offset in range(end + 1):
        if show_hw and offset == r.hw == leo:
            parts.append(
                f'<span class="mark hw leo" title="HW {leo} = LEO {leo}"><span>HW=LEO</span></span>'
            )
        elif show_hw and offset == r.hw:
            parts.append(_mark("hw", r.hw))
        elif offset == leo:
            parts.append(_mark("leo", leo))
        if offset < leo:
            parts.append(_record(r.log[offset], offset))
        elif offset < end:  # HW beyond the log end: offsets the HW claims but the log lacks
            parts.append(f'<span class="rec ghost" title="offset {offset}: no record">?</span>')
    return f'<div class="log">{"".join(parts)}</div>'


def replica_html(
    i: int,
    r: Replica,
    s: State,
    prev: State | None,
    step: int,
    broken: bool,
    detail: bool = False,
) -> str:
    """One replica in one step: role and epoch, log, HW and LEO, ISR membership.
    ``detail`` adds what a timeline column has no room for: the checkpointed HW, the
    response in flight, and a leader's view of its followers (``replcheck explore``)."""
    classes = ["cell"]
    changed = prev is not None and prev.replicas[i] != r
    if changed:
        classes.append("changed")
    if broken:
        classes.append("broken")
    in_isr = bool(s.ctrl_isr >> i & 1)
    isr = (
        f'<span class="isr {"in" if in_isr else "out"}">{"ISR" if in_isr else "not in ISR"}</span>'
    )
    if not r.alive:
        classes.append("down")
        crashed_now = prev is not None and prev.replicas[i].alive
        stopped = "shut down cleanly" if r.clean_shutdown else "crashed"
        note = f'<div class="crash-note">&#10005; {stopped}</div>' if crashed_now else ""
        if prev is not None and disk_replaced(prev.replicas[i], r):
            note = '<div class="crash-note">disk replaced</div>'
        # Short unbreakable pieces, one a line: the column stays narrow and nothing is cut.
        body = (
            f'{note}<div class="role">DOWN</div>{log_html(r, show_hw=False)}'
            f'<div class="nums"><div class="nw" title="log end offset kept on disk">'
            f'disk LEO {len(r.log)}</div><div class="nw" title="HW checkpoint">'
            f"HW ckpt {r.hw_checkpoint}</div></div>{isr}"
        )
    else:
        if r.leader == i:
            parts, role_class = [f"leader e{r.epoch}"], "leader"
            if r.isr:
                parts.append("isr{" + ",".join(f"r{m}" for m in members(r.isr)) + "}")
        elif r.leader == NO_LEADER:
            parts, role_class = [f"no leader e{r.epoch}"], "none"
        else:
            parts, role_class = [f"follows r{r.leader} e{r.epoch}"], "follower"
        # each part stays whole; the ISR may go to its own line in a narrow column
        role = " ".join(f'<span class="nw">{escape(p)}</span>' for p in parts)
        restarted = prev is not None and not prev.replicas[i].alive
        note = '<div class="crash-note">restarted</div>' if restarted else ""
        body = (
            f'{note}<div class="role {role_class}">{role}</div>{log_html(r)}'
            f'<div class="nums nw">HW {r.hw} &middot; LEO {len(r.log)}</div>{isr}'
        )
        if detail:
            body += _replica_detail(i, r)
    return f'<td class="{" ".join(classes)}" data-step="{step}" data-replica="{i}">{body}</td>'


def _replica_detail(i: int, r: Replica) -> str:
    """The checkpointed HW, the response in flight, and a leader's view of its followers."""
    lines = [f'<div class="nw" title="HW checkpoint">HW ckpt {r.hw_checkpoint}</div>']
    if r.leader == i and r.remote_leo:
        seen = ", ".join(
            f"r{f}={'?' if leo < 0 else leo}" for f, leo in enumerate(r.remote_leo) if f != i
        )
        lines.append(
            f'<div class="nw" title="followers\' LEOs as this leader saw them">'
            f"followers' LEO {escape(seen)}</div>"
        )
    if r.leader == i and r.pending_isr:
        wanted = ",".join(f"r{m}" for m in members(r.pending_isr))
        lines.append(f'<div class="nw">awaits ISR {{{wanted}}}</div>')
    if r.leader == i and r.alter_item and not r.pending_isr:
        lines.append(
            '<div class="nw" title="its last AlterPartition request is unanswered: it proposes '
            'no ISR change until the controller answers (KAFKA-12686)">request unanswered</div>'
        )
    if r.leader == i and r.record_owed:
        lines.append(
            '<div class="nw" title="its ISR came from the AlterPartition response; '
            'the metadata record of that change is still to be replayed">record owed</div>'
        )
    if r.inflight:
        lines.append(f'<div class="inflight">{escape(inflight_phrase(r.inflight))}</div>')
    return f'<div class="nums detail">{"".join(lines)}</div>'


def controller_html(
    s: State, prev: State | None, step: int, broken: bool, detail: bool = False
) -> str:
    """The controller in one step: leader, epoch, ISR (ELR), what is committed; ``detail``
    adds the brokers it believes alive and the ISR changes it has yet to handle."""
    committed = " ".join(map(record_name, s.committed)) or "nothing"
    changed = prev is not None and controller_cell(prev) != controller_cell(s)
    ccls = "cell" + (" changed" if changed else "") + (" broken" if broken else "")
    extra = ""
    if detail:
        live = ",".join(f"r{m}" for m in members(s.ctrl_live))
        extra = f'<div class="nums">live: {{{live}}}</div>'
        for sender, epoch, _ok, isr, _restarted in s.alter_requests:
            wanted = ",".join(f"r{m}" for m in members(isr))
            extra += (
                f'<div class="inflight">in flight: r{sender} asks for ISR {{{wanted}}} '
                f"(epoch {epoch})</div>"
            )
    return (
        f'<td class="{ccls}" data-step="{step}"><div class="role">'
        f"{escape(controller_cell(s))}</div>"
        f'<div class="nums">committed: {escape(committed)}</div>{extra}</td>'
    )


def legend_html(epochs: Sequence[int]) -> str:
    """The key to the colours and marks."""
    boxes = "".join(
        f'<span class="rec" style="background:{epoch_colour(e)}">epoch {e}</span>' for e in epochs
    )
    return (
        f"records by the epoch they were written in: {boxes}\n"
        '<span class="mark hw"></span>HW &nbsp; <span class="mark leo"></span>LEO &nbsp;\n'
        '<span class="mark hw leo"></span>HW = LEO &nbsp;\n'
    )


def render_state(s: State, prev: State | None, action: Action | None, step: int) -> str:
    """One state as one column of the timeline, in detail: a lane per replica and the
    controller's; what the step to it changed is outlined (``replcheck explore``)."""
    name = escape(describe_action(action) if action else "initial state")
    rows = [
        f'<tr class="lane" data-replica="{i}"><th class="lane-head">r{i}</th>'
        f"{replica_html(i, r, s, prev, step, False, detail=True)}</tr>"
        for i, r in enumerate(s.replicas)
    ]
    rows.append(
        '<tr class="lane controller"><th class="lane-head">controller</th>'
        f"{controller_html(s, prev, step, False, detail=True)}</tr>"
    )
    epochs = sorted({record_epoch(x) for r in s.replicas for x in r.log})
    return (
        f'<div class="legend">{legend_html(epochs)}blue outline: changed by the last step</div>'
        f'<table class="lanes state"><thead><tr><th class="lane-head">step</th>'
        f'<th data-step="{step}">{step}<br><small>{name}</small></th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def render_plain_state(state: Any, prev: Any, action_text: str, step: int) -> str:
    """A state of a model without a view of its own (the TLA+ spec): its fields as a
    table, those the last step changed outlined."""
    rows = []
    for name, value in zip(state._fields, state, strict=True):
        changed = prev is not None and getattr(prev, name) != value
        cls = "cell changed" if changed else "cell"
        rows.append(
            f'<tr class="field" data-field="{escape(name)}"><th class="lane-head">'
            f'{escape(name)}</th><td class="{cls}">{escape(repr(value))}</td></tr>'
        )
    return (
        '<div class="legend">blue outline: changed by the last step</div>'
        '<table class="lanes state plain"><thead><tr><th class="lane-head">field</th>'
        f'<th data-step="{step}">{step}<br><small>{escape(action_text)}</small></th></tr>'
        f"</thead><tbody>{''.join(rows)}</tbody></table>"
    )


LEGEND_KEY = "blue outline: changed at this step; red: the invariant breaks here"


def render_steps(
    config: Config,
    steps: Sequence[tuple[Action | None, State]],
    *,
    title: str,
    verdict: str,
    verdict_class: str,
    broken_step: int | None,
    focus_step: int | None = None,
) -> str:
    """The page for a list of (action, state) steps.

    ``focus_step`` (default: ``broken_step``) is the step the page opens on:
    the timeline is scrolled to bring its column into view.
    """
    if focus_step is None:
        focus_step = broken_step
    n = config.replicas
    heads, lanes, ctrl, rows = [], [[] for _ in range(n)], [], []
    prev: State | None = None
    for step, (action, s) in enumerate(steps):
        broken = step == broken_step
        cls = ' class="broken"' if broken else ""
        name = escape(action.name if action else "initial")
        heads.append(f'<th data-step="{step}"{cls}>{step}<br><small>{name}</small></th>')
        for i, r in enumerate(s.replicas):
            lanes[i].append(replica_html(i, r, s, prev, step, broken))
        ctrl.append(controller_html(s, prev, step, broken))
        changes = state_changes(prev, s) if prev is not None else ["initial state"]
        items = "".join(f"<li>{escape(c)}</li>" for c in changes)
        text = describe_action(action) if action else "initial state"
        row_class = "step-row broken" if broken else "step-row"
        rows.append(
            f'<tr class="{row_class}" data-step="{step}"><td>{step}</td>'
            f'<td class="action">{escape(text)}</td><td><ul>{items}</ul></td></tr>'
        )
        prev = s
    body_rows = [
        f'<tr class="lane" data-replica="{i}"><th class="lane-head">r{i}</th>{"".join(cells)}</tr>'
        for i, cells in enumerate(lanes)
    ]
    body_rows.append(
        f'<tr class="lane controller"><th class="lane-head">controller</th>{"".join(ctrl)}</tr>'
    )
    focus = f' data-focus="{focus_step}"' if focus_step is not None else ""
    epochs = sorted({record_epoch(x) for _, s in steps for r in s.replicas for x in r.log})
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{escape(title)}</title>
<style>{STYLE}</style>
</head>
<body>
<header>
<h1>{escape(title)}</h1>
<div class="config">{escape(config.describe())}</div>
<p id="verdict" class="verdict {verdict_class}">{escape(verdict)}</p>
<div class="legend">{legend_html(epochs)}{LEGEND_KEY}</div>
</header>
<main class="layout">
<section class="timeline" id="timeline"{focus}>
<table class="lanes">
<thead><tr><th class="lane-head">step</th>{"".join(heads)}</tr></thead>
<tbody>
{chr(10).join(body_rows)}
</tbody>
</table>
</section>
<section class="steps">
<table id="step-table">
<thead><tr><th>step</th><th>action</th><th>what changed</th></tr></thead>
<tbody>
{chr(10).join(rows)}
</tbody>
</table>
</section>
</main>
<script>{SCRIPT}</script>
</body>
</html>
"""


def render_html(result: ReplayResult) -> str:
    """The page for a replayed trace: its steps, the violation, or where it diverged."""
    trace = result.trace
    inv = result.invariant
    title = _title(inv) if inv else "replcheck: trace"
    focus = None
    if result.divergence is not None:
        div = result.divergence
        verdict, cls = f"The trace diverges at step {div.step}: {div.reason}", "diverged"
        focus = min(div.step, len(result.steps) - 1)
    elif inv is not None and result.broken_step is not None:
        message = result.message or result.first_violated[inv][1]
        verdict, cls = _violated(inv, result.broken_step, message), "violated"
    else:
        verdict, cls = "No invariant is violated along this trace.", "ok"
    return render_steps(
        trace.config,
        result.steps,
        title=title,
        verdict=verdict,
        verdict_class=cls,
        broken_step=result.broken_step,
        focus_step=focus,
    )


def render_violation(
    config: Config,
    steps: Sequence[tuple[Action | None, State]],
    invariant: str,
    message: str,
) -> str:
    """The page for a search's counterexample, whose last state is the first to break it.

    The same page ``replay --html`` writes for the trace, without re-executing it:
    ``compare --trace-dir`` puts one beside each ITF file, which a browser cannot show.
    """
    last = len(steps) - 1
    return render_steps(
        config,
        steps,
        title=_title(invariant),
        verdict=_violated(invariant, last, message),
        verdict_class="violated",
        broken_step=last,
    )


def _title(invariant: str) -> str:
    return f"replcheck: counterexample to {invariant}"


def _violated(invariant: str, step: int, message: str) -> str:
    return f"{invariant} is violated at step {step}: {message}"
