// Kafka 3.7: what the harness calls that differs from other releases.  Each family
// folder has this one file with the same names; the common code under src/main uses
// only these names for what differs between releases.
//
// Against 3.8 (k38): no BrokerUncleanShutdownHandler (ClusterControlManager.registerBroker
// only logs an unclean registration: "TODO(KIP-966)"); MemoryRecords.withRecords takes a
// CompressionType; TimerTask has no isCancelled.
//
// Against 3.9 (k39), as in 3.8: ClusterControlManager.registerBroker also takes the
// request's API version (QuorumController passes the header's); KRaftMetadataCache has no
// kraft.version supplier; CreateTopics' config is CreateableTopicConfig;
// NodeToControllerChannelManager has no getTimeoutMs.
//
// In 3.7 to 3.9, against 4.0 (k40): the broker's classes are Scala in kafka_2.13 (UnifiedLog,
// BrokerTopicStats, DelayedOperationPurgatory, PartitionFetchState, BrokerEndPoint in
// kafka.cluster); the channel to the controller is org.apache.kafka.server's
// NodeToControllerChannelManager; ReplicaManager.appendRecords is keyed by TopicPartition;
// DefaultAlterPartitionManager and ReplicaFetcherThread take a metadata.version supplier;
// the leader epoch cache is an Option; MetadataProvenance has no isOffsetBatchAligned.  In
// the controller: ELR is a builder flag (eligible.leader.replicas.enable, KIP-966 preview),
// not a feature level; a heartbeat's session is touched inside
// ReplicationControlManager.processBrokerHeartbeat; maybeFenceOneStaleBroker answers Void.

package kafka.cluster {
  /** Reads the Partition state Kafka keeps package-private (for observation only). */
  object HarnessAccess {
    private def state(p: Partition): PartitionState = p.partitionState
    def isr(p: Partition): Set[Int] = state(p).isr
    def maximalIsr(p: Partition): Set[Int] = state(p).maximalIsr
    def isInflight(p: Partition): Boolean = state(p).isInflight
    def stateName(p: Partition): String = state(p).getClass.getSimpleName
    def describe(p: Partition): String = state(p).toString
    /** The replicas a pending shrink proposes to remove, if the state is one. */
    def shrinking(p: Partition): Option[Set[Int]] = state(p) match {
      case s: PendingShrinkIsr => Some(s.outOfSyncReplicaIds)
      case _ => None
    }
    def epochStart(p: Partition): Option[Long] = p.leaderEpochStartOffsetOpt
  }
}

package kafka.server {
  import org.apache.kafka.common.TopicPartition

  /** Reads the fetcher and AlterPartition state Kafka keeps package-private (for
   *  observation only). */
  object ServerAccess {
    def fetchState(f: AbstractFetcherThread, tp: TopicPartition): Option[PartitionFetchState] = f.fetchState(tp)
    def fetcher(m: ReplicaFetcherManager, tp: TopicPartition): Option[ReplicaFetcherThread] = m.getFetcher(tp)
    def unsentAlterPartition(m: DefaultAlterPartitionManager): Boolean = !m.unsentIsrUpdates.isEmpty
  }
}

package org.apache.kafka.controller {
  import java.util.{List => JList, Set => JSet}

  import scala.jdk.CollectionConverters._

  import kafka.server.KafkaRaftServer
  import org.apache.kafka.common.Uuid
  import org.apache.kafka.common.message._
  import org.apache.kafka.common.metadata.FeatureLevelRecord
  import org.apache.kafka.common.protocol.{ApiKeys, ApiMessage}
  import org.apache.kafka.common.utils.Time
  import org.apache.kafka.metadata.{BrokerHeartbeatReply, BrokerRegistrationReply, PartitionRegistration}
  import org.apache.kafka.metadata.placement.StripedReplicaPlacer
  import org.apache.kafka.server.common.{ApiMessageAndVersion, MetadataVersion}
  import org.apache.kafka.timeline.SnapshotRegistry

  import replcheck.harness.Compat.LogContext

  /** The controller's calls whose shape differs between releases. */
  object ControllerCompat {
    def managers(logContext: LogContext, snapshots: SnapshotRegistry, clusterId: String, time: Time,
                 sessionTimeoutNs: Long, elr: Boolean): Managers = {
      val features = new FeatureControlManager.Builder()
        .setLogContext(logContext)
        .setSnapshotRegistry(snapshots)
        .setQuorumFeatures(new QuorumFeatures(3000, QuorumFeatures.defaultFeatureMap(true),
          List(Integer.valueOf(3000)).asJava))
        .setMetadataVersion(MetadataVersion.MINIMUM_KRAFT_VERSION) // as QuorumController, till the bootstrap record
        .build()
      val cluster = new ClusterControlManager.Builder()
        .setLogContext(logContext)
        .setClusterId(clusterId)
        .setTime(time)
        .setSnapshotRegistry(snapshots)
        .setSessionTimeoutNs(sessionTimeoutNs)
        .setReplicaPlacer(new StripedReplicaPlacer(new java.util.Random(0)))
        .setFeatureControlManager(features)
        .build()
      val configs = new ConfigurationControlManager.Builder()
        .setLogContext(logContext)
        .setSnapshotRegistry(snapshots)
        .setKafkaConfigSchema(KafkaRaftServer.configSchema)
        .build()
      val replication = new ReplicationControlManager.Builder()
        .setSnapshotRegistry(snapshots)
        .setLogContext(logContext)
        .setEligibleLeaderReplicasEnabled(elr)
        .setMaxElectionsPerImbalance(Integer.MAX_VALUE)
        .setConfigurationControl(configs)
        .setClusterControl(cluster)
        .setFeatureControl(features)
        .build()
      Managers(features, cluster, configs, replication)
    }

    /** The bootstrap's feature level: metadata.version (ELR is the builder's flag). */
    def bootstrapFeatures(metadataVersion: MetadataVersion, elr: Boolean): JList[ApiMessageAndVersion] =
      List(new ApiMessageAndVersion(new FeatureLevelRecord()
        .setName(MetadataVersion.FEATURE_NAME).setFeatureLevel(metadataVersion.featureLevel()), 0.toShort)).asJava

    /** What a registering broker says of itself: its directory (KIP-858), the epoch its
     *  clean shutdown left (KIP-966) and the features it supports. */
    def describeBroker(req: BrokerRegistrationRequestData, dir: Uuid, previousEpoch: Long): Unit = {
      req.setLogDirs(List(dir).asJava).setPreviousBrokerEpoch(previousEpoch)
      req.features().add(new BrokerRegistrationRequestData.Feature().setName(MetadataVersion.FEATURE_NAME)
        .setMinSupportedVersion(MetadataVersion.MINIMUM_KRAFT_VERSION.featureLevel())
        .setMaxSupportedVersion(MetadataVersion.latestTesting().featureLevel()))
    }

    def registerBroker(m: Managers, req: BrokerRegistrationRequestData,
                       newEpoch: Long): ControllerResult[BrokerRegistrationReply] =
      m.cluster.registerBroker(req, newEpoch, m.features.finalizedFeatures(Long.MaxValue),
        ApiKeys.BROKER_REGISTRATION.latestVersion())

    /** A heartbeat as QuorumController.processBrokerHeartbeat handles it (the session is
     *  touched inside ReplicationControlManager.processBrokerHeartbeat). */
    def heartbeat(m: Managers, req: BrokerHeartbeatRequestData, epoch: Long): ControllerResult[BrokerHeartbeatReply] =
      m.replication.processBrokerHeartbeat(req, epoch)

    /** Another broker's heartbeat keeps its session: here only a whole heartbeat does. */
    def stillAlive(m: Managers, req: BrokerHeartbeatRequestData, epoch: Long): JList[ApiMessageAndVersion] =
      m.replication.processBrokerHeartbeat(req, epoch).records()

    /** ReplicationControlManager.maybeFenceOneStaleBroker: its records, and whether to ask
     *  again (it answers Void here: while it fences). */
    def fenceOneStaleBroker(m: Managers): (JList[ApiMessageAndVersion], Boolean) = {
      val result = m.replication.maybeFenceOneStaleBroker()
      (result.records(), !result.records().isEmpty)
    }

    def replayOther(m: Managers, message: ApiMessage): Boolean = false

    /** ReplicationControlManager.handleAssignReplicasToDirs: broker ``id`` reports that
     *  partition 0 of ``topicId`` is in directory ``dir``. */
    def assignReplicasToDirs(m: Managers, id: Int, epoch: Long, dir: Uuid, topicId: Uuid): JList[ApiMessageAndVersion] = {
      val req = new AssignReplicasToDirsRequestData().setBrokerId(id).setBrokerEpoch(epoch)
      val d = new AssignReplicasToDirsRequestData.DirectoryData().setId(dir)
      val t = new AssignReplicasToDirsRequestData.TopicData().setTopicId(topicId)
      t.partitions().add(new AssignReplicasToDirsRequestData.PartitionData().setPartitionIndex(0))
      d.topics().add(t)
      req.directories().add(d)
      m.replication.handleAssignReplicasToDirs(req).records()
    }

    def elr(p: PartitionRegistration): Seq[Int] = Option(p.elr).map(_.toSeq).getOrElse(Seq.empty)
    def lastKnownElr(p: PartitionRegistration): Seq[Int] = Option(p.lastKnownElr).map(_.toSeq).getOrElse(Seq.empty)

    /** A topic config of a CreateTopics request (CreateableTopicConfig before 3.9). */
    def addTopicConfig(t: CreateTopicsRequestData.CreatableTopic, name: String, value: String): Unit =
      t.configs().add(new CreateTopicsRequestData.CreateableTopicConfig().setName(name).setValue(value))

    def createTopics(r: ReplicationControlManager, context: ControllerRequestContext, request: CreateTopicsRequestData,
                     describable: JSet[String]): ControllerResult[CreateTopicsResponseData] =
      r.createTopics(context, request, describable)
  }
}

package replcheck.harness {
  import java.io.File
  import java.nio.ByteBuffer
  import java.util.Optional
  import java.util.concurrent.ScheduledFuture
  import java.util.concurrent.atomic.AtomicBoolean

  import scala.jdk.CollectionConverters._

  import kafka.server._
  import kafka.server.metadata.KRaftMetadataCache
  import org.apache.kafka.clients.NodeApiVersions
  import org.apache.kafka.common.{TopicIdPartition, TopicPartition, Uuid}
  import org.apache.kafka.common.message.FetchResponseData
  import org.apache.kafka.common.metrics.Metrics
  import org.apache.kafka.common.protocol.{ApiMessage, Errors}
  import org.apache.kafka.common.requests.{AbstractRequest, FetchRequest, FetchResponse}
  import org.apache.kafka.common.requests.ProduceResponse.PartitionResponse
  import org.apache.kafka.common.utils.{Exit, Time}
  import org.apache.kafka.image.{MetadataDelta, MetadataImage, MetadataProvenance}
  import org.apache.kafka.metadata.properties.{MetaProperties, MetaPropertiesEnsemble, MetaPropertiesVersion, PropertiesUtils}
  import org.apache.kafka.server.{ControllerRequestCompletionHandler, NodeToControllerChannelManager}
  import org.apache.kafka.server.common.MetadataVersion
  import org.apache.kafka.server.util.timer.{Timer, TimerTask}
  import org.apache.kafka.storage.internals.log.{AppendOrigin, FetchIsolation, FetchParams, FetchPartitionData, LogDirFailureChannel}

  object Compat {
    type Scheduler = org.apache.kafka.server.util.Scheduler
    type LogDirFailureChannel = org.apache.kafka.storage.internals.log.LogDirFailureChannel
    type LogContext = org.apache.kafka.common.utils.LogContext
    type Records = org.apache.kafka.common.record.Records
    type MemoryRecords = org.apache.kafka.common.record.MemoryRecords
    type FileRecords = org.apache.kafka.common.record.FileRecords
    type RecordBatch = org.apache.kafka.common.record.RecordBatch
    type BrokerEndPoint = kafka.cluster.BrokerEndPoint
    type LogManager = kafka.log.LogManager
    type MetadataCache = KRaftMetadataCache
    type AlterPartitionManager = kafka.server.DefaultAlterPartitionManager
    type QuotaManagers = kafka.server.QuotaFactory.QuotaManagers
    type UnifiedLog = kafka.log.UnifiedLog

    /** The stepped scheduler as Kafka's. */
    def scheduler(step: StepScheduler): Scheduler = new Scheduler {
      override def startup(): Unit = ()
      override def shutdown(): Unit = step.shutdown()
      override def resizeThreadPool(newSize: Int): Unit = ()
      override def schedule(name: String, task: Runnable, delayMs: Long, periodMs: Long): ScheduledFuture[_] =
        step.schedule(name, task, delayMs, periodMs)
    }

    /** The purgatories' timer.  Produce requests wait with an infinite timeout and
     *  fetches never wait, so nothing here ever expires: it only holds what is added. */
    private final class HeldTimer extends Timer {
      private val held = scala.collection.mutable.ArrayBuffer.empty[TimerTask]
      override def add(timerTask: TimerTask): Unit = synchronized { held += timerTask }
      override def advanceClock(timeoutMs: Long): Boolean = false
      override def size(): Int = synchronized { held.size }
      override def close(): Unit = synchronized { held.clear() }
    }

    def kafkaVersion: String = org.apache.kafka.common.utils.AppInfoParser.getVersion
    def trapExit(): Unit = {
      Exit.setExitProcedure((code, msg) => throw new IllegalStateException(s"Kafka asked to exit($code): $msg"))
      Exit.setHaltProcedure((code, msg) => throw new IllegalStateException(s"Kafka asked to halt($code): $msg"))
    }
    /** The driver thread is no request handler thread (KafkaRequestHandler's check). */
    def bypassRequestThreadCheck(): Unit = KafkaRequestHandler.setBypassThreadCheck(true)
    def metadataVersion(name: String): MetadataVersion = MetadataVersion.fromVersionString(name)

    def record(value: Array[Byte]): MemoryRecords =
      org.apache.kafka.common.record.MemoryRecords.withRecords(org.apache.kafka.common.record.CompressionType.NONE,
        new org.apache.kafka.common.record.SimpleRecord(value))
    def readableRecords(buffer: ByteBuffer): MemoryRecords = org.apache.kafka.common.record.MemoryRecords.readableRecords(buffer)
    def openFileRecords(f: File): FileRecords = org.apache.kafka.common.record.FileRecords.open(f)

    def brokerTopicStats(): BrokerTopicStats = new BrokerTopicStats()

    /** meta.properties as ``kafka-storage format`` writes it (KIP-858: with the
     *  directory's id). */
    def writeMetaProperties(dir: File, id: Int, clusterId: String, dirId: Uuid): Unit = {
      val meta = new MetaProperties.Builder().setVersion(MetaPropertiesVersion.V1).setClusterId(clusterId)
        .setNodeId(id).setDirectoryId(dirId).build()
      PropertiesUtils.writePropertiesFile(meta.toProperties,
        new File(dir, MetaPropertiesEnsemble.META_PROPERTIES_NAME).getAbsolutePath, false)
    }

    def metadataCache(id: Int): MetadataCache = new MetadataCache(id)
    /** As BrokerServer builds it (keepPartitionMetadataFile: KRaft keeps partition.metadata). */
    def logManager(config: KafkaConfig, cache: MetadataCache, scheduler: Scheduler, time: Time,
                   stats: BrokerTopicStats, failures: LogDirFailureChannel): LogManager =
      kafka.log.LogManager(config, Seq.empty, cache, scheduler, time, stats, failures, keepPartitionMetadataFile = true)
    /** BrokerMetadataPublisher.initializeManagers: the LogManager starts with the topics
     *  of the first image (no stray detection: 3.7.1's isStray defaults to none, and
     *  3.7.0's startup takes only the topics). */
    def startLogs(logs: LogManager, cache: MetadataCache): Unit = logs.startup(cache.getAllTopics())
    def quotas(config: KafkaConfig, metrics: Metrics, time: Time, prefix: String): QuotaManagers =
      QuotaFactory.instantiate(config, metrics, time, prefix)
    def alterPartitionManager(channel: HeldChannel, scheduler: Scheduler, time: Time, id: Int,
                              brokerEpoch: () => Long, cache: MetadataCache): AlterPartitionManager =
      new DefaultAlterPartitionManager(controllerChannel(channel), scheduler, time, id, brokerEpoch,
        () => cache.metadataVersion())
    def unsentAlterPartition(m: AlterPartitionManager): Boolean = ServerAccess.unsentAlterPartition(m)

    /** The held channel as the release's channel to the controller. */
    private def controllerChannel(held: HeldChannel): NodeToControllerChannelManager = new NodeToControllerChannelManager {
      override def start(): Unit = ()
      override def shutdown(): Unit = ()
      override def controllerApiVersions(): Optional[NodeApiVersions] = Optional.empty()
      override def sendRequest(request: AbstractRequest.Builder[_ <: AbstractRequest],
                               callback: ControllerRequestCompletionHandler): Unit =
        held.hold(request, response => callback.onComplete(response))
    }

    /** What KafkaApis answers a fetch with (no node endpoints: no leader moved). */
    def fetchResponse(parts: java.util.LinkedHashMap[TopicIdPartition, FetchResponseData.PartitionData]): FetchResponse =
      FetchResponse.of(Errors.NONE, 0, org.apache.kafka.common.requests.FetchMetadata.INVALID_SESSION_ID, parts,
        java.util.Collections.emptyList())
    def shutdownLogs(logs: LogManager, brokerEpoch: Long): Unit = logs.shutdown(brokerEpoch)

    /** The broker epoch a clean shutdown left (KIP-966), -1 if none. */
    def cleanShutdownEpoch(logs: LogManager): Long = logs.readBrokerEpochFromCleanShutdownFiles().orElse(-1L)

    /** The partition's whole log, its batches in order. */
    def logBatches(log: UnifiedLog): Iterable[RecordBatch] =
      log.read(0, Int.MaxValue, FetchIsolation.LOG_END, true).records.batches().asScala
    def epochEntries(log: UnifiedLog): Seq[(Int, Long)] =
      log.leaderEpochCache.map(_.epochEntries().asScala.map(e => (e.epoch, e.startOffset)).toSeq).getOrElse(Seq.empty)

    /** The image after replaying ``records`` (with their offsets) on ``image``, as the
     *  broker's MetadataLoader publishes one batch, and the delta that did it. */
    def replayDelta(image: MetadataImage, records: Seq[(Long, ApiMessage)]): (MetadataDelta, MetadataImage) = {
      val delta = new MetadataDelta.Builder().setImage(image).build()
      records.foreach { case (_, r) => delta.replay(r) }
      val last = records.lastOption.map(_._1).getOrElse(image.provenance.lastContainedOffset)
      (delta, delta.apply(new MetadataProvenance(last, 1, 0L)))
    }

    /** Kafka's ReplicaManager whose follower fetchers are Kafka's own ReplicaFetcherThread
     *  and RemoteLeaderEndPoint over ``send``, never started as threads (the driver steps
     *  ``doWork``). */
    def replicaManager(id: Int, config: KafkaConfig, metrics: Metrics, time: Time, scheduler: Scheduler,
                       logs: LogManager, quotaManagers: QuotaManagers, cache: MetadataCache,
                       failures: LogDirFailureChannel, alter: AlterPartitionManager, stats: BrokerTopicStats,
                       brokerEpoch: () => Long, send: BrokerEndPoint => SteppedSend): ReplicaManager = {
      val timer = new HeldTimer
      def p[T <: DelayedOperation](name: String) = Some(new DelayedOperationPurgatory[T](name, timer, id, 1000, false, true))
      new ReplicaManager(
        config = config, metrics = metrics, time = time, scheduler = scheduler, logManager = logs,
        quotaManagers = quotaManagers, metadataCache = cache, logDirFailureChannel = failures,
        alterPartitionManager = alter, brokerTopicStats = stats, isShuttingDown = new AtomicBoolean(false),
        delayedProducePurgatoryParam = p("Produce"), delayedFetchPurgatoryParam = p("Fetch"),
        delayedDeleteRecordsPurgatoryParam = p("DeleteRecords"), delayedElectLeaderPurgatoryParam = p("ElectLeader"),
        delayedRemoteFetchPurgatoryParam = p("RemoteFetch"),
        threadNamePrefix = Some(s"b$id"), brokerEpochSupplier = brokerEpoch,
      ) {
        override protected def createReplicaFetcherManager(metrics: Metrics, time: Time, threadNamePrefix: Option[String],
                                                           quotaManager: ReplicationQuotaManager): ReplicaFetcherManager = {
          val rm = this
          new ReplicaFetcherManager(config, rm, metrics, time, threadNamePrefix, quotaManager,
            () => cache.metadataVersion(), brokerEpoch) {
            override def createFetcherThread(fetcherId: Int, source: BrokerEndPoint): ReplicaFetcherThread = {
              val logContext = new LogContext(s"[ReplicaFetcher replicaId=$id, leaderId=${source.id}] ")
              val leader = new RemoteLeaderEndPoint(logContext.logPrefix, send(source),
                new org.apache.kafka.clients.FetchSessionHandler(logContext, source.id),
                config, rm, quotaManager, () => cache.metadataVersion(), brokerEpoch)
              new ReplicaFetcherThread(s"b$id-fetcher-${source.id}", leader, config, failedPartitions, rm, quotaManager,
                logContext.logPrefix, () => cache.metadataVersion()) {
                override def start(): Unit = () // stepped by the driver, never run as a thread
              }
            }
          }
        }
      }
    }

    /** ReplicaManager.fetchMessages for a follower's fetch, as KafkaApis.handleFetchRequest
     *  calls it but with maxWait 0; each partition's answer as KafkaApis builds it, its
     *  records through ``bytes``. */
    def fetchForFollower(rm: ReplicaManager, quotaManagers: QuotaManagers, fetch: FetchRequest,
                         partitions: Seq[(TopicIdPartition, FetchRequest.PartitionData)], maxBytes: Int,
                         bytes: Records => MemoryRecords,
                         done: Seq[(TopicIdPartition, FetchResponseData.PartitionData)] => Unit): Unit = {
      val params = new FetchParams(fetch.version, fetch.replicaId, fetch.replicaEpoch, 0L, 0, maxBytes,
        FetchIsolation.of(fetch), Optional.empty())
      rm.fetchMessages(params, partitions, quotaManagers.leader, (parts: collection.Seq[(TopicIdPartition, FetchPartitionData)]) =>
        done(parts.toSeq.map { case (tip, d) =>
          val pd = new FetchResponseData.PartitionData()
            .setPartitionIndex(tip.partition)
            .setErrorCode(d.error.code)
            .setHighWatermark(d.highWatermark)
            .setLastStableOffset(d.lastStableOffset.orElse(FetchResponse.INVALID_LAST_STABLE_OFFSET))
            .setLogStartOffset(d.logStartOffset)
            .setAbortedTransactions(d.abortedTransactions.orElse(null))
            .setRecords(bytes(d.records))
            .setPreferredReadReplica(d.preferredReadReplica.orElse(FetchResponse.INVALID_PREFERRED_REPLICA_ID))
          d.divergingEpoch.ifPresent(e => pd.setDivergingEpoch(e))
          tip -> pd
        }))
    }

    /** A producer's acks=all append; ``done`` gets the partition's error. */
    def append(rm: ReplicaManager, tip: TopicIdPartition, records: MemoryRecords, acks: Short, done: Errors => Unit): Unit =
      rm.appendRecords(
        timeout = Long.MaxValue,
        requiredAcks = acks,
        internalTopicsAllowed = false,
        origin = AppendOrigin.CLIENT,
        entriesPerPartition = Map(tip.topicPartition -> records),
        responseCallback = (responses: scala.collection.Map[TopicPartition, PartitionResponse]) =>
          done(responses.values.head.error),
      )
  }
}
