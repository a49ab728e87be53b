package org.apache.kafka.controller

import java.util.{Collections, List => JList, OptionalLong}
import java.util.concurrent.TimeUnit

import scala.jdk.CollectionConverters._

import kafka.server.KafkaRaftServer
import org.apache.kafka.common.{Uuid, TopicPartition}
import org.apache.kafka.common.message._
import org.apache.kafka.common.metadata._
import org.apache.kafka.common.protocol.{ApiKeys, ApiMessage}
import org.apache.kafka.common.security.auth.KafkaPrincipal
import org.apache.kafka.common.utils.LogContext
import org.apache.kafka.metadata.BrokerHeartbeatReply
import org.apache.kafka.metadata.PartitionRegistration
import org.apache.kafka.metadata.placement.StripedReplicaPlacer
import org.apache.kafka.server.common.{ApiMessageAndVersion, EligibleLeaderReplicasVersion, MetadataVersion}
import org.apache.kafka.timeline.SnapshotRegistry

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

  val features: FeatureControlManager = new FeatureControlManager.Builder()
    .setLogContext(logContext)
    .setSnapshotRegistry(snapshots)
    .setQuorumFeatures(new QuorumFeatures(3000, QuorumFeatures.defaultSupportedFeatureMap(true), List(Integer.valueOf(3000)).asJava))
    .build()
  val cluster: ClusterControlManager = new ClusterControlManager.Builder()
    .setLogContext(logContext)
    .setClusterId(clusterId)
    .setTime(time)
    .setSnapshotRegistry(snapshots)
    .setSessionTimeoutNs(TimeUnit.MILLISECONDS.toNanos(sessionTimeoutMs))
    .setReplicaPlacer(new StripedReplicaPlacer(new java.util.Random(0)))
    .setFeatureControlManager(features)
    .setBrokerShutdownHandler((id, clean, records) => replication.handleBrokerShutdown(id, clean, records))
    .build()
  val configs: ConfigurationControlManager = new ConfigurationControlManager.Builder()
    .setLogContext(logContext)
    .setSnapshotRegistry(snapshots)
    .setKafkaConfigSchema(KafkaRaftServer.configSchema)
    .setFeatureControl(features)
    .build()
  lazy val replication: ReplicationControlManager = new ReplicationControlManager.Builder()
    .setSnapshotRegistry(snapshots)
    .setLogContext(logContext)
    .setMaxElectionsPerImbalance(Integer.MAX_VALUE)
    .setConfigurationControl(configs)
    .setClusterControl(cluster)
    .setFeatureControl(features)
    .build()

  private var epochs = Map.empty[Int, Long]
  private var incarnations = Map.empty[Int, Uuid]
  def brokerEpoch(id: Int): Long = epochs.getOrElse(id, -1L)

  /** Replays a result's records into the managers and publishes them as one batch;
   *  returns the offset of the batch's first record. */
  def commit(records: JList[ApiMessageAndVersion]): Long = {
    val first = log.append(records)
    records.asScala.zipWithIndex.foreach { case (r, k) =>
      replay(r.message, first + k)
      log.noteEpoch(first + k, if (topicId == Uuid.ZERO_UUID) -1 else Option(partition).map(_.leaderEpoch).getOrElse(-1))
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
    case r: ClearElrRecord => replication.replay(r)
    case _: NoOpRecord => ()
    case other => throw new IllegalStateException(s"the bench cannot replay ${other.getClass.getSimpleName}")
  }

  /** The cluster as the model starts it: every broker registered and unfenced, the
   *  topic created with ``assignment`` (its first replica leads, Kafka's own choice). */
  def bootstrap(assignment: Seq[Int], minIsr: Int, unclean: Boolean, dirs: Int => Uuid): Unit = {
    val boot = new java.util.ArrayList[ApiMessageAndVersion]()
    boot.add(new ApiMessageAndVersion(new FeatureLevelRecord()
      .setName(MetadataVersion.FEATURE_NAME).setFeatureLevel(metadataVersion.featureLevel()), 0.toShort))
    if (EligibleLeaderReplicasVersion.FEATURE_NAME != null)
      boot.add(new ApiMessageAndVersion(new FeatureLevelRecord()
        .setName(EligibleLeaderReplicasVersion.FEATURE_NAME)
        .setFeatureLevel(if (elr) EligibleLeaderReplicasVersion.ELRV_1.featureLevel() else 0.toShort), 0.toShort))
    commit(boot)
    cluster.activate()
    (0 until brokers).foreach(id => register(id, dirs(id), previousEpoch = -1L))
    (0 until brokers).foreach(id => heartbeat(id, fence = false))
    val request = new CreateTopicsRequestData()
    val t = new CreateTopicsRequestData.CreatableTopic().setName(topic).setNumPartitions(-1).setReplicationFactor(-1.toShort)
    t.assignments().add(new CreateTopicsRequestData.CreatableReplicaAssignment()
      .setPartitionIndex(0).setBrokerIds(assignment.map(Integer.valueOf).asJava))
    t.configs().add(new CreateTopicsRequestData.CreatableTopicConfig().setName("min.insync.replicas").setValue(minIsr.toString))
    t.configs().add(new CreateTopicsRequestData.CreatableTopicConfig()
      .setName("unclean.leader.election.enable").setValue(unclean.toString))
    request.topics().add(t)
    val result = replication.createTopics(context(ApiKeys.CREATE_TOPICS, ApiKeys.CREATE_TOPICS.latestVersion()),
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
      .setLogDirs(List(dir).asJava).setPreviousBrokerEpoch(previousEpoch)
    req.listeners().add(new BrokerRegistrationRequestData.Listener()
      .setName("PLAINTEXT").setHost("localhost").setPort(9092 + id).setSecurityProtocol(0.toShort))
    req.features().add(new BrokerRegistrationRequestData.Feature().setName(MetadataVersion.FEATURE_NAME)
      .setMinSupportedVersion(MetadataVersion.MINIMUM_VERSION.featureLevel())
      .setMaxSupportedVersion(MetadataVersion.latestTesting().featureLevel()))
    req.features().add(new BrokerRegistrationRequestData.Feature().setName(EligibleLeaderReplicasVersion.FEATURE_NAME)
      .setMinSupportedVersion(0.toShort).setMaxSupportedVersion(EligibleLeaderReplicasVersion.ELRV_1.featureLevel()))
    val newEpoch = log.end
    val result = cluster.registerBroker(req, newEpoch, features.finalizedFeatures(Long.MaxValue), true)
    commit(result.records())
    epochs += id -> cluster.brokerRegistrations().get(id).epoch()
  }

  /** The broker's heartbeat: unfences it when it asks to be unfenced (and is caught up). */
  def heartbeat(id: Int, fence: Boolean, shutdown: Boolean = false): BrokerHeartbeatReply = {
    val req = new BrokerHeartbeatRequestData().setBrokerId(id).setBrokerEpoch(brokerEpoch(id))
      .setCurrentMetadataOffset(Long.MaxValue / 2).setWantFence(fence).setWantShutDown(shutdown)
    cluster.trackBrokerHeartbeat(id, brokerEpoch(id))
    val result = replication.processBrokerHeartbeat(req, brokerEpoch(id))
    commit(result.records())
    result.response()
  }

  /** The controller stops hearing from ``id``: its session expires and it is fenced
   *  (ReplicationControlManager.maybeFenceOneStaleBroker), the others heartbeating. */
  def expireSession(id: Int): Unit = {
    time.sleep(sessionTimeoutMs + 1)
    (0 until brokers).filter(b => b != id && isUnfenced(b)).foreach(b => cluster.trackBrokerHeartbeat(b, brokerEpoch(b)))
    var more = true
    while (more) {
      val result = replication.maybeFenceOneStaleBroker()
      commit(result.records())
      more = result.response().booleanValue() && !result.records().isEmpty
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

  def assignDir(id: Int, dir: Uuid): Unit = {
    val req = new AssignReplicasToDirsRequestData().setBrokerId(id).setBrokerEpoch(brokerEpoch(id))
    val d = new AssignReplicasToDirsRequestData.DirectoryData().setId(dir)
    val t = new AssignReplicasToDirsRequestData.TopicData().setTopicId(topicId)
    t.partitions().add(new AssignReplicasToDirsRequestData.PartitionData().setPartitionIndex(0))
    d.topics().add(t)
    req.directories().add(d)
    commit(replication.handleAssignReplicasToDirs(req).records())
  }

  private def context(key: ApiKeys, version: Short) = new ControllerRequestContext(
    new RequestHeaderData().setRequestApiKey(key.id).setRequestApiVersion(version),
    KafkaPrincipal.ANONYMOUS, OptionalLong.empty())

  def partition: PartitionRegistration = replication.getPartition(topicId, 0)
  def topicPartition = new TopicPartition(topic, 0)
}
