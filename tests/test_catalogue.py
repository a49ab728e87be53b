"""The bug catalogue: every entry shows its bug in exactly the releases it names, a wrong
entry fails, a bad catalogue file is one line and exit 2, and docs/kafka-bugs.md is fresh."""

from __future__ import annotations

import json

import pytest

from replcheck.checker.suites.catalogue import (
    CatalogueError,
    affected_releases,
    load_catalogue,
    run_entry,
)
from replcheck.cli.main import main
from replcheck.model.kafka.releases import RELEASES, behaviour
from tests.conftest import regenerate

ENTRIES = {e.id: e for e in load_catalogue()}
# Entries that take more than a second or two (BFS on 3 replicas, or at 4 epochs):
# the slow run checks them through the generated page.
SLOW = {"A2", "A3b", "A7", "A8"}


def test_the_catalogue_covers_the_reference_list():
    ids = set(ENTRIES)
    assert {f"A{i}" for i in range(1, 14)} <= ids  # A14 is discussed in the page's notes
    assert {"B1", "B2", "B3", "B4", "B5", "B6"} <= ids
    for e in ENTRIES.values():
        if e.kind == "bug":
            assert e.fixed is not None
            assert RELEASES.index(e.fixed) == RELEASES.index(e.affected[1]) + 1
        if e.kind == "trade-off":
            assert e.fixed is None and e.affected == (RELEASES[0], RELEASES[-1])
        if e.kind == "rule":
            assert e.fixed is None and e.rule and e.affected[1] == RELEASES[-1]


def test_later_releases_take_their_own_pinned_steps():
    f1 = ENTRIES["F1"]  # the epoch exchange until 2.7, truncation on fetch from 2.8.0
    names = {r: [a.name for a in f1.steps_for(r)] for r in ("2.7.2", "2.8.0", "3.4.0", "3.9.1")}
    assert "epoch_request" in names["2.7.2"] and "epoch_request" not in names["2.8.0"]
    assert "diverging_truncate" in names["3.4.0"]  # KAFKA-14704: a separate step
    assert "diverging_truncate" not in names["3.9.1"]


def test_one_release_per_behaviour_is_checked():
    chosen = affected_releases(ENTRIES["A9"])  # 0.10.2 to 2.1.1
    assert chosen[0] == "0.10.2" and chosen[-1] == "2.1.1"
    rules = {behaviour(r).rules for r in chosen}
    assert len(rules) == len(chosen) > 1  # no two alike...
    span = RELEASES[: RELEASES.index("2.1.1") + 1]
    assert {behaviour(r).rules for r in span} == rules  # ...and none of the range left out


def test_the_catalogue_reaches_4_4_and_judges_f4_fixed_in_4_3():
    entries = ENTRIES
    assert entries["F2"].affected == ("3.3.0", "4.4.0")
    assert entries["F3"].affected == ("3.3.0", "4.4.0")
    f4 = entries["F4"]
    assert (f4.affected, f4.fixed) == (("4.0.0", "4.2.2"), "4.3.0")
    # one release per behaviour: 4.0.0, 4.0.1 - 4.0.2 (KAFKA-18991), 4.1.0, 4.1.1 - 4.2.2
    # (newest of each)
    assert affected_releases(f4) == ["4.0.0", "4.0.2", "4.1.0", "4.2.2"]
    assert affected_releases(entries["F3"])[-3:] == ["4.1.0", "4.2.2", "4.4.0"]
    assert entries["A13"].affected[1] == entries["B6"].affected[1] == "4.0.2"
    result = run_entry(f4)
    assert result.ok, result.problem
    assert [(v.release, v.violated) for v in result.verdicts] == [
        ("4.0.0", True),
        ("4.0.2", True),
        ("4.1.0", True),
        ("4.2.2", True),
        ("4.3.0", False),
    ]


def test_a_fix_backported_into_the_range_leaves_its_branch_out():
    """C1 (KAFKA-18991): fixed in 3.9.1 and 4.0.1 (mainline 4.1.0), so 2.8.0 to 4.0.0 are
    affected except 3.9.1, which is judged as a fixed release."""
    c1 = ENTRIES["C1"]
    assert (c1.affected, c1.fixed, c1.backports) == (("2.8.0", "4.0.0"), "4.0.1", ("3.9.1",))
    assert c1.is_affected("3.9.0") and c1.is_affected("4.0.0") and c1.is_affected("2.8.0")
    assert not c1.is_affected("3.9.1") and not c1.is_affected("2.7.2")
    chosen = affected_releases(c1)
    assert "3.9.1" not in chosen and chosen[-2:] == ["3.9.0", "4.0.0"]
    assert c1.affected_text == "2.8.0 – 4.0.0 except 3.9.1"
    assert c1.fixed_text == "3.9.1, 4.0.1"


def test_a_backport_outside_the_range_is_refused(tmp_path):
    text = CORRECT_C1.replace('backports = ["3.9.1"]', 'backports = ["2.7.2"]')
    with pytest.raises(CatalogueError, match="backport 2.7.2 is not a fixed release inside"):
        load_catalogue(_catalogue(tmp_path, text))


CORRECT_C1 = """
[[bug]]
id = "X4"
title = "a backported fix"
kind = "bug"
affected = ["2.8.0", "4.0.0"]
fixed = "4.0.1"
backports = ["3.9.1"]
invariant = "consistent-logs"
bounds = { replicas = 3, records = 1, epochs = 3, crashes = 0 }
mechanism = "none"
"""


@pytest.mark.parametrize("entry_id", sorted(set(ENTRIES) - SLOW))
def test_entry_behaves_as_catalogued(entry_id):
    result = run_entry(ENTRIES[entry_id])
    assert result.ok, result.problem
    verdicts = result.verdicts[:-1] if result.entry.rule else result.verdicts
    fixed = (result.entry.fixed, *result.entry.backports)
    affected = [v for v in verdicts if v.release not in fixed]
    assert all(v.violated is False for v in verdicts if v.release in result.entry.backports)
    assert affected and all(v.violated for v in affected)
    if result.entry.rule:  # the newest release, keeping the rule, holds
        assert result.verdicts[-1].violated is False
    if result.entry.fixed:
        assert result.verdicts[-1].release == result.entry.fixed
        assert result.verdicts[-1].violated is False
    assert result.trace and result.message  # the counterexample shown on the page


def _catalogue(tmp_path, text: str) -> str:
    path = tmp_path / "bugs.toml"
    path.write_text(text, encoding="utf-8")
    return str(path)


WRONG = """
[[bug]]
id = "X1"
title = "claims 2.1.0 loses data at bounds where it does not"
kind = "bug"
affected = ["2.1.0", "2.1.0"]
fixed = "2.1.1"
invariant = "no-committed-data-loss"
bounds = { replicas = 2, records = 1, epochs = 2, crashes = 1 }
mechanism = "none"

[[bug]]
id = "X2"
title = "claims unclean election is fixed in 2.2.0"
kind = "bug"
affected = ["2.1.0", "2.1.1"]
fixed = "2.2.0"
invariant = "no-committed-data-loss"
bounds = { replicas = 2, records = 1, epochs = 2, crashes = 1, unclean_election = true }
mechanism = "none"

[[bug]]
id = "X3"
title = "pinned steps that break nothing"
kind = "bug"
affected = ["0.10.2", "0.10.2"]
fixed = "0.11.0"
invariant = "no-committed-data-loss"
bounds = { replicas = 2, records = 1, epochs = 2, crashes = 1 }
steps = ["write(leader=r0)"]
mechanism = "none"
"""


def test_a_wrong_entry_fails(tmp_path, capsys):
    path = _catalogue(tmp_path, WRONG)
    assert main(["catalogue", "--file", path]) == 1
    out = capsys.readouterr().out
    lines = {line.split()[1]: line for line in out.splitlines() if line[:4] in ("ok  ", "FAIL")}
    assert all(lines[i].startswith("FAIL") for i in ("X1", "X2", "X3"))
    assert "2.1.0 should violate no-committed-data-loss: BFS: holds over" in out
    assert "fixed release 2.2.0 should not violate no-committed-data-loss" in out
    assert "0.10.2 should violate no-committed-data-loss: pinned steps: hold" in out
    assert "0 behave as catalogued, 3 do not" in out


def test_json_report(tmp_path, capsys):
    assert main(["catalogue", "--only", "A1", "--only", "A11", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["passed"] is True and [e["id"] for e in doc["entries"]] == ["A1", "A11"]
    a1 = doc["entries"][0]
    assert [v["release"] for v in a1["verdicts"]] == ["0.10.2", "0.11.0"]
    assert [v["violated"] for v in a1["verdicts"]] == [True, False]


def test_out_writes_replayable_counterexamples(tmp_path, capsys):
    out = tmp_path / "traces"
    assert main(["catalogue", "--only", "A4", "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["replay", str(out / "A4.itf.json")]) == 0
    assert "ends in the recorded violation" in capsys.readouterr().out


BAD = [
    ("[[bug]\n", "invalid TOML"),
    ("x = 1\n", "no [[bug]] entries"),
    ('[[bug]]\nid = "A"\n', "title must be a non-empty string"),
    (WRONG.replace('fixed = "2.1.1"', 'fixed = "2.0.0"'), "fixed release 2.0.0 is not after 2.1.0"),
    (WRONG.replace('fixed = "2.1.1"', 'fixed = "9.9.9"'), "newer than this model covers"),
    (WRONG.replace('fixed = "2.1.1"\n', "", 1), "a bug needs its first 'fixed' release"),
    (WRONG.replace("records = 1, epochs = 2, crashes = 1 }", "records = -1 }", 1), "records"),
    (WRONG.replace('kind = "bug"', 'kind = "feature"', 1), "kind must be one of"),
    (WRONG.replace('["write(leader=r0)"]', '["teleport(r0)"]'), "unknown action 'teleport'"),
    (WRONG.replace('mechanism = "none"', 'mechanism = "none"\nseverity = 3', 1), "unknown key"),
    (WRONG.replace('id = "X2"', 'id = "X1"'), "id 'X1' appears twice"),
    (
        WRONG.replace('steps = ["write(leader=r0)"]', 'steps = []\nsteps_from.x = ["a"]'),
        "steps_from must be a table of release = [steps], after steps",
    ),
    (
        WRONG.replace(
            'steps = ["write(leader=r0)"]', 'steps = ["write(r0)"]\nsteps_from."2.1.0" = []'
        ),
        "steps_from: '2.1.0' is not a release of 0.10.2 – 0.10.2",
    ),
]


@pytest.mark.parametrize(("text", "fragment"), BAD)
def test_bad_catalogue_is_one_line_and_exit_2(tmp_path, capsys, text, fragment):
    assert main(["catalogue", "--file", _catalogue(tmp_path, text)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and fragment in err, err


def test_unknown_only_is_exit_2(capsys):
    assert main(["catalogue", "--only", "A99"]) == 2
    assert "no entry 'A99'" in capsys.readouterr().err


@pytest.mark.ci_always
@pytest.mark.slow  # one to two minutes: it reruns every entry; CI runs it first
def test_committed_bug_page_matches_the_model():
    gen, files, stale = regenerate("make_bugs.py")
    assert not stale, f"stale: {stale}; run: python docs/make_bugs.py"
    assert "does not behave as catalogued" not in files[gen.PAGE]
