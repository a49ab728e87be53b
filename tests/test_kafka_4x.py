"""Kafka 4.0.1 to 4.4.0 (issue 45): every release parses, runs at its own newest
metadata.version, and the two rows these releases add to the table change what the
model does where the code says they do: the last known leader recorded when the
partition becomes leaderless (4.1.1, apache/kafka#20655) and the directory report that
keeps the ELR (4.3.0, apache/kafka#20716, the end of finding F4)."""

from __future__ import annotations

import pytest

from replcheck.cli.main import main
from replcheck.invariants.kafka.predicates import no_committed_data_loss
from replcheck.model import KafkaReplication, make_config
from replcheck.model.kafka.config import ConfigError
from replcheck.model.kafka.protocol import newest_of
from replcheck.model.kafka.releases import (
    RELEASES,
    UnknownRelease,
    differences,
    release_name,
)
from replcheck.model.kafka.state import last_known_elr, last_known_names_nobody
from replcheck.traces.replay import execute
from replcheck.traces.text import controller_cell
from tests.conftest import A
from tests.test_kafka_faults import DIR_PREFIX, _dir_model

NEW = ["4.0.1", "4.0.2", "4.1.1", "4.1.2", "4.2.0", "4.2.1", "4.2.2", "4.3.0", "4.3.1", "4.3.2"]
NEW.append("4.4.0")


@pytest.mark.parametrize("release", NEW)
def test_every_new_release_parses_and_has_a_model(release):
    assert release_name(release) == release
    assert release_name(f" {release} ") == release
    assert release in RELEASES
    config = make_config({"kafka": release})
    assert config.kraft  # ZooKeeper mode ended with 4.0.0 (KIP-500)
    assert config.elr == (release >= "4.1")  # on by default for new clusters from 4.1.0
    assert KafkaReplication(config).init_states()


def test_short_names_and_the_releases_around_the_new_ones():
    assert release_name("4.2") == "4.2.0" and release_name("4.4") == "4.4.0"
    assert RELEASES[-1] == "4.4.0"
    with pytest.raises(UnknownRelease, match="newer than this model covers"):
        release_name("4.4.1")
    with pytest.raises(UnknownRelease, match="not a release this model covers"):
        release_name("4.1.3")  # Maven Central serves no 4.1.3


@pytest.mark.parametrize(
    ("release", "newest"),
    [
        ("4.0.2", "4.0-IV3"),
        ("4.1.2", "4.1-IV1"),
        ("4.2.2", "4.2-IV1"),
        ("4.3.2", "4.3-IV0"),
        ("4.4.0", "4.4-IV2"),
    ],
)
def test_each_release_runs_at_its_newest_production_metadata_version(release, newest):
    """MetadataVersion.LATEST_PRODUCTION as each release's kafka-server-common jar gives it."""
    assert newest_of(release) == newest
    assert make_config({"kafka": release}).protocol_version == newest


def test_a_newer_metadata_version_needs_a_newer_binary():
    older = make_config({"kafka": "4.4.0", "metadata_version": "4.3-IV0"})
    assert older.protocol_version == "4.3-IV0"
    with pytest.raises(ConfigError, match="runs at most 4.3-IV0"):
        make_config({"kafka": "4.3.2", "metadata_version": "4.4-IV0"})


def test_the_releases_differ_only_where_the_table_says():
    """4.0.1 checks the leader epoch of a Fetch answer (KAFKA-18991); 4.0.2 behaves as
    4.0.1 and 4.1.0; 4.1.1 changes the last known leader; 4.3.0 the directory report;
    nothing after (4.3.1 to 4.4.0)."""
    assert [d[0] for d in differences("4.0.0", "4.0.1")] == ["fetch_answer_checks_epoch"]
    assert "KAFKA-18991" in differences("4.0.0", "4.0.1")[0][3]
    assert differences("4.0.1", "4.0.2") == []
    assert [d[0] for d in differences("4.1.0", "4.1.1")] == ["last_known_leader_on_leaderless"]
    assert differences("4.1.1", "4.2.2") == []
    assert [d[0] for d in differences("4.2.2", "4.3.0")] == ["dir_report_keeps_elr"]
    assert differences("4.3.0", "4.4.0") == []
    assert "#20655" in differences("4.1.0", "4.1.1")[0][3]
    assert "#20716" in differences("4.2.2", "4.3.0")[0][3]


# --------------------- 4.1.1: lastKnownElr recorded when the partition loses its leader

# r0 comes back on a new disk and joins the ISR before it reports its directory; the
# leader r1 crashes, and r0, whose directory is not online, cannot lead: the partition is
# leaderless with ISR {r0}.  Then r0 crashes too, and both return.
LEADERLESS_FIRST = [
    A("crash", 0, 0),
    A("replace_disk", 0),
    A("notice_crash", 0, 1),
    A("restart", 0),
    A("notice_restart", 0),
    A("deliver", 0),
    A("deliver", 1),
    A("fetch_request", 0, 1),
    A("crash", 1, 0),
    A("alter_isr", 1),  # r0 joins the ISR: its fetch reached the HW
    A("notice_crash", 1, -1),  # r0 cannot lead: no leader, ISR {r0}
    A("crash", 0, 0),
    A("notice_crash", 0, -1),  # the ISR empties while the partition has no leader
    A("restart", 1),
    A("notice_restart", 1),
    A("restart", 0),
    A("notice_restart", 0),  # unclean: r0 leaves the ELR, which is empty now
]
LEADERLESS_BOUNDS = dict(records=1, epochs=4, crashes=3, disk_loss=True)


@pytest.mark.parametrize(
    ("release", "recovered"), [("4.1.0", False), ("4.1.1", True), ("4.4.0", True)]
)
def test_the_last_leader_is_recovered_only_where_it_was_recorded(release, recovered):
    """4.0.0 - 4.1.0 record lastKnownElr when the ISR empties, to the leader the partition
    has then: none, [-1], so the last leader r1 is never elected when ISR and ELR are
    empty.  From 4.1.1 it was recorded when r1 was removed, and r1 is elected.  Kafka's
    own test of the change (4.1.1, PartitionChangeBuilderTest
    .testEligibleLeaderReplicas_lastKnownElrShouldBePopulatedWhenNoLeader) is step 11:
    no acceptable leader, the leader removed, the ISR kept, lastKnownElr [the leader]."""
    model = KafkaReplication(make_config({"kafka": release, **LEADERLESS_BOUNDS}))
    steps = execute(model, LEADERLESS_FIRST)
    leaderless, emptied, last = steps[11][1], steps[13][1], steps[-1][1]
    assert (leaderless.ctrl_leader, leaderless.ctrl_isr) == (-1, 0b01)
    assert (emptied.ctrl_isr, emptied.ctrl_elr) == (0, 0b01)
    if recovered:
        assert last_known_elr(leaderless) == last_known_elr(emptied) == 0b10
        assert "lastKnownElr{r1}" in controller_cell(emptied)
        assert (last.ctrl_leader, last.ctrl_isr, last.ctrl_elr) == (1, 0b10, 0)
    else:
        assert last_known_elr(leaderless) == 0  # not recorded while the ISR holds r0
        assert last_known_names_nobody(emptied) and last_known_elr(emptied) == 0
        assert "lastKnownElr[-1]" in controller_cell(emptied)
        assert (last.ctrl_leader, last.ctrl_isr, last.ctrl_elr) == (-1, 0, 0)
        assert not any(a.name == "elect" for a in model.actions(last))


def test_the_rules_agree_where_the_leader_and_the_isr_go_in_one_change():
    """The last ISR member, leading, crashes: one record removes the leader and empties
    the ISR, and both rules record it (4.1.0 and 4.1.1 alike)."""
    for release in ("4.1.0", "4.1.1"):
        model = KafkaReplication(make_config({"kafka": release, "records": 0, "crashes": 2}))
        steps = execute(model, [A("crash", 1, 0), A("notice_crash", 1, 0), A("crash", 0, 0)])
        emptied = model.next_state(steps[-1][1], A("notice_crash", 0, -1))
        assert (emptied.ctrl_isr, last_known_elr(emptied)) == (0, 0b01)


def test_without_elr_nothing_is_recorded():
    """maybeUpdateLastKnownLeader returns at once with the ELR off (4.1.1 too)."""
    model = KafkaReplication(make_config({"kafka": "4.2.0", "elr": False, **LEADERLESS_BOUNDS}))
    leaderless = execute(model, LEADERLESS_FIRST[:11])[-1][1]
    assert (leaderless.ctrl_leader, leaderless.ctrl_isr) == (-1, 0b01)
    assert last_known_elr(leaderless) == 0 and leaderless.last_known_on_leaderless == 0


# ----------------------------- 4.3.0: the directory report keeps the ELR (finding F4)

F4_REST = [A("report_dir", 0), A("restart", 1), A("notice_restart", 1)]


@pytest.mark.parametrize(("release", "lost"), [("4.2.2", True), ("4.3.0", False)])
def test_the_directory_report_empties_the_elr_until_4_3(release, lost):
    """F4's steps: through 4.2.2 r0's report empties the ELR and the empty r0 is elected
    as the last known leader; from 4.3.0 the report keeps r1 in the ELR, and r1, back
    from its clean shutdown, is elected with the record."""
    model = _dir_model(release)
    steps = execute(model, [*DIR_PREFIX, *F4_REST])
    reported = steps[len(DIR_PREFIX) + 1][1]
    assert not reported.replicas[0].dir_unreported
    assert reported.ctrl_elr == (0 if lost else 0b10)
    last = steps[-1][1]
    if lost:
        assert (last.ctrl_leader, last.replicas[0].leo) == (0, 0)
        assert no_committed_data_loss(model.next_state(last, A("deliver", 0))) is not None
    else:
        assert (last.ctrl_leader, last.ctrl_isr, last.ctrl_elr) == (1, 0b10, 0)
        assert last.replicas[1].leo == 1  # r1 kept the committed record
        assert no_committed_data_loss(model.next_state(last, A("deliver", 1))) is None


def test_check_gives_a_verdict_on_4_4_and_refuses_a_later_release(capsys):
    args = ["check", "--kafka", "4.4.0", "--records", "1", "--epochs", "2", "--quiet"]
    assert main(args) == 1  # F3's loss at these bounds too: violated
    capsys.readouterr()
    assert main(["check", "--kafka", "4.5.0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Kafka 4.5.0 is newer than this model covers" in err[0]
