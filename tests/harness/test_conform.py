"""replcheck conform: model traces run on Kafka's own classes (replcheck.harness).

The cases that run Kafka need Java and Maven and Maven Central (Kafka's jars are
fetched on first use, then cached): they carry the ``kafka_jvm`` mark, skip with the
reason where either is missing, and run in CI as a step of their own
(``pytest -m kafka_jvm``).  The rest check what is refused before any JVM starts.
"""

from __future__ import annotations

import shutil

import pytest

import replcheck
from replcheck.cli.main import main
from replcheck.harness.build import HarnessUnavailable, family_of
from replcheck.harness.compare import _in_flight
from replcheck.harness.jvm import _failure
from replcheck.model.errors import InputError
from replcheck.model.kafka.replication import KafkaReplication
from replcheck.model.kafka.state import State

HAVE_JVM = shutil.which("java") is not None and shutil.which("mvn") is not None
needs_jvm = pytest.mark.skipif(not HAVE_JVM, reason="conform needs java and mvn on PATH")
RELEASE = "4.1.0"

# check --kafka 4.1.0's shortest loss (F3 on two replicas): the leader replays the record
# of the shrink it adopted from the AlterPartition response, dropping r1's pending
# expansion, commits m1 over {r0}, and the controller then accepts the expansion.
F3_TWO_REPLICAS = [
    "shrink_isr(leader=r0, follower=r1)",
    "alter_isr(leader=r0)",
    "fetch_request(follower=r1, leader=r0)",
    "write(leader=r0)",
    "reapply_isr(leader=r0)",
    "alter_isr(leader=r0)",
    "elect(leader=r1)",
    "deliver(replica=r1)",
]


@needs_jvm
@pytest.mark.kafka_jvm
def test_f3_on_two_replicas_agrees_step_by_step_on_kafka():
    report = replcheck.conform(F3_TWO_REPLICAS, kafka=RELEASE, replicas=2)
    result = report.results[0]
    assert result.verdict == "agrees", result.summary()
    # Kafka's own leader commits m1 over its ISR {r0} and acknowledges it ...
    after_reapply = result.steps[5].kafka
    assert after_reapply["brokers"][0]["hw"] == 1 and after_reapply["brokers"][0]["acked"] == [1]
    # ... and r1, which lacks it, leads at the end with an empty log.
    last = result.steps[-1].kafka
    assert last["controller"]["leader"] == 1 and last["controller"]["isr"] == [0, 1]
    assert last["brokers"][1]["partition"]["leader"] == 1 and last["brokers"][1]["log"] == []
    # The harness moved its clock so that r1 (caught up at its fetch) no longer held the HW.
    assert any("clock moved" in e for e in after_reapply["events"])


@needs_jvm
@pytest.mark.kafka_jvm
@pytest.mark.parametrize("release", ["3.9.1", RELEASE, "4.4.0"])
def test_f2_catalogue_steps_agree_on_kafka(release):
    """One release of each harness family CI checks: a 3.x KRaft release, 4.1 and 4.4."""
    report = replcheck.conform(entry="F2", kafka=release)
    result = report.results[0]
    assert result.verdict == "agrees", result.summary()
    # r0 applied its demotion and re-election as one delta and kept r1's offset of epoch 1.
    r0 = result.steps[-4].kafka["brokers"][0]
    assert r0["hw"] == 1 and [x["leo"] for x in r0["partition"]["remote"] if x["id"] == 1] == [1]


@needs_jvm
@pytest.mark.kafka_jvm
def test_f3_catalogue_steps_agree_on_the_newest_kafka():
    result = replcheck.conform(entry="F3", kafka="4.4.0").results[0]
    assert result.verdict == "agrees", result.summary()
    last = result.steps[-1].kafka
    # r2, elected with the controller's ISR {r0, r1, r2}, leads without m1, which r0
    # acknowledged with acks=all.
    assert last["brokers"][2]["partition"]["leader"] == 2 and last["brokers"][2]["log"] == []
    assert 1 in last["brokers"][0]["acked"]
    # The loss is named on the steps Kafka agreed with, at the last one.
    broken = {b.invariant: b for b in result.violations()}
    assert broken["no-committed-data-loss"].step == len(result.model_states) - 1
    assert broken["no-committed-data-loss"].kafka_too
    assert "breaks no-committed-data-loss from step" in result.summary()
    # Kafka's events at the steps F3 turns on: the replay drops the pending expansion, and
    # the controller's acceptance of it is ignored.
    events = [e for step in result.steps for e in (step.kafka or {}).get("events", [])]
    assert any(
        "Partition.makeLeader commits ISR [0, 1] and drops its PendingExpandIsr" in e
        for e in events
    ), events
    assert any("ignores the AlterPartition response (ISR [0, 1, 2]" in e for e in events), events


@needs_jvm
@pytest.mark.kafka_jvm
def test_random_walks_run_and_every_one_has_a_verdict():
    report = replcheck.conform(walks=6, seed=3, depth=12, kafka=RELEASE, replicas=2)
    assert len(report.results) == 6
    assert all(r.verdict in ("agrees", "disagrees", "refused") for r in report.results)
    # Every step a walk took that Kafka took too is compared: an agreeing walk has them all.
    for r in report.results:
        if r.verdict == "agrees":
            assert len([s for s in r.steps if s.model_step]) == len(r.model_states) - 1


@needs_jvm
@pytest.mark.kafka_jvm
def test_a_broken_model_rule_is_the_first_step_kafka_disagrees_with(monkeypatch):
    """reapply_isr keeping the pending change (not Kafka's rule): conform names that step."""

    def keeps_pending(self: KafkaReplication, s: State, i: int) -> State:
        return s

    monkeypatch.setattr(KafkaReplication, "_do_reapply_isr", keeps_pending)
    result = replcheck.conform(F3_TWO_REPLICAS, kafka=RELEASE, replicas=2).results[0]
    assert result.verdict == "disagrees"
    bad = result.first_bad
    assert bad is not None and bad.model_step == 5 and bad.action == "reapply_isr(leader=r0)"
    assert "r0.maximal_isr" in {d.field for d in bad.differences}
    # The model's loss comes after the step Kafka disagreed with: nothing is claimed of Kafka.
    assert result.violations() == [] and "breaks" not in result.summary()


@needs_jvm
@pytest.mark.kafka_jvm
def test_a_shrink_kafka_cannot_time_is_refused_with_the_reason():
    """Both followers were last caught up when r0 became leader: Kafka's leader finds
    them out of sync together, never r2 alone (the model, timeless, allows it)."""
    steps = ["shrink_isr(leader=r0, follower=r2)"]
    result = replcheck.conform(steps, kafka=RELEASE, replicas=3).results[0]
    assert result.verdict == "refused"
    kind, detail = result.first_bad.refused
    assert kind == "unrealizable_timing" and "without 1" in detail


@needs_jvm
@pytest.mark.kafka_jvm
def test_the_command_prints_each_step_and_exits_0_when_kafka_agrees(capsys):
    assert main(["conform", "--id", "F2", "--kafka", RELEASE]) == 0
    out = capsys.readouterr().out
    assert "deliver_latest(replica=r0)" in out
    assert f"result: agrees (14 steps on Kafka {RELEASE}); Kafka's state breaks " in out
    # Kafka's own events at the step F2 turns on: b0 made leader again from one delta.
    assert "Partition.makeLeader with isNewLeader = false" in out


# ----------------------------------------------------------- refused before any JVM


def _error(capsys, argv: list[str]) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.startswith("replcheck: error: ")
    return err


def test_a_zookeeper_trace_is_one_line(capsys, tmp_path):
    trace = tmp_path / "zk.toml"
    trace.write_text('config = { kafka = "2.8.0" }\nactions = ["write(leader=r0)"]\n')
    assert "KRaft traces only" in _error(capsys, ["conform", str(trace)])


def test_walks_need_kraft(capsys):
    assert "--kraft" in _error(capsys, ["conform", "--walks", "3", "--kafka", "3.9.1"])


def test_one_source_of_steps(capsys):
    assert "give one of TRACE, --id or --walks" in _error(capsys, ["conform"])
    assert "give one of" in _error(capsys, ["conform", "--id", "F2", "--walks", "2"])


def test_an_entry_needs_a_release_and_exists(capsys):
    assert "say which release" in _error(capsys, ["conform", "--id", "F2"])
    assert "no catalogue entry 'F99'" in _error(
        capsys, ["conform", "--id", "F99", "--kafka", RELEASE]
    )


def test_a_release_before_production_kraft_is_one_line(capsys):
    assert "no production KRaft controller" in _error(
        capsys, ["conform", "--id", "F2", "--kafka", "3.2.3"]
    )


def test_a_release_no_harness_family_covers_is_refused():
    with pytest.raises(HarnessUnavailable, match="the harness covers KRaft releases"):
        family_of("3.2.3")


def test_no_java_is_one_line(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert "needs a Java runtime" in _error(capsys, ["conform", "--id", "F2", "--kafka", RELEASE])


@needs_jvm
@pytest.mark.kafka_jvm
def test_kafka_18991_shows_on_kafkas_classes_before_its_fix_and_not_after():
    """C1: Kafka 4.0.0 processes an earlier epoch's Fetch answer and keeps a record its
    leader truncated, as the model of 4.0.0 does; 4.0.1's model does not take those steps."""
    before = replcheck.conform(entry="C1", kafka="4.0.0").results[0]
    assert before.verdict == "agrees", before.summary()
    broken = {b.invariant: b for b in before.violations()}
    # The follower keeps m1, which its leader truncated; whether it still owes its
    # truncation is the model's to say, so the verdict is the model's, on agreed logs.
    assert not broken["consistent-logs"].kafka_too
    assert "the model breaks consistent-logs" in before.summary()
    with pytest.raises(InputError, match="does not take this trace"):
        replcheck.conform(entry="C1", kafka="4.0.1")


def test_an_earlier_epochs_request_is_in_flight_only_where_kafka_answers_it():
    """Before KAFKA-18991 the answer to a request of an earlier epoch is processed when
    the follower is Fetching at that request's offset; from the fix only its own epoch's."""
    request = {"epoch": 1, "offset": 3}
    stale = {"in_flight": False, "state": "fetching", "offset": 3, "request": request}
    assert _in_flight(stale, answers_any_epoch=True)
    assert not _in_flight(stale, answers_any_epoch=False)
    assert not _in_flight({**stale, "offset": 2}, answers_any_epoch=True)
    assert not _in_flight({**stale, "state": "truncating"}, answers_any_epoch=True)
    assert not _in_flight({**stale, "request": None}, answers_any_epoch=True)
    assert _in_flight({**stale, "in_flight": True}, answers_any_epoch=False)
    assert not _in_flight(None, answers_any_epoch=True)


def test_a_harness_failure_is_named_by_its_exception_not_the_stacks_last_line():
    stderr = (
        'Exception in thread "main" java.lang.RuntimeException: You must specify X\n'
        "\tat org.apache.kafka.controller.ClusterControlManager$Builder.build(...)\n"
        "\tat replcheck.harness.Main.main(Main.scala)\n"
    )
    assert _failure(stderr).endswith("RuntimeException: You must specify X")
    assert _failure("") == "no output"


def test_steps_the_model_refuses_are_said_before_any_build(monkeypatch):
    def no_build(release):
        raise AssertionError("built")

    monkeypatch.setattr("replcheck.conformance.build", no_build)
    with pytest.raises(InputError, match="does not take this trace"):
        replcheck.conform(entry="C1", kafka="4.0.1")  # KAFKA-18991's fix drops the answer
