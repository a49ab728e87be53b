"""Kafka's log lines read as evidence: the lines of 3.3 and of 4.1, as they were written
by real runs of replcheck reproduce."""

from __future__ import annotations

from replcheck.cluster import evidence

LEADER_41 = (
    "[16:30:17,044] INFO [Broker id=0] Leader t-0 with topic id Some(oGd) starts at leader "
    "epoch 0 from offset 0 with partition epoch 0, high watermark 0, ISR [0,1,2], adding "
    "replicas [] and removing replicas [] . Previous leader None and previous leader epoch "
    "was -1. (state.change.logger)"
)
SKIPPED_41 = (
    "[16:30:24,309] INFO [Broker id=0] Skipped the become-leader state change for t-0 with "
    "topic id Some(oGd) and partition state LeaderAndIsrPartitionState(topicName='t', "
    "partitionIndex=0, controllerEpoch=-1, leader=0, leaderEpoch=0, isr=[0, 1], "
    "partitionEpoch=1, replicas=[0, 1, 2]) since it is already the leader with leader epoch "
    "0. (state.change.logger)"
)
FOLLOWER_41 = (
    "[16:30:30,214] INFO [Broker id=1] Follower t-0 starts at leader epoch 1 from offset 1 "
    "with partition epoch 4 and high watermark 0. Current leader is 2. Previous leader "
    "Some(2) and previous leader epoch was 1. (state.change.logger)"
)
SHRINK_41 = (
    "[16:30:23,607] INFO [Partition t-0 broker=0] Shrinking ISR from 0,1,2 to 0,1. Leader: "
    "(highWatermark: 0, endOffset: 0). Out of sync replicas: (brokerId: 2, endOffset: -1, "
    "lastCaughtUpTimeMs: 1796315417026). (kafka.cluster.Partition)"
)
SHRINK_33 = (
    "[16:32:59,516] INFO [Partition t-0 broker=0] Shrinking ISR from 0,1,2 to 0. Leader: "
    "(highWatermark: 0, endOffset: 0). Out of sync replicas: (brokerId: 1, endOffset: -1) "
    "(brokerId: 2, endOffset: -1). (kafka.cluster.Partition)"
)
CONTROLLER_33 = (
    "[16:31:23,285] DEBUG [Controller 3000] partition change for t-0 with topic ID h8J: isr: "
    "[0, 1, 2] -> [0], leaderEpoch: 0 -> 1, partitionEpoch: 0 -> 1 "
    "(org.apache.kafka.controller.ReplicationControlManager)"
)
CONTROLLER_41 = (
    "[16:30:23,700] DEBUG [QuorumController id=3000] Replayed partition change "
    "PartitionChangeRecord(partitionId=0, topicId=oGd, isr=[0, 1]) for topic t "
    "(org.apache.kafka.controller.ReplicationControlManager)"
)


class Logs:
    def __init__(self, **logs: list[str]) -> None:
        self.logs = {k.replace("_", "-"): "\n".join(v) + "\n" for k, v in logs.items()}

    def read_log(self, node: str, since: int = 0) -> str:
        return self.logs.get(node, "")[since:]


def test_the_partition_epoch_a_broker_applied() -> None:
    logs = Logs(broker_0=[LEADER_41, SHRINK_41, SKIPPED_41], broker_1=[FOLLOWER_41])
    assert evidence.applied_epoch(logs, 0) == 1  # the skipped replay still applied epoch 1
    assert evidence.applied_epoch(logs, 1) == 4
    assert evidence.applied_epoch(logs, 2) == -1
    assert evidence.applied_leader_epoch(logs, 1) == 1


def test_the_controllers_partition_epoch_in_both_log_forms() -> None:
    assert evidence.controller_epoch(Logs(controller=[CONTROLLER_33])) == 1
    assert evidence.controller_epoch(Logs(controller=[CONTROLLER_41, CONTROLLER_41])) == 2
    assert evidence.controller_epoch(Logs(controller=[])) == 0


def test_shrink_lines_name_the_replicas_they_remove() -> None:
    logs = Logs(broker_0=[LEADER_41, SHRINK_41, SHRINK_33])
    found = evidence.shrink_lines(logs, 0)
    assert [evidence.out_of_sync(line) for line in found] == [{2}, {1, 2}]


def test_when_a_broker_last_started_a_leader_epoch() -> None:
    at = evidence.epoch_started_at(Logs(broker_1=[FOLLOWER_41]), 1)
    assert at > 0
    assert evidence.epoch_started_at(Logs(broker_1=[SHRINK_41]), 1) == 0.0


RECORD_41 = (
    "[16:52:08,804] INFO [QuorumController id=3000] Replayed PartitionRecord for new partition "
    "t-0 with topic ID h6W and PartitionRegistration(replicas=[0, 1, 2], isr=[0, 1, 2], "
    "elr=[], leader=0, leaderRecoveryState=RECOVERED, leaderEpoch=0, partitionEpoch=0). "
    "(org.apache.kafka.controller.ReplicationControlManager)"
)
REORDER_41 = (
    "[16:52:13,101] DEBUG [QuorumController id=3000] Replayed partition change "
    "PartitionChangeRecord(partitionId=0, topicId=h6W, isr=null, leader=-2, replicas=[2, 0, 1]) "
    "for topic t (org.apache.kafka.controller.ReplicationControlManager)"
)
ELECT_41 = REORDER_41.replace("leader=-2, replicas=[2, 0, 1]", "leader=2, replicas=null")
CREATED_33 = (
    "[16:49:33,524] INFO [Controller 3000] Created partition t-0 with topic ID C14 and "
    "PartitionRegistration(replicas=[0, 1, 2], isr=[0, 1, 2], leader=0, leaderEpoch=0, "
    "partitionEpoch=0). (org.apache.kafka.controller.ReplicationControlManager)"
)
ELECT_33 = (
    "[16:49:50,000] DEBUG [Controller 3000] partition change for t-0 with topic ID C14: "
    "leader: 0 -> 2, leaderEpoch: 1 -> 2, partitionEpoch: 3 -> 4 "
    "(org.apache.kafka.controller.ReplicationControlManager)"
)


def test_the_controllers_leader_in_both_log_forms() -> None:
    assert evidence.controller_leader(Logs(controller=[])) is None
    assert evidence.controller_leader(Logs(controller=[RECORD_41, REORDER_41])) == 0
    assert evidence.controller_leader(Logs(controller=[RECORD_41, REORDER_41, ELECT_41])) == 2
    assert evidence.controller_leader(Logs(controller=[CREATED_33, CONTROLLER_33])) == 0
    assert evidence.controller_leader(Logs(controller=[CREATED_33, ELECT_33])) == 2
