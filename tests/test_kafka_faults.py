"""The faults of KRaft-era Kafka (issue 22): metadata applied as one delta, clean and
unclean shutdown, a replaced disk, and the protocol / metadata version a cluster runs at."""

from __future__ import annotations

import json

import pytest

from replcheck.cli.main import main
from replcheck.invariants.kafka.predicates import no_committed_data_loss
from replcheck.model import KafkaReplication, make_config
from replcheck.model.kafka.config import ConfigError
from replcheck.model.kafka.protocol import UnknownVersion, version_name
from replcheck.model.kafka.releases import EPOCH_LOOP, ON_FETCH, behaviour
from replcheck.model.kafka.state import NO_LEADER, last_known_elr
from replcheck.traces.load import parse_action
from replcheck.traces.replay import NotEnabled, execute
from replcheck.traces.text import state_changes
from tests.conftest import A, reachable

# F2: r0's metadata lags over "leader r2, epoch 2" and "leader r0, epoch 3" (3.4.1+ steps).
F2_STEPS = [
    "write(leader=r0)",
    "fetch_request(follower=r1, leader=r0)",
    "fetch_response(follower=r1)",
    "fetch_request(follower=r1, leader=r0)",
    "elect(leader=r2)",
    "deliver(replica=r1)",
    "deliver(replica=r2)",
    "fetch_request(follower=r1, leader=r2)",
    "fetch_response(follower=r1)",
    "crash(replica=r2, keep=0)",
    "notice_crash(replica=r2, new_leader=r0)",
    "deliver_latest(replica=r0)",
    "elect(leader=r1)",
    "deliver_latest(replica=r1)",
]
F2_BOUNDS = dict(replicas=3, records=1, epochs=4, crashes=1, kraft=True)


def kafka(**values):
    return KafkaReplication(make_config(values))


@pytest.mark.parametrize("release", ["3.5.0", "3.9.1", "4.1.0"])
def test_kraft_metadata_delta_loses_a_committed_record(release):
    """One delta spanning the demotion and the re-election: makeLeader keeps r1's stale
    offset, the HW passes m1, and r1, elected, lacks it."""
    model = kafka(kafka=release, controller_failover=True, **F2_BOUNDS)
    steps = execute(model, [parse_action(text) for text in F2_STEPS])
    after_delta = steps[12][1]
    assert after_delta.replicas[0].remote_leo[1] == 1  # kept from epoch 1
    assert after_delta.replicas[1].leo == 0  # r1 truncated against r2
    assert after_delta.replicas[0].hw == 1
    assert no_committed_data_loss(steps[-1][1]) is not None


def test_without_the_delta_the_leader_learns_each_epoch():
    """The same run with every change applied in order: deliver_latest does not exist, and
    r0 applying epoch 2 first becomes a follower, which forgets the offsets."""
    model = kafka(kafka="4.1.0", **F2_BOUNDS)
    with pytest.raises(NotEnabled) as info:
        execute(model, [parse_action(text) for text in F2_STEPS])
    assert info.value.action.name == "deliver_latest"


# BFS to the first violation: about 6M states, 4 minutes on 2 cores.  CI leaves it out
# (heavy): its catalogue run replays F2 at the same bounds and checks the verdict.
@pytest.mark.slow
@pytest.mark.heavy
def test_kraft_accepts_controller_failover_and_the_check_gives_a_verdict(capsys):
    code = main(
        [
            "check",
            "--kafka",
            "4.1.0",
            "--replicas",
            "3",
            "--records",
            "1",
            "--epochs",
            "4",
            "--controller-failover",
            "--invariant",
            "no-committed-data-loss",
            "--quiet",
        ]
    )
    out = capsys.readouterr().out
    assert code == 1, out
    assert "no-committed-data-loss  VIOLATED" in out


# ---------------------------------------------------------------- shutdowns


def test_clean_shutdown_flushes_checkpoints_and_marks_the_registration():
    model = kafka(kafka="4.1.0", clean_shutdown=True, records=1)
    s = execute(
        model,
        [A("write", 0), A("fetch_request", 1, 0), A("fetch_response", 1), A("fetch_request", 1, 0)],
    )[-1][1]
    assert (s.replicas[0].hw, s.replicas[0].hw_checkpoint) == (1, 0)
    assert A("shutdown", 0) in set(model.actions(s))
    down = model.next_state(s, A("shutdown", 0)).replicas[0]
    assert (down.alive, down.log, down.hw_checkpoint, down.clean_shutdown) == (
        0,
        s.replicas[0].log,
        1,
        1,
    )
    crashed = model.next_state(s, A("crash", 0, 1)).replicas[0]
    assert (crashed.hw_checkpoint, crashed.clean_shutdown) == (0, 0)


def test_shutdown_and_replace_disk_need_their_options():
    model = kafka(kafka="4.1.0")
    s = model.init_states()[0]
    assert "shutdown" not in model.action_kinds()
    assert "replace_disk" not in model.action_kinds()
    assert not any(a.name == "shutdown" for a in model.actions(s))


def test_a_replaced_disk_restarts_empty_and_the_last_isr_member_is_elected():
    """D1: ZooKeeper keeps the last ISR member and elects it when it returns, empty."""
    model = kafka(kafka="3.9.1", kraft=False, records=1, epochs=4, crashes=2, disk_loss=True)
    steps = execute(
        model,
        [
            A("crash", 1, 0),
            A("notice_crash", 1, 0),
            A("deliver", 0),
            A("write", 0),  # ISR {r0}: committed at once
            A("crash", 0, 1),
            A("replace_disk", 0),
            A("notice_crash", 0, -1),
            A("restart", 0),
            A("notice_restart", 0),
            A("deliver", 0),
        ],
    )
    gone = steps[6][1].replicas[0]
    assert (gone.log, gone.hw_checkpoint) == ((), 0)
    assert steps[-1][1].ctrl_leader == 0
    assert no_committed_data_loss(steps[-1][1]) is not None


def test_the_trace_views_show_the_kind_of_stop_and_the_disk():
    model = kafka(kafka="4.1.0", records=1, crashes=2, clean_shutdown=True, disk_loss=True)
    s0 = model.init_states()[0]
    s1 = model.next_state(s0, A("write", 0))
    s2 = model.next_state(s1, A("shutdown", 1))
    s3 = model.next_state(s2, A("replace_disk", 1))
    assert "r1 shut down cleanly (0 record(s) flushed)" in state_changes(s1, s2)
    # It held no records, but its clean-shutdown file and (KRaft 3.7+) its directory id
    # are gone with the disk.
    assert "r1's disk replaced: no records on it" in state_changes(s2, s3)
    s4 = model.next_state(s1, A("crash", 0, 1))
    s5 = model.next_state(s4, A("replace_disk", 0))
    assert "r0's disk replaced: log and HW checkpoint gone" in state_changes(s4, s5)


def test_last_known_elr_is_the_last_leader_while_the_isr_is_empty():
    model = kafka(kafka="4.1.0", replicas=2, records=0, epochs=4, crashes=2)
    steps = execute(
        model,
        [A("crash", 1, 0), A("notice_crash", 1, 0), A("crash", 0, 0), A("notice_crash", 0, -1)],
    )
    assert last_known_elr(steps[2][1]) == 0
    assert last_known_elr(steps[4][1]) == 0b01


def test_the_last_known_leader_waits_while_the_elr_holds_a_fenced_member():
    """PartitionChangeBuilder.canElectLastKnownLeader needs ISR and ELR empty, fenced ELR
    members included (4.1.0: testEligibleLeaderReplicas_ElectLastKnownLeaderShouldFail)."""
    model = kafka(kafka="4.1.0", replicas=3, records=0, epochs=5, crashes=3, min_isr=2)
    steps = execute(
        model,
        [
            A("crash", 1, 0),
            A("notice_crash", 1, 0),
            A("crash", 2, 0),
            A("notice_crash", 2, 0),  # ISR {r0} < 2: r2 joins the ELR
            A("crash", 0, 0),
            A("notice_crash", 0, -1),
            A("restart", 0),
            A("notice_restart", 0),  # unclean: r0 leaves the ELR; r2 (fenced) stays
        ],
    )
    last = steps[-1][1]
    assert (last.ctrl_leader, last.ctrl_isr, last.ctrl_elr) == (-1, 0, 0b100)


# ------------------------------------- KIP-858: a replaced disk's directory (3.7+)

# r1 shuts down cleanly (ELR, as min ISR is 2), then the leader r0 crashes and comes
# back on a new disk: r0 is the last known leader, r1 the ELR's clean member.
DIR_PREFIX = [
    A("write", 0),
    A("fetch_request", 1, 0),
    A("fetch_response", 1),
    A("fetch_request", 1, 0),  # the HW passes m1: committed
    A("shutdown", 1),
    A("notice_crash", 1, 0),  # ISR {r0} < 2: r1 joins the ELR
    A("crash", 0, 1),
    A("notice_crash", 0, -1),  # offline, ISR empty, ELR {r0, r1}
    A("replace_disk", 0),
    A("restart", 0),
    A("notice_restart", 0),  # unclean: r0 leaves the ELR
]
DIR_BOUNDS = dict(replicas=2, records=1, epochs=3, crashes=2, min_isr=2)


def _dir_model(release="4.1.0", **values):
    return kafka(kafka=release, clean_shutdown=True, disk_loss=True, **DIR_BOUNDS, **values)


def test_the_directory_report_empties_the_elr_and_the_empty_last_leader_is_elected():
    """4.0 / 4.1.0 (handleAssignReplicasToDirs never enables the ELR, fixed in 4.3.0): the
    report of r0's new directory empties the ELR, so when r1 comes back it is no longer
    an eligible replica and the controller elects the last known leader r0, whose disk
    is empty: the committed record is gone."""
    model = _dir_model()
    steps = execute(
        model,
        [*DIR_PREFIX, A("report_dir", 0), A("restart", 1), A("notice_restart", 1), A("deliver", 0)],
    )
    before, reported = steps[len(DIR_PREFIX)][1], steps[len(DIR_PREFIX) + 1][1]
    assert before.replicas[0].dir_unreported and before.ctrl_elr == 0b10
    assert not reported.replicas[0].dir_unreported and reported.ctrl_elr == 0
    assert "r0 reported its new log directory: it may lead again" in state_changes(before, reported)
    last = steps[-1][1]
    assert (last.ctrl_leader, last.replicas[0].leo) == (0, 0)
    assert no_committed_data_loss(last) is not None


def test_without_the_report_the_elr_member_is_elected():
    """The same run with r1 back before r0 reports: r1 is still in the ELR and leads."""
    model = _dir_model()
    steps = execute(model, [*DIR_PREFIX, A("restart", 1), A("notice_restart", 1)])
    last = steps[-1][1]
    assert (last.ctrl_leader, last.ctrl_isr) == (1, 0b10)
    assert no_committed_data_loss(last) is None


def test_an_unreported_directory_cannot_lead():
    """LeaderAcceptor (hasOnlineDir): in 3.9 KRaft the last ISR member back on a new disk
    is not elected at its registration, nor by a preferred election, until it reports
    its directory; then it is (and the record is gone: D1).  ZooKeeper mode and 3.6 have
    no directories: it leads at once."""
    steps_to_return = [
        A("crash", 1, 0),
        A("notice_crash", 1, 0),
        A("write", 0),  # ISR {r0}: committed at once
        A("crash", 0, 1),
        A("notice_crash", 0, -1),
        A("replace_disk", 0),
        A("restart", 0),
        A("notice_restart", 0),
    ]
    values = dict(records=1, epochs=4, crashes=2, disk_loss=True)
    model = kafka(kafka="3.9.1", kraft=True, **values)
    back = execute(model, steps_to_return)[-1][1]
    assert back.ctrl_leader == -1 and back.replicas[0].dir_unreported
    assert A("elect", 0) not in set(model.actions(back))
    reported = model.next_state(back, A("report_dir", 0))
    assert reported.ctrl_leader == -1  # the report itself elects nobody
    elected = model.next_state(reported, A("elect", 0))
    assert elected.ctrl_leader == 0
    for release, kraft in (("3.9.1", False), ("3.6.2", True)):
        model = kafka(kafka=release, kraft=kraft, **values)
        assert "report_dir" not in model.action_kinds()
        assert execute(model, steps_to_return)[-1][1].ctrl_leader == 0
    # KIP-858 needs metadata.version 3.7-IV2: at 3.7-IV1 a 3.7 cluster has no directories.
    old = kafka(kafka="3.7.0", kraft=True, metadata_version="3.7-IV1", **values)
    assert "report_dir" not in old.action_kinds()


# The last leader r0 alone in the ISR crashes, and comes back on a new disk.
LAST_LEADER_BACK = [
    A("crash", 1, 0),
    A("notice_crash", 1, 0),
    A("write", 0),
    A("crash", 0, 1),
    A("notice_crash", 0, -1),  # ISR empty, ELR {r0}
    A("replace_disk", 0),
    A("restart", 0),
    A("notice_restart", 0),  # unclean: leaves the ELR; ISR and ELR empty
]
LAST_LEADER_BOUNDS = dict(records=1, epochs=4, crashes=2, disk_loss=True, elr=True)


def test_4_0_elects_the_last_known_leader_before_its_report():
    """4.0 (KAFKA-19522, fixed in 4.1.0): canElectLastKnownLeader logs that the last known
    leader is not acceptable and elects it anyway."""
    for release, leader in (("4.0.0", 0), ("4.1.0", -1)):
        model = kafka(kafka=release, **LAST_LEADER_BOUNDS)
        assert execute(model, LAST_LEADER_BACK)[-1][1].ctrl_leader == leader


def test_a_4_0_leader_elected_before_its_report_loses_leadership_by_it():
    """The report's own election tests the leader with the directory of before: it fails,
    and with no other candidate the partition has no leader (a new leader epoch) until an
    election picks r0 from the ISR again."""
    model = kafka(kafka="4.0.0", **{**LAST_LEADER_BOUNDS, "epochs": 5})
    led = execute(model, LAST_LEADER_BACK)[-1][1]
    reported = model.next_state(led, A("report_dir", 0))
    assert (reported.ctrl_leader, reported.ctrl_epoch, reported.ctrl_isr) == (-1, 4, 0b01)
    again = model.next_state(reported, A("elect", 0))
    assert (again.ctrl_leader, again.ctrl_epoch) == (0, 5)


def test_the_balancer_elects_the_last_known_leader_after_the_report():
    """F4 without r1's return: the periodic preferred-leader balancer runs the last known
    leader's recovery (maybeBalancePartitionLeaders -> canElectLastKnownLeader), so the
    empty r0 leads within leader.imbalance.check.interval.seconds anyway."""
    model = _dir_model()
    reported = execute(model, [*DIR_PREFIX, A("report_dir", 0)])[-1][1]
    assert A("elect", 0) in set(model.actions(reported))
    led = model.next_state(reported, A("elect", 0))
    assert (led.ctrl_leader, led.ctrl_isr, led.ctrl_elr) == (0, 0b01, 0)
    before = execute(model, DIR_PREFIX)[-1][1]  # ELR {r1}: no recovery yet
    assert not any(a.name == "elect" for a in model.actions(before))


# ----------------------------------------------------- protocol versions


def test_versions_read_as_kafka_reads_them():
    assert version_name("2.7", "ibp") == "2.7-IV2"
    assert version_name("3.6-iv0", "x") == "3.6-IV0"
    assert version_name("0.10.2", "ibp") == "0.10.2-IV0"
    with pytest.raises(UnknownVersion):
        version_name("3.6-IV9", "x")


def test_the_release_table_reads_the_version():
    assert behaviour("2.8.0").truncation == ON_FETCH
    assert behaviour("2.8.0", "2.7-IV0").truncation == EPOCH_LOOP  # KAFKA-10554's gate
    assert behaviour("2.8.0", "2.7-IV1").alter_isr is False  # AlterIsr from 2.7-IV2
    assert behaviour("2.8.0", "2.7-IV2").alter_isr is True
    assert behaviour("3.6.0", "3.5-IV2").kraft_shrink_bumps_epoch  # KAFKA-15021's gate
    assert not behaviour("3.6.0").kraft_shrink_bumps_epoch
    assert not behaviour("3.5.0", "3.5-IV0").isr_broker_epochs  # KIP-903's Fetch v15
    assert not behaviour("4.1.0", "4.0-IV3").elr_default  # ELR on for new clusters only


def test_config_keeps_the_version_and_refuses_impossible_pairs():
    cfg = make_config({"kafka": "2.8.0", "ibp": "2.7"})
    assert cfg.ibp == "2.7-IV2" and cfg.rules().alter_isr
    assert not make_config({"kafka": "4.1.0", "metadata_version": "4.0-IV3"}).elr
    with pytest.raises(ConfigError, match="need metadata.version 4.0-IV1"):
        make_config({"kafka": "4.1.0", "metadata_version": "4.0-IV0", "elr": True})
    with pytest.raises(ConfigError, match="runs at most 2.8-IV1"):
        make_config({"kafka": "2.8.0", "ibp": "3.0"})
    with pytest.raises(ConfigError, match="a ZooKeeper cluster has an inter.broker"):
        make_config({"kafka": "3.5.0", "metadata_version": "3.5"})


def test_compare_runs_an_upgrade_path(capsys):
    """2.7.0 -> 2.8.0 binaries at IBP 2.7-IV0 -> IBP 2.7-IV1: KAFKA-13141 (B2) needs
    truncation on fetch, which a 2.8.0 follower starts only at IBP 2.7-IV1."""
    path = ["2.7.0", "2.8.0@2.7-IV0", "2.8.0@2.7-IV1"]
    argv = ["compare", "--kafka", ",".join(path), "--records", "2", "--epochs", "3"]
    argv += ["--crashes", "0", "--min-isr", "2", "--invariant", "acked-writes-durable"]
    code = main([*argv, "--json", "--quiet"])
    doc = json.loads(capsys.readouterr().out)
    assert doc["modes"] == path
    verdicts = [doc["results"][step]["result"] for step in path]
    assert verdicts == ["holds", "holds", "violated"]
    assert code == 1


def test_prove_takes_every_fault_option(capsys):
    argv = ["prove", "--kafka", "4.1.0", "--clean-shutdown", "--disk-loss", "--depth", "2"]
    assert main(argv) == 0
    assert "clean-shutdown disk-loss kraft" in capsys.readouterr().out


def test_a_trace_with_an_option_only_action_names_the_option(tmp_path, capsys):
    trace = tmp_path / "t.toml"
    trace.write_text('config = { kafka = "4.1.0" }\nactions = ["shutdown(replica=r0)"]\n')
    assert main(["replay", str(trace)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith(
        "needs the option clean_shutdown = true in the configuration (--clean-shutdown)"
    )


def test_a_trace_with_the_directory_report_names_both_conditions(tmp_path, capsys):
    trace = tmp_path / "t.toml"
    config = 'config = { kafka = "3.6.2", kraft = true, disk_loss = true }\n'
    trace.write_text(config + 'actions = ["report_dir(replica=r0)"]\n')
    assert main(["replay", str(trace)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith(
        "action 'report_dir' needs the option disk_loss = true (--disk-loss) and exists only "
        "in KRaft mode from Kafka 3.7.0 at metadata.version 3.7-IV2 or later (KIP-858); "
        "not in this configuration"
    )
    assert len(err.splitlines()) == 1


def test_a_trace_with_a_release_only_action_names_the_releases(tmp_path, capsys):
    trace = tmp_path / "t.toml"
    trace.write_text('config = { kafka = "3.5.0" }\nactions = ["reapply_isr(leader=r0)"]\n')
    assert main(["replay", str(trace)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith(
        "action 'reapply_isr' exists only in KRaft mode (kraft = true, --kraft), "
        "not in this configuration"
    )
    assert len(err.splitlines()) == 1


def test_a_bad_version_in_compare_names_its_column(capsys):
    assert main(["compare", "--kafka", "2.7.0,2.8.0@2.9"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        "replcheck: error: --kafka 2.8.0@2.9: ibp: '2.9' is not a Kafka version "
        "(known: 0.8.0 to 4.4-IV2)"
    )


# ----------------------------------------------------------- fencing (--fencing)


def run(model, texts):
    return [state for _action, state in execute(model, [parse_action(t) for t in texts])]


def test_a_fenced_leader_runs_on_and_its_heartbeat_unfences_it():
    """maybeFenceOneStaleBroker: leadership and the ISR move as for a crash, while the
    broker still believes it leads; its next heartbeat unfences it with the same broker
    epoch, so it keeps its leader epoch (no registration: ``epoch`` is not reset)."""
    model = kafka(kafka="4.1.0", replicas=3, fencing=True)
    fenced, unfenced = run(model, ["fence(replica=r0, new_leader=r1)", "unfence(replica=r0)"])[1:]
    r0 = fenced.replicas[0]
    assert (fenced.ctrl_leader, fenced.ctrl_epoch, fenced.ctrl_isr) == (1, 2, 0b110)
    assert (r0.alive, r0.fenced, r0.leader, r0.epoch) == (1, 1, 0, 1)
    assert not fenced.ctrl_live >> 0 & 1
    assert A("write", 0) in list(model.actions(fenced))  # a zombie: it still takes writes
    assert A("deliver", 0) in list(model.actions(fenced))  # the metadata log still reaches it
    assert A("notice_restart", 0) not in list(model.actions(fenced))
    r0 = unfenced.replicas[0]
    assert (r0.fenced, r0.epoch, unfenced.ctrl_live) == (0, 1, 0b111)
    assert (unfenced.ctrl_leader, unfenced.ctrl_isr) == (1, 0b110)  # joins no ISR by itself
    assert "r0 fenced by the controller, still running" in state_changes(run(model, [])[0], fenced)


def test_an_unfenced_broker_keeps_its_elr_membership_and_its_proposals():
    """With min ISR 3 a fenced follower joins the ELR; unfencing is no registration, so it
    stays there (a crash and restart would leave it: handleBrokerUncleanShutdown), and a
    queued AlterPartition naming it is not marked as from before a new broker epoch."""
    model = kafka(kafka="4.1.0", replicas=3, min_isr=3, fencing=True)
    fenced, unfenced = run(model, ["fence(replica=r2, new_leader=r0)", "unfence(replica=r2)"])[1:]
    assert (fenced.ctrl_isr, fenced.ctrl_elr) == (0b011, 0b100)
    assert (unfenced.ctrl_isr, unfenced.ctrl_elr) == (0b011, 0b100)
    crashed = run(
        model,
        [
            "fence(replica=r2, new_leader=r0)",
            "crash(replica=r2, keep=0)",
            "restart(replica=r2)",
            "notice_restart(replica=r2)",
        ],
    )
    assert crashed[2].replicas[2].fenced == 0  # the process is gone: so is the fence
    assert crashed[-1].ctrl_elr == 0  # a registration after a crash leaves the ELR


def test_a_proposal_naming_a_fenced_follower_is_refused_and_accepted_once_it_is_back():
    """KIP-841: the controller refuses an ISR naming a fenced broker (INELIGIBLE_REPLICA);
    after the unfence, the same broker epoch, the queued proposal is not one from before
    a new registration (KIP-903), so the controller accepts it."""
    model = kafka(kafka="4.1.0", replicas=3, fencing=True, crashes=0)
    shrunk = [
        "shrink_isr(leader=r0, follower=r2)",
        "alter_isr(leader=r0)",
        "fetch_request(follower=r2, leader=r0)",  # r0 proposes {r0,r1,r2} again
    ]
    queued = run(model, shrunk)[-1]
    assert queued.alter_requests and queued.replicas[0].pending_isr == 0b111
    refused = run(model, [*shrunk, "fence(replica=r2, new_leader=r0)", "alter_isr(leader=r0)"])
    assert refused[-1].ctrl_isr == 0b011
    back = run(
        model,
        [
            *shrunk,
            "fence(replica=r2, new_leader=r0)",
            "unfence(replica=r2)",
            "alter_isr(leader=r0)",
        ],
    )
    assert back[-2].alter_requests[0][4] == 0  # ALTER_RESTARTED: no new broker epoch
    assert back[-1].ctrl_isr == 0b111


# The other replica crashes, then the last ISR member is fenced (its session expires) and
# comes back: the partition is offline in between.
LAST_MEMBER_FENCED = [
    "crash(replica=r1, keep=0)",
    "notice_crash(replica=r1, new_leader=r0)",
    "fence(replica=r0, new_leader=none)",
    "unfence(replica=r0)",
]


def test_an_offline_partition_gets_its_fenced_leader_back_when_it_heartbeats():
    """With the ELR the fenced last member leaves the ISR for the ELR; its unfence makes
    it leader again as the live ELR member of an empty ISR (handleBrokerUnfenced)."""
    model = kafka(kafka="4.1.0", replicas=2, fencing=True, records=0)
    states = run(model, LAST_MEMBER_FENCED)
    assert (states[3].ctrl_leader, states[3].ctrl_isr, states[3].ctrl_elr) == (-1, 0, 0b01)
    assert (states[4].ctrl_leader, states[4].ctrl_isr) == (0, 0b01)  # handleBrokerUnfenced


def test_fencing_is_an_option_in_both_modes(capsys):
    assert "fence" not in kafka(kafka="4.1.0").action_kinds()
    assert {"fence", "unfence"} <= set(kafka(kafka="4.1.0", fencing=True).action_kinds())
    assert {"fence", "unfence"} <= set(kafka(kafka="2.1.0", fencing=True).action_kinds())
    assert main(["check", "--kafka", "3.9.1", "--kraft", "--fencing", "--max-states", "9"]) == 3
    assert "fencing kraft" in capsys.readouterr().out
    assert main(["check", "--kafka", "2.1.0", "--fencing", "--max-states", "9"]) == 3
    out = capsys.readouterr().out
    assert "fencing" in out and "kraft" not in out
    assert main(["prove", "--kafka", "4.1.0", "--fencing", "--depth", "2"]) == 0
    assert "fencing kraft" in capsys.readouterr().out
    assert main(["prove", "--kafka", "2.4.0", "--fencing", "--depth", "2"]) == 0


# ------------------------------------ ZooKeeper: a running broker's expired session


def test_an_expired_leader_runs_on_unsent_and_gets_the_current_state_once_registered():
    """KafkaController.onBrokerFailure handles the expiry as a crash (r1 elected, r0 out
    of the ISR) and sends r0 nothing; r0 still takes writes.  It registers again
    (onBrokerStartup) and is owed the current state, which it applies: it follows r1."""
    model = kafka(kafka="2.4.0", replicas=3, fencing=True)
    expired, wrote, back, told = run(
        model,
        [
            "fence(replica=r0, new_leader=r1)",
            "write(leader=r0)",
            "unfence(replica=r0)",
            "deliver(replica=r0)",
        ],
    )[1:]
    r0 = expired.replicas[0]
    assert (expired.ctrl_leader, expired.ctrl_epoch, expired.ctrl_isr) == (1, 2, 0b110)
    assert (r0.alive, r0.fenced, r0.leader, r0.epoch, r0.zk_current) == (1, 1, 0, 1, 0)
    enabled = {a for a in model.actions(expired) if a.args[:1] == (0,)}
    assert enabled == {A("crash", 0, 0), A("unfence", 0), A("write", 0)}  # nothing sent
    assert len(wrote.replicas[0].log) == 1 and not wrote.acked  # a zombie's write
    assert back.ctrl_live == 0b111 and back.replicas[0].fenced == 1  # owed epoch 2
    assert "r0 registered again: the controller owes it the current state" in state_changes(
        wrote, back
    )
    assert "r0 got the current state" in state_changes(back, told)
    assert A("deliver", 0) in list(model.actions(back))
    assert A("notice_restart", 0) not in list(model.actions(back))
    r0 = told.replicas[0]
    assert (r0.fenced, r0.epoch, r0.leader) == (0, 2, 1)


def test_a_registration_owes_nothing_where_the_epoch_is_not_newer():
    """becomeLeaderOrFollower skips a LeaderAndIsr whose epoch is not newer: a follower
    out of the ISR whose session expires changes no epoch, so its registration owes it
    nothing."""
    model = kafka(kafka="2.4.0", replicas=3, fencing=True)
    shrunk, expired, back = run(
        model,
        [
            "shrink_isr(leader=r0, follower=r2)",
            "fence(replica=r2, new_leader=r0)",
            "unfence(replica=r2)",
        ],
    )[1:]
    assert expired.ctrl_epoch == shrunk.ctrl_epoch == 1 and expired.replicas[2].fenced == 1
    assert back.ctrl_live == 0b111 and back.replicas[2].fenced == 0
    assert A("deliver", 2) not in list(model.actions(back))


def test_an_expired_last_member_is_elected_again_when_it_registers():
    """onBrokerStartup elects a registering broker for an offline partition whose ISR
    holds it; the current state it is owed names it leader."""
    model = kafka(kafka="2.1.0", replicas=2, fencing=True, records=0, epochs=4)
    states = run(model, [*LAST_MEMBER_FENCED, "deliver(replica=r0)"])
    assert (states[3].ctrl_leader, states[3].ctrl_isr, states[3].ctrl_epoch) == (-1, 0b01, 3)
    assert (states[4].ctrl_leader, states[4].ctrl_epoch) == (0, 4)
    r0 = states[5].replicas[0]
    assert (r0.fenced, r0.epoch, r0.leader) == (0, 4, 0)


def test_an_expired_session_loses_no_committed_record():
    """No committed record is lost through an expired session with clean election (the
    zombie's ISR writes fail on the stale zkVersion): 2.4.0 holds on every reachable
    state with --fencing, as without (a release that loses none at these bounds)."""
    model = kafka(kafka="2.4.0", records=1, epochs=2, fencing=True)
    states = list(reachable(model))
    assert len(states) > 2000
    assert any(s.replicas[0].fenced and s.ctrl_live & 1 for s in states)  # owed states
    assert all(no_committed_data_loss(s) is None for s in states)


# ------------------------------------------------ unclean election in KRaft (KAFKA-12670)


def _states(**values) -> int:
    return len(reachable(kafka(**values)))


def test_the_kraft_controller_ignores_unclean_election_before_3_9():
    """ConfigurationControlManager.uncleanLeaderElectionEnabledForTopic returns false in
    3.3.0 to 3.8.0; from 3.9.0 it reads the topic's setting (KAFKA-12670)."""
    small = dict(records=1, epochs=2, crashes=1)
    ignored = make_config(dict(mode="3.8.0", kraft=True, unclean_election=True, **small))
    assert ignored.unclean_ignored and not ignored.elects_unclean
    assert "unclean(ignored)" in ignored.describe()
    assert make_config(dict(mode="3.8.0", unclean_election=True)).elects_unclean  # ZooKeeper
    assert _states(kafka="3.8.0", kraft=True, unclean_election=True, **small) == _states(
        kafka="3.8.0", kraft=True, **small
    )
    honoured = make_config(dict(mode="3.9.0", kraft=True, unclean_election=True, **small))
    assert honoured.elects_unclean and not honoured.unclean_ignored
    # An unclean election replaces a leaderless partition by a led one, so the spaces
    # differ, not always in size (16,040 states against 15,907; 28,344 against 28,392
    # since a leader proposes from a stale partition version, whose refused requests
    # the leaderless states keep queued too).
    clean = reachable(kafka(kafka="3.9.0", kraft=True, **small))
    unclean = reachable(kafka(kafka="3.9.0", kraft=True, unclean_election=True, **small))
    assert unclean - clean and all(s.ctrl_leader != NO_LEADER for s in unclean - clean)
    # The unclean election itself: r1 left the ISR, r0 crashed; only 3.9.0 elects r1.
    steps = [
        "shrink_isr(leader=r0, follower=r1)",
        "alter_isr(leader=r0)",
        "crash(replica=r0, keep=0)",
    ]
    for release, choices in (("3.8.0", [-1]), ("3.9.0", [1])):
        model = kafka(kafka=release, kraft=True, unclean_election=True, **small)
        s = execute(model, [parse_action(t) for t in steps])[-1][1]
        assert (s.ctrl_leader, s.ctrl_isr) == (0, 0b01)
        assert model._failover_choices(s, 0) == choices, release


def test_the_cli_says_when_kafka_ignores_unclean_election(capsys):
    assert main(["check", "--kafka", "3.7.0", "--kraft", "--unclean", "--max-states", "9"]) == 3
    captured = capsys.readouterr()
    assert captured.err.splitlines()[0] == (
        "replcheck: note: Kafka 3.7.0's KRaft controller ignores "
        "unclean.leader.election.enable (read from 3.9.0, KAFKA-12670): no unclean "
        "elections in this run"
    )
    assert "unclean(ignored)" in captured.out
    assert main(["check", "--kafka", "3.9.0", "--kraft", "--unclean", "--max-states", "9"]) == 3
    assert "note:" not in capsys.readouterr().err
    compare = ["compare", "--kafka", "3.8.0,3.9.0", "--kraft", "--unclean", "--records", "1"]
    assert main([*compare, "--epochs", "2", "--quiet"]) == 1
    out = capsys.readouterr().out
    assert "min_isr=1 unclean(ignored by 3.8.0) kraft" in out.splitlines()[0]


# ------------------------------------- a leaderless partition in KRaft (stepping down)

OFFLINE_STEPS = [
    "write(leader=r0)",
    "shrink_isr(leader=r0, follower=r1)",
    "alter_isr(leader=r0)",
    "crash(replica=r0, keep=1)",
    "notice_crash(replica=r0, new_leader=none)",
]


def test_a_kraft_follower_steps_to_no_leader_and_zookeeper_skips_the_request():
    """KRaft: ReplicaManager.applyLocalFollowersDelta calls makeFollower for a leaderless
    partition "so that a replica with no leader can step down" (3.3 to 4.1): the follower
    takes the new leader epoch and stops its fetcher.  ZooKeeper: makeFollowers changes a
    partition's state only "when the leader is available", so the request is skipped."""
    kraft = kafka(kafka="3.9.1", kraft=True, records=1)
    offline = run(kraft, OFFLINE_STEPS)[-1]
    assert (offline.ctrl_leader, offline.ctrl_epoch) == (-1, 2)
    r1 = run(kraft, [*OFFLINE_STEPS, "deliver(replica=r1)"])[-1].replicas[1]
    assert (r1.leader, r1.epoch, r1.inflight) == (-1, 2, ())
    zookeeper = kafka(kafka="3.9.1", kraft=False, records=1)
    offline = run(zookeeper, OFFLINE_STEPS)[-1]
    assert offline.ctrl_leader == -1
    assert A("deliver", 1) not in list(zookeeper.actions(offline))


def test_a_fenced_leader_steps_down_when_its_partition_goes_offline():
    """With --fencing the leader still runs: the leaderless record makes it a follower of
    nobody, so it takes no more writes (before, the model let it lead on until unfenced)."""
    model = kafka(kafka="4.1.0", fencing=True, records=2)
    steps = [*OFFLINE_STEPS[:3], "fence(replica=r0, new_leader=none)"]
    fenced = run(model, steps)[-1]
    assert A("write", 0) in list(model.actions(fenced))  # its metadata lags: it leads on
    stepped = run(model, [*steps, "deliver(replica=r0)"])[-1]
    r0 = stepped.replicas[0]
    assert (r0.leader, r0.epoch, r0.isr, r0.pending, r0.fenced) == (-1, 2, 0, 0, 1)
    assert A("write", 0) not in list(model.actions(stepped))
    assert A("unfence", 0) in list(model.actions(stepped))
