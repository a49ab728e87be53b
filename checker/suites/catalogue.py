"""The catalogue of Kafka replication bugs and trade-offs, and the check that the model shows them.

The entries are data (``checker/suites/kafka_bugs.toml``): for each bug, the releases it
affected, the first release that fixed it, the bounds that show it and the
invariant it breaks.  :func:`run_entry` holds the model to it:

- every release in the affected range (one per distinct row of the release
  table, since releases with the same behaviour have the same state space),
  except those of the branches a fix was backported to (``backports``),
  violates the invariant at the bounds, or along the entry's pinned ``steps``;
- the fixed release, and each backport, does not: BFS at the same bounds finds nothing, or, where
  another bug of that release still breaks the invariant at those bounds (or the
  space is too large to exhaust, ``fixed_by = "replay"``), the affected release's
  counterexample replayed under the fixed release no longer violates it.

A trade-off must violate the invariant in every release; a finding (a bug of
Kafka's code that this model found) in every release of its range, and in any
fixed release it names, not.  A design rule (kind "rule") is kept by every
release of its range: broken on purpose (``Config.broken_rule``) each must
violate the invariant, and the newest, keeping it, must not.
"""

from __future__ import annotations

import time
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from replcheck.checker.explicit.bfs import bfs
from replcheck.invariants import select
from replcheck.model import KafkaReplication, make_config
from replcheck.model.errors import InputError
from replcheck.model.interface import Action
from replcheck.model.kafka.config import Config, ConfigError, read_text
from replcheck.model.kafka.releases import RELEASES, UnknownRelease, behaviour, release_name
from replcheck.traces.load import TraceError, parse_action
from replcheck.traces.replay import NotEnabled, execute
from replcheck.traces.text import describe_action

CATALOGUE = Path(__file__).with_name("kafka_bugs.toml")
KINDS = ("bug", "trade-off", "finding", "rule")


class CatalogueError(InputError):
    """A catalogue file that cannot be used; the message is one line naming the entry and key."""


@dataclass(frozen=True)
class Entry:
    id: str
    jira: str
    title: str
    kind: str
    affected: tuple[str, str]  # first and last affected release
    fixed: str | None  # first fixed release; None for a trade-off
    invariant: str
    bounds: dict[str, Any]
    mechanism: str
    steps: tuple[Action, ...] = ()  # a pinned interleaving, where BFS's shortest is another bug's
    fixed_by: str = "bfs"  # or "replay": judge the fixed release on the counterexample only
    note: str = ""
    rule: str = ""  # kind "rule": the design rule (Config.broken_rule) the entry breaks
    # Later releases whose protocol takes other steps to the same interleaving:
    # (first release, its steps), oldest first; each replaces ``steps`` from there on.
    steps_from: tuple[tuple[str, tuple[Action, ...]], ...] = ()
    # Releases inside the affected range that have a backported fix: each, and the later
    # releases of its branch (X.Y), are not affected ("3.9.1": 3.9.1 and later 3.9.x).
    backports: tuple[str, ...] = ()

    def is_affected(self, release: str) -> bool:
        """Whether ``release`` is in the affected range and has no backported fix."""
        first, last = (RELEASES.index(r) for r in self.affected)
        if not first <= RELEASES.index(release) <= last:
            return False
        return not any(
            release.split(".")[:2] == fix.split(".")[:2]
            and RELEASES.index(release) >= RELEASES.index(fix)
            for fix in self.backports
        )

    def steps_for(self, release: str) -> tuple[Action, ...]:
        """The pinned steps that apply to ``release`` (empty: BFS finds the interleaving)."""
        steps = self.steps
        for first, later in self.steps_from:
            if RELEASES.index(release) >= RELEASES.index(first):
                steps = later
        return steps

    def config(self, release: str, broken: bool = True) -> Config:
        rule = {"broken_rule": self.rule} if self.rule and broken else {}
        return make_config({**self.bounds, **rule, "mode": release})

    @property
    def affected_text(self) -> str:
        first, last = self.affected
        if self.kind == "trade-off":
            return "every release (by design)"
        if self.kind == "rule":
            return f"{first} – {last} keep the rule"
        span = first if first == last else f"{first} – {last}"
        if self.backports:
            span += " except " + ", ".join(
                f"{fix}+" if fix != _branch_last(fix) else fix for fix in self.backports
            )
        return span

    @property
    def fixed_text(self) -> str:
        """The fixed release, after the backports: "3.9.1, 4.0.1" or "—"."""
        return ", ".join((*self.backports, self.fixed)) if self.fixed else "—"


@dataclass
class Verdict:
    """What one release did: violates, holds, or could not be judged (and why)."""

    release: str
    violated: bool | None  # None: not judged (search stopped early)
    how: str  # e.g. "BFS: 11 states", "replay of 2.0.0's trace: holds"
    seconds: float = 0.0


@dataclass
class EntryResult:
    entry: Entry
    verdicts: list[Verdict] = field(default_factory=list)
    ok: bool = False
    problem: str = ""
    # The counterexample shown for the entry: (release, steps) in the last affected release.
    trace_release: str = ""
    trace: list[tuple[Action | None, Any]] = field(default_factory=list)
    message: str = ""

    @property
    def incomplete(self) -> bool:
        """No release contradicts the entry, but a search stopped before judging one."""
        return not self.problem and any(v.violated is None for v in self.verdicts)


def _branch_last(release: str) -> str:
    """The newest covered release of ``release``'s branch (X.Y)."""
    return [r for r in RELEASES if r.split(".")[:2] == release.split(".")[:2]][-1]


# ------------------------------------------------------------------ loading


def load_catalogue(path: str | Path = CATALOGUE) -> list[Entry]:
    text = read_text(path, CatalogueError, "catalogue")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise CatalogueError(f"{path}: invalid TOML ({exc})") from None
    tables = data.get("bug")
    if not isinstance(tables, list) or not tables:
        raise CatalogueError(f"{path}: no [[bug]] entries")
    entries = [_entry(path, i, t) for i, t in enumerate(tables, start=1)]
    seen: set[str] = set()
    for e in entries:
        if e.id in seen:
            raise CatalogueError(f"{path}: id {e.id!r} appears twice")
        seen.add(e.id)
    return entries


_KEYS = {
    "id",
    "jira",
    "title",
    "kind",
    "affected",
    "fixed",
    "backports",
    "invariant",
    "bounds",
    "mechanism",
    "steps",
    "steps_from",
    "fixed_by",
    "note",
    "rule",
}


def _entry(path: str | Path, index: int, t: Any) -> Entry:
    where = f"{path}: bug {index}"
    if not isinstance(t, dict):
        raise CatalogueError(f"{where}: expected a table")
    extra = sorted(set(t) - _KEYS)
    if extra:
        raise CatalogueError(f"{where}: unknown key {extra[0]!r}")
    for key in ("id", "title", "kind", "invariant", "mechanism"):
        if not isinstance(t.get(key), str) or not t[key]:
            raise CatalogueError(f"{where}: {key} must be a non-empty string")
    where = f"{path}: {t['id']}"
    if t["kind"] not in KINDS:
        raise CatalogueError(f"{where}: kind must be one of {', '.join(KINDS)}")
    affected = t.get("affected")
    if (
        not isinstance(affected, list)
        or len(affected) != 2
        or not all(isinstance(a, str) for a in affected)
    ):
        raise CatalogueError(f'{where}: affected must be ["first", "last"] releases')
    try:
        first, last = (release_name(a) for a in affected)
        fixed = release_name(t["fixed"]) if "fixed" in t else None
    except UnknownRelease as exc:
        raise CatalogueError(f"{where}: {exc}") from None
    if t["kind"] == "bug" and fixed is None:
        raise CatalogueError(f"{where}: a bug needs its first 'fixed' release")
    if t["kind"] in ("trade-off", "rule") and fixed is not None:
        raise CatalogueError(f"{where}: a {t['kind']} has no 'fixed' release")
    rule = t.get("rule", "")
    if (t["kind"] == "rule") != bool(rule):
        raise CatalogueError(f"{where}: a rule entry, and only one, names its 'rule'")
    if RELEASES.index(first) > RELEASES.index(last):
        raise CatalogueError(f"{where}: affected range {first} – {last} is backwards")
    if fixed is not None and RELEASES.index(fixed) <= RELEASES.index(last):
        raise CatalogueError(f"{where}: fixed release {fixed} is not after {last}")
    listed = t.get("backports", [])
    if not isinstance(listed, list) or not all(isinstance(b, str) for b in listed):
        raise CatalogueError(f"{where}: backports must be a list of releases")
    try:
        backports = tuple(release_name(b) for b in listed)
    except UnknownRelease as exc:
        raise CatalogueError(f"{where}: backports: {exc}") from None
    for fix in backports:
        if fixed is None or not RELEASES.index(first) < RELEASES.index(fix) < RELEASES.index(last):
            raise CatalogueError(
                f"{where}: backport {fix} is not a fixed release inside {first} – {last}"
            )
        if fix.split(".")[:2] == last.split(".")[:2]:
            raise CatalogueError(f"{where}: backport {fix} is on the last affected branch")
    bounds = t.get("bounds", {})
    if not isinstance(bounds, dict) or "mode" in bounds or "kafka" in bounds:
        raise CatalogueError(f"{where}: bounds must be a table of model keys without a release")
    try:
        make_config({**bounds, "mode": first}, f"{where}: bounds: ")
        if rule:
            make_config({**bounds, "broken_rule": rule, "mode": first}, f"{where}: rule: ")
        select([t["invariant"]])
    except (ConfigError, ValueError) as exc:
        raise CatalogueError(str(exc) if "bounds" in str(exc) else f"{where}: {exc}") from None
    actions = _actions(t.get("steps", []), f"{where}: steps")
    steps_from = t.get("steps_from", {})
    if not isinstance(steps_from, dict) or (steps_from and not actions):
        raise CatalogueError(
            f"{where}: steps_from must be a table of release = [steps], after steps"
        )
    span = RELEASES.index(first), RELEASES.index(last)
    later = []
    for name, listed in steps_from.items():
        if name not in RELEASES or not span[0] < RELEASES.index(name) <= span[1]:
            raise CatalogueError(
                f"{where}: steps_from: {name!r} is not a release of {first} – {last}"
            )
        later.append((name, _actions(listed, f"{where}: steps_from.{name}")))
    later.sort(key=lambda pair: RELEASES.index(pair[0]))
    fixed_by = t.get("fixed_by", "bfs")
    if fixed_by not in ("bfs", "replay"):
        raise CatalogueError(f'{where}: fixed_by must be "bfs" or "replay"')
    return Entry(
        id=t["id"],
        jira=str(t.get("jira", "")),
        title=t["title"],
        kind=t["kind"],
        affected=(first, last),
        fixed=fixed,
        backports=backports,
        invariant=t["invariant"],
        bounds=dict(bounds),
        mechanism=t["mechanism"],
        steps=actions,
        fixed_by=fixed_by,
        note=str(t.get("note", "")),
        rule=rule,
        steps_from=tuple(later),
    )


def _actions(listed: Any, where: str) -> tuple[Action, ...]:
    """A list of actions as text (``steps``, ``steps_from.X``); CatalogueError otherwise."""
    if not isinstance(listed, list):
        raise CatalogueError(f"{where} must be a list of actions")
    try:
        return tuple(parse_action(text, where) for text in listed)
    except (TraceError, AttributeError) as exc:
        raise CatalogueError(str(exc)) from None


# ------------------------------------------------------------------ running


def affected_releases(entry: Entry) -> list[str]:
    """One release per distinct behaviour in the affected range (the newest of each):
    releases that behave alike have the same state space and verdict."""
    first, last = (RELEASES.index(r) for r in entry.affected)
    span = [r for r in RELEASES[first : last + 1] if entry.is_affected(r)]
    newest = {behaviour(r).rules: r for r in span}
    return sorted(newest.values(), key=RELEASES.index)


def _replay(entry: Entry, release: str, actions: Sequence[Action], broken: bool = True):
    """(first violating step or None, steps run, message); raises NotEnabled."""
    model = KafkaReplication(entry.config(release, broken))
    steps = execute(model, actions)
    check = select([entry.invariant])[0].check
    for index, (_action, state) in enumerate(steps):
        message = check(state)
        if message is not None:
            return index, steps[: index + 1], message
    return None, steps, ""


def _search(entry: Entry, release: str, time_limit: float | None, broken: bool = True):
    """BFS for the entry's invariant.  bfs stops cleanly on Ctrl-C; the catalogue stops
    too (KeyboardInterrupt), so an interrupted search is not judged as unfinished."""
    model = KafkaReplication(entry.config(release, broken))
    result = bfs(model, select([entry.invariant]), time_limit=time_limit)
    if result.status == "interrupted":
        raise KeyboardInterrupt
    return result


def run_entry(entry: Entry, time_limit: float | None = None) -> EntryResult:
    """Judge one entry: see the module docstring."""
    result = EntryResult(entry)
    shown: tuple[str, list, str] | None = None
    for release in affected_releases(entry):
        start = time.monotonic()
        pinned = entry.steps_for(release)
        if pinned:
            try:
                at, steps, message = _replay(entry, release, pinned)
            except NotEnabled as exc:
                at, steps, message = None, [], ""
                how = f"pinned step {exc.step}, {describe_action(exc.action)}, is not enabled"
            else:
                held = at is None
                how = "pinned steps: hold" if held else f"pinned steps: violated at step {at}"
            violated = at is not None
        else:
            found = _search(entry, release, time_limit)
            v = found.violations.get(entry.invariant)
            violated = True if v else (False if found.exhaustive else None)
            how = (
                f"BFS: violated in {v.length} states"
                if v
                else f"BFS: holds over {found.distinct_states:,} states"
                if found.exhaustive
                else f"BFS stopped ({found.status}) after {found.distinct_states:,} states"
            )
            steps = [(s.action, s.state) for s in v.trace] if v else []
            message = v.message if v else ""
        result.verdicts.append(Verdict(release, violated, how, time.monotonic() - start))
        if violated:
            shown = (release, steps, message)
        elif violated is False and not result.problem:
            result.problem = f"{release} should violate {entry.invariant}: {how}"
    if shown is not None:
        result.trace_release, result.trace, result.message = shown
    if entry.fixed is not None:
        for fix in entry.backports:  # the branches that got the fix hold too
            result.verdicts.append(_judge_fixed(entry, shown, time_limit, result, fix))
        result.verdicts.append(_judge_fixed(entry, shown, time_limit, result))
    elif entry.rule:  # the newest release, keeping the rule
        result.verdicts.append(
            _judge_fixed(entry, shown, time_limit, result, entry.affected[1], broken=False)
        )
    result.ok = not result.problem and not result.incomplete
    return result


def _judge_fixed(
    entry: Entry,
    shown,
    time_limit,
    result: EntryResult,
    release: str | None = None,
    broken: bool = True,
) -> Verdict:
    """The fixed release (or, for a rule, the newest release keeping it) must hold."""
    release = release or entry.fixed
    assert release is not None
    start = time.monotonic()
    violated: bool | None
    how = "" if broken else f"keeping {entry.rule}: "
    pinned = entry.steps_for(release)
    if not pinned and entry.fixed_by == "bfs":
        found = _search(entry, release, time_limit, broken)
        v = found.violations.get(entry.invariant)
        if not v and found.exhaustive:
            return Verdict(
                release,
                False,
                f"{how}BFS: holds over {found.distinct_states:,} states",
                time.monotonic() - start,
            )
        how += (
            f"BFS: violated in {v.length} states along another interleaving; "
            if v
            else f"BFS stopped ({found.status}); "
        )
    actions = list(pinned) or [a for a, _s in (shown[1] if shown else [])[1:]]
    what = "pinned steps" if pinned else f"{shown[0] if shown else '?'}'s counterexample"
    if not actions:
        violated = None
        how += "no counterexample to replay"
    else:
        try:
            at, _steps, _message = _replay(entry, release, actions, broken)
            violated = at is not None
            how += f"{what} replayed: " + (f"violated at step {at}" if violated else "holds")
        except NotEnabled as exc:
            violated = False
            how += (
                f"{what} replayed: impossible here (step {exc.step}, "
                f"{describe_action(exc.action)}, is not enabled)"
            )
    if violated and not result.problem:
        what = "fixed release" if broken else f"{entry.rule} kept, release"
        result.problem = f"{what} {release} should not violate {entry.invariant}: {how}"
    return Verdict(release, violated, how, time.monotonic() - start)
