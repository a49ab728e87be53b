package org.apache.kafka.controller

import java.util.{Collections, List => JList, OptionalLong}
import java.util.concurrent.TimeUnit

import scala.jdk.CollectionConverters._

import org.apache.kafka.common.{Uuid, TopicPartition}
import org.apache.kafka.common.message._
import org.apache.kafka.common.metadata._
import org.apache.kafka.common.protocol.{ApiKeys, ApiMessage}
import org.apache.kafka.common.security.auth.KafkaPrincipal
import org.apache.kafka.metadata.BrokerHeartbeatReply
import org.apache.kafka.metadata.PartitionRegistration
import org.apache.kafka.server.common.{ApiMessageAndVersion, MetadataVersion}
import org.apache.kafka.timeline.SnapshotRegistry

import replcheck.harness.Compat.LogContext

/** The controller's managers, as QuorumController wires them (ControllerCompat.managers). */
final case class Managers(
  features: FeatureControlManager,
  cluster: ClusterControlManager,
  configs: ConfigurationControlManager,
  replication: ReplicationControlManager,
)

/** The KRaft controller's partition logic, Kafka's own managers wired as the
 *  QuorumController wires them, driven one request at a time.  It sits in Kafka's
 *  package to reach the package-private methods QuorumController calls.
 *
 *  Every result's records are replayed into the managers at once (the controller's
 *  view) and handed to ``publish`` as one batch of the metadata log; the brokers see
 *  them only when the driver moves their cursor. */
final class ControllerBench(
  brokers: Int,
  metadataVersion: MetadataVersion,
  elr: Boolean,
  log: replcheck.harness.MetadataLog,
) {
  val sessionTimeoutMs = 9000L
  /** The controller's own clock: its session timeouts do not age the brokers' lag timers. */
  val time = new replcheck.harness.StepClock()
  private val logContext = new LogContext("[bench] ")
  private val snapshots = new SnapshotRegistry(logContext)
  val clusterId: String = "replcheck-harness-cluster"
  val topic = "t"
  var topicId: Uuid = Uuid.ZERO_UUID

  /** Kafka's managers, built as the release's QuorumController builds them. */
  private val managers = ControllerCompat.managers(logContext, snapshots, clusterId, time,
    TimeUnit.MILLISECONDS.toNanos(sessionTimeoutMs), elr)
  val features: FeatureControlManager = managers.features
  val cluster: ClusterControlManager = managers.cluster
  val configs: ConfigurationControlManager = managers.configs
  val replication: ReplicationControlManager = managers.replication

  private var epochs = Map.empty[Int, Long]
  private var incarnations = Map.empty[Int, Uuid]
  def brokerEpoch(id: Int): Long = epochs.getOrElse(id, -1L)

  /** Replays a result's records into the managers and publishes them as one batch;
   *  returns the offset of the batch's first record. */
  def commit(records: JList[ApiMessageAndVersion]): Long = {
    val first = log.append(records)
    records.asScala.zipWithIndex.foreach { case (r, k) =>
      replay(r.message, first + k)
      val p = if (topicId == Uuid.ZERO_UUID) None else Option(partition)
      log.noteEpoch(first + k, p.map(_.leaderEpoch).getOrElse(-1), p.map(_.partitionEpoch).getOrElse(-1))
    }
    first
  }

  private def replay(message: ApiMessage, offset: Long): Unit = message match {
    case r: FeatureLevelRecord => features.replay(r)
    case r: RegisterBrokerRecord => cluster.replay(r, offset)
    case r: UnregisterBrokerRecord => cluster.replay(r)
    case r: FenceBrokerRecord => cluster.replay(r)
    case r: UnfenceBrokerRecord => cluster.replay(r)
    case r: BrokerRegistrationChangeRecord => cluster.replay(r)
    case r: TopicRecord => replication.replay(r)
    case r: PartitionRecord => replication.replay(r)
    case r: PartitionChangeRecord => replication.replay(r)
    case r: RemoveTopicRecord => replication.replay(r)
    case r: ConfigRecord => configs.replay(r)
    case _: NoOpRecord => ()
    case other => if (!ControllerCompat.replayOther(managers, other))
      throw new IllegalStateException(s"the bench cannot replay ${other.getClass.getSimpleName}")
  }

  /** The cluster as the model starts it: every broker registered and unfenced, the
   *  topic created with ``assignment`` (its first replica leads, Kafka's own choice). */
  def bootstrap(assignment: Seq[Int], minIsr: Int, unclean: Boolean, dirs: Int => Uuid): Unit = {
    commit(ControllerCompat.bootstrapFeatures(metadataVersion, elr))
    cluster.activate()
    (0 until brokers).foreach(id => register(id, dirs(id), previousEpoch = -1L))
    (0 until brokers).foreach(id => heartbeat(id, fence = false))
    val request = new CreateTopicsRequestData()
    val t = new CreateTopicsRequestData.CreatableTopic().setName(topic).setNumPartitions(-1).setReplicationFactor(-1.toShort)
    t.assignments().add(new CreateTopicsRequestData.CreatableReplicaAssignment()
      .setPartitionIndex(0).setBrokerIds(assignment.map(Integer.valueOf).asJava))
    ControllerCompat.addTopicConfig(t, "min.insync.replicas", minIsr.toString)
    ControllerCompat.addTopicConfig(t, "unclean.leader.election.enable", unclean.toString)
    request.topics().add(t)
    val result = ControllerCompat.createTopics(replication, context(ApiKeys.CREATE_TOPICS, ApiKeys.CREATE_TOPICS.latestVersion()),
      request, Collections.singleton(topic))
    val created = result.response().topics().find(topic)
    if (created.errorCode() != 0) throw new IllegalStateException(s"topic creation failed: ${created.errorMessage()}")
    topicId = created.topicId()
    commit(result.records())
  }

  /** A (new) broker process registers: a new incarnation and broker epoch. */
  def register(id: Int, dir: Uuid, previousEpoch: Long): Unit = {
    val incarnation = Uuid.randomUuid()
    incarnations += id -> incarnation
    val req = new BrokerRegistrationRequestData()
      .setBrokerId(id).setClusterId(clusterId).setIncarnationId(incarnation)
    req.listeners().add(new BrokerRegistrationRequestData.Listener()
      .setName("PLAINTEXT").setHost("localhost").setPort(9092 + id).setSecurityProtocol(0.toShort))
    ControllerCompat.describeBroker(req, dir, previousEpoch)
    val newEpoch = log.end
    val result = ControllerCompat.registerBroker(managers, req, newEpoch)
    commit(result.records())
    epochs += id -> cluster.brokerRegistrations().get(id).epoch()
  }

  /** The broker's heartbeat: unfences it when it asks to be unfenced (and is caught up). */
  def heartbeat(id: Int, fence: Boolean, shutdown: Boolean = false): BrokerHeartbeatReply = {
    val req = new BrokerHeartbeatRequestData().setBrokerId(id).setBrokerEpoch(brokerEpoch(id))
      .setCurrentMetadataOffset(Long.MaxValue / 2).setWantFence(fence).setWantShutDown(shutdown)
    val result = ControllerCompat.heartbeat(managers, req, brokerEpoch(id))
    commit(result.records())
    result.response()
  }

  /** The controller stops hearing from ``id``: its session expires and it is fenced
   *  (ReplicationControlManager.maybeFenceOneStaleBroker), the others heartbeating. */
  def expireSession(id: Int): Unit = {
    time.sleep(sessionTimeoutMs + 1)
    (0 until brokers).filter(b => b != id && isUnfenced(b)).foreach { b =>
      val req = new BrokerHeartbeatRequestData().setBrokerId(b).setBrokerEpoch(brokerEpoch(b))
        .setCurrentMetadataOffset(Long.MaxValue / 2).setWantFence(false)
      commit(ControllerCompat.stillAlive(managers, req, brokerEpoch(b)))
    }
    var more = true
    while (more) {
      val (records, again) = ControllerCompat.fenceOneStaleBroker(managers)
      commit(records)
      more = again && !records.isEmpty
    }
  }

  def isUnfenced(id: Int): Boolean = Option(cluster.brokerRegistrations().get(id)).exists(r => !r.fenced())

  def alterPartition(request: AlterPartitionRequestData, version: Short): (AlterPartitionResponseData, Long, Int) = {
    val result = replication.alterPartition(context(ApiKeys.ALTER_PARTITION, version), request)
    val first = commit(result.records())
    (result.response(), first, result.records().size)
  }

  def electPreferred(): ElectLeadersResponseData = {
    val req = new ElectLeadersRequestData().setElectionType(0.toByte)
    val tp = new ElectLeadersRequestData.TopicPartitions().setTopic(topic).setPartitions(List(Integer.valueOf(0)).asJava)
    req.topicPartitions().add(tp)
    val result = replication.electLeaders(req)
    commit(result.records())
    result.response()
  }

  /** The periodic preferred-leader balancer (with ELR: the last known leader's recovery). */
  def balance(): Unit = commit(replication.maybeBalancePartitionLeaders().records())

  /** A reassignment that only reorders the replicas: a replicas-only partition change. */
  def reorder(replicas: Seq[Int]): Unit = {
    val req = new AlterPartitionReassignmentsRequestData()
    val t = new AlterPartitionReassignmentsRequestData.ReassignableTopic().setName(topic)
    t.partitions().add(new AlterPartitionReassignmentsRequestData.ReassignablePartition()
      .setPartitionIndex(0).setReplicas(replicas.map(Integer.valueOf).asJava))
    req.topics().add(t)
    val result = replication.alterPartitionReassignments(req)
    val err = result.response().responses().get(0).partitions().get(0)
    if (err.errorCode() != 0) throw new IllegalStateException(s"reorder refused: ${err.errorMessage()}")
    commit(result.records())
  }

  /** The broker reports the directory the partition is in (AssignReplicasToDirs, KIP-858). */
  def assignDir(id: Int, dir: Uuid): Unit =
    commit(ControllerCompat.assignReplicasToDirs(managers, id, brokerEpoch(id), dir, topicId))

  private def context(key: ApiKeys, version: Short) = new ControllerRequestContext(
    new RequestHeaderData().setRequestApiKey(key.id).setRequestApiVersion(version),
    KafkaPrincipal.ANONYMOUS, OptionalLong.empty())

  def partition: PartitionRegistration = replication.getPartition(topicId, 0)
  def topicPartition = new TopicPartition(topic, 0)
}
