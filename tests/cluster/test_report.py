"""How a reproduction is reported (text and JSON), from a run's record: no cluster."""

from __future__ import annotations

import json
from pathlib import Path

from replcheck.checker.suites.catalogue import load_catalogue
from replcheck.cli.commands import reproduce as command
from replcheck.cluster.plan import cluster_plan
from replcheck.cluster.runner import Reproduction, StepRun
from replcheck.reproduction import ReproduceReport


def _report(tmp_path: Path, **run: object) -> ReproduceReport:
    entry = {e.id: e for e in load_catalogue()}["F3"]
    plan = cluster_plan(entry.config("4.1.0"), list(entry.steps_for("4.1.0")))
    result = Reproduction("4.1.0", tmp_path, [0], **run)  # type: ignore[arg-type]
    return ReproduceReport("4.1.0", "F3", plan, [result], tmp_path, 22.0)


def test_a_lost_record_is_named_with_kafkas_account(tmp_path: Path, capsys) -> None:
    report = _report(
        tmp_path,
        steps=[StepRun(1, "write(leader=r0)", 0.2, ["[17:00:00,000] TRACE Appended ..."])],
        writes={"m1": "acked:0"},
        final={"leader": 2, "isr": [0, 1, 2], "records": [], "end": 0},
        kafka_lines=["broker-0: [17:00:01,000] INFO Truncating to offset 0 (UnifiedLog)"],
        unplanned=["broker-0: [17:00:00,500] INFO Shrinking ISR from 0,1,2 to 0,1."],
    )
    assert report.verdict == "lost" and report.lost == 1
    command._print_report(report)
    out = capsys.readouterr().out
    assert "m1: acknowledged; MISSING in the final leader's log (broker 2" in out
    assert "Truncating to offset 0" in out
    assert "Kafka also, not a step of the trace: broker-0:" in out
    assert "LOST: 1 of 1 runs lost an acknowledged record" in out
    doc = command._json(report)
    assert json.loads(json.dumps(doc))["runs"][0]["lost"] == ["m1"]


def test_a_refused_step_keeps_the_record_and_says_why(tmp_path: Path, capsys) -> None:
    report = _report(
        tmp_path,
        writes={"m1": "acked:0"},
        final={"leader": 0, "isr": [0, 1], "records": [{"offset": 0, "value": "m1"}], "end": 1},
        refused="alter_isr: Kafka's controller: Rejecting AlterPartition request ...",
    )
    assert report.verdict == "kept" and report.runs[0].verdict == "refused"
    command._print_report(report)
    out = capsys.readouterr().out
    assert "run 1: refused (Kafka refused: alter_isr: Kafka's controller: Rejecting" in out
    assert "m1: acknowledged; present in the final leader's log" in out
    assert "KEPT: 0 of 1 runs" in out


def test_a_timeout_is_not_a_verdict_on_the_records(tmp_path: Path) -> None:
    report = _report(tmp_path, failure="shrink_isr: broker 0 did not propose removing [2]")
    assert report.verdict == "timed out"
    assert report.runs[0].lost == []  # nothing was read back
