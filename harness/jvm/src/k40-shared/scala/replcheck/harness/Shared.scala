// Kafka 4.0 and 4.1 (families k400 and k40): what the harness calls, the same in both.
// Each family folder's Compat.scala holds what differs between them (its Release trait
// and ServerAccess); this folder is compiled with either (pom.xml, kafka.shared).

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

package org.apache.kafka.controller {
  import java.util.{Collections, List => JList, Set => JSet}

  import scala.jdk.CollectionConverters._

  import kafka.server.KafkaRaftServer
  import org.apache.kafka.common.Uuid
  import org.apache.kafka.common.message._
  import org.apache.kafka.common.metadata.{ClearElrRecord, FeatureLevelRecord}
  import org.apache.kafka.common.protocol.ApiMessage
  import org.apache.kafka.common.utils.Time
  import org.apache.kafka.metadata.{BrokerHeartbeatReply, BrokerRegistrationReply, PartitionRegistration}
  import org.apache.kafka.metadata.placement.StripedReplicaPlacer
  import org.apache.kafka.server.common.{ApiMessageAndVersion, EligibleLeaderReplicasVersion, MetadataVersion}
  import org.apache.kafka.timeline.SnapshotRegistry

  import replcheck.harness.Compat.LogContext

  /** The controller's calls whose shape differs between releases. */
  object ControllerCompat {
    def managers(logContext: LogContext, snapshots: SnapshotRegistry, clusterId: String, time: Time,
                 sessionTimeoutNs: Long, elr: Boolean): Managers = {
      val features = new FeatureControlManager.Builder()
        .setLogContext(logContext)
        .setSnapshotRegistry(snapshots)
        .setQuorumFeatures(new QuorumFeatures(3000, QuorumFeatures.defaultSupportedFeatureMap(true),
          List(Integer.valueOf(3000)).asJava))
        .build()
      var replication: ReplicationControlManager = null
      val cluster = new ClusterControlManager.Builder()
        .setLogContext(logContext)
        .setClusterId(clusterId)
        .setTime(time)
        .setSnapshotRegistry(snapshots)
        .setSessionTimeoutNs(sessionTimeoutNs)
        .setReplicaPlacer(new StripedReplicaPlacer(new java.util.Random(0)))
        .setFeatureControlManager(features)
        .setBrokerShutdownHandler((id, clean, records) => replication.handleBrokerShutdown(id, clean, records))
        .build()
      val configs = new ConfigurationControlManager.Builder()
        .setLogContext(logContext)
        .setSnapshotRegistry(snapshots)
        .setKafkaConfigSchema(KafkaRaftServer.configSchema)
        .setFeatureControl(features)
        .build()
      // ELR is a feature level from 4.0 (bootstrapFeatures), not a builder flag.
      replication = new ReplicationControlManager.Builder()
        .setSnapshotRegistry(snapshots)
        .setLogContext(logContext)
        .setMaxElectionsPerImbalance(Integer.MAX_VALUE)
        .setConfigurationControl(configs)
        .setClusterControl(cluster)
        .setFeatureControl(features)
        .build()
      Managers(features, cluster, configs, replication)
    }

    /** The bootstrap's feature levels: metadata.version and eligible.leader.replicas.version. */
    def bootstrapFeatures(metadataVersion: MetadataVersion, elr: Boolean): JList[ApiMessageAndVersion] = {
      val boot = new java.util.ArrayList[ApiMessageAndVersion]()
      boot.add(new ApiMessageAndVersion(new FeatureLevelRecord()
        .setName(MetadataVersion.FEATURE_NAME).setFeatureLevel(metadataVersion.featureLevel()), 0.toShort))
      boot.add(new ApiMessageAndVersion(new FeatureLevelRecord()
        .setName(EligibleLeaderReplicasVersion.FEATURE_NAME)
        .setFeatureLevel(if (elr) EligibleLeaderReplicasVersion.ELRV_1.featureLevel() else 0.toShort), 0.toShort))
      boot
    }

    /** What a registering broker says of itself: its directory (KIP-858), the epoch its
     *  clean shutdown left (KIP-966) and the features it supports. */
    def describeBroker(req: BrokerRegistrationRequestData, dir: Uuid, previousEpoch: Long): Unit = {
      req.setLogDirs(List(dir).asJava).setPreviousBrokerEpoch(previousEpoch)
      req.features().add(new BrokerRegistrationRequestData.Feature().setName(MetadataVersion.FEATURE_NAME)
        .setMinSupportedVersion(MetadataVersion.MINIMUM_VERSION.featureLevel())
        .setMaxSupportedVersion(MetadataVersion.latestTesting().featureLevel()))
      req.features().add(new BrokerRegistrationRequestData.Feature().setName(EligibleLeaderReplicasVersion.FEATURE_NAME)
        .setMinSupportedVersion(0.toShort).setMaxSupportedVersion(EligibleLeaderReplicasVersion.ELRV_1.featureLevel()))
    }

    def registerBroker(m: Managers, req: BrokerRegistrationRequestData,
                       newEpoch: Long): ControllerResult[BrokerRegistrationReply] =
      m.cluster.registerBroker(req, newEpoch, m.features.finalizedFeatures(Long.MaxValue), true)

    /** A heartbeat as QuorumController.processBrokerHeartbeat handles it: the session is
     *  tracked first (outside the write event), then the request processed. */
    def heartbeat(m: Managers, req: BrokerHeartbeatRequestData, epoch: Long): ControllerResult[BrokerHeartbeatReply] = {
      m.cluster.trackBrokerHeartbeat(req.brokerId, epoch)
      m.replication.processBrokerHeartbeat(req, epoch)
    }

    /** Another broker's heartbeat keeps its session: the contact time only. */
    def stillAlive(m: Managers, req: BrokerHeartbeatRequestData, epoch: Long): JList[ApiMessageAndVersion] = {
      m.cluster.trackBrokerHeartbeat(req.brokerId, epoch)
      Collections.emptyList()
    }

    /** ReplicationControlManager.maybeFenceOneStaleBroker: its records, and whether to ask again. */
    def fenceOneStaleBroker(m: Managers): (JList[ApiMessageAndVersion], Boolean) = {
      val result = m.replication.maybeFenceOneStaleBroker()
      (result.records(), result.response().booleanValue())
    }

    def replayOther(m: Managers, message: ApiMessage): Boolean = message match {
      case r: ClearElrRecord => m.replication.replay(r); true
      case _ => false
    }

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

    def addTopicConfig(t: CreateTopicsRequestData.CreatableTopic, name: String, value: String): Unit =
      t.configs().add(new CreateTopicsRequestData.CreatableTopicConfig().setName(name).setValue(value))

    def createTopics(r: ReplicationControlManager, context: ControllerRequestContext, request: CreateTopicsRequestData,
                     describable: JSet[String]): ControllerResult[CreateTopicsResponseData] =
      r.createTopics(context, request, describable)
  }
}

package replcheck.harness {
  import java.io.File
  import java.nio.ByteBuffer
  import java.util.concurrent.atomic.AtomicBoolean

  import scala.jdk.CollectionConverters._

  import kafka.server._
  import java.util.Optional
  import org.apache.kafka.common.{TopicIdPartition, Uuid}
  import org.apache.kafka.common.message.FetchResponseData
  import org.apache.kafka.common.requests.{FetchRequest, FetchResponse}
  import org.apache.kafka.metadata.properties.{MetaProperties, MetaPropertiesEnsemble, MetaPropertiesVersion, PropertiesUtils}
  import org.apache.kafka.server.storage.log.{FetchIsolation, FetchParams, FetchPartitionData}
  import org.apache.kafka.common.compress.Compression
  import org.apache.kafka.clients.NodeApiVersions
  import org.apache.kafka.common.metrics.Metrics
  import org.apache.kafka.common.protocol.ApiMessage
  import org.apache.kafka.common.requests.AbstractRequest
  import org.apache.kafka.image.{MetadataDelta, MetadataImage, MetadataProvenance}
  import org.apache.kafka.server.common.{ControllerRequestCompletionHandler, NodeToControllerChannelManager}
  import org.apache.kafka.common.protocol.Errors
  import org.apache.kafka.common.requests.ProduceResponse.PartitionResponse
  import org.apache.kafka.common.utils.{Exit, Time}
  import org.apache.kafka.server.common.{KRaftVersion, MetadataVersion}
  import org.apache.kafka.server.network.BrokerEndPoint
  import org.apache.kafka.server.purgatory.{DelayedOperation, DelayedOperationPurgatory}
  import java.util.concurrent.ScheduledFuture
  import org.apache.kafka.server.util.timer.{Timer, TimerTask}
  import org.apache.kafka.storage.internals.log.{AppendOrigin, LogDirFailureChannel}
  import org.apache.kafka.storage.log.metrics.BrokerTopicStats

  object Compat extends Release {
    type Scheduler = org.apache.kafka.server.util.Scheduler
    type LogDirFailureChannel = org.apache.kafka.storage.internals.log.LogDirFailureChannel
    type LogContext = org.apache.kafka.common.utils.LogContext
    type Records = org.apache.kafka.common.record.Records
    type MemoryRecords = org.apache.kafka.common.record.MemoryRecords
    type FileRecords = org.apache.kafka.common.record.FileRecords
    type RecordBatch = org.apache.kafka.common.record.RecordBatch
    type BrokerEndPoint = org.apache.kafka.server.network.BrokerEndPoint
    type LogManager = kafka.log.LogManager
    type MetadataCache = kafka.server.metadata.KRaftMetadataCache
    type AlterPartitionManager = kafka.server.DefaultAlterPartitionManager
    type QuotaManagers = kafka.server.QuotaFactory.QuotaManagers

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
      override def size(): Int = synchronized { held.count(t => !t.isCancelled) }
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
      org.apache.kafka.common.record.MemoryRecords.withRecords(Compression.NONE,
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

    def metadataCache(id: Int): MetadataCache = new MetadataCache(id, () => KRaftVersion.KRAFT_VERSION_1)
    def alterPartitionManager(channel: HeldChannel, scheduler: Scheduler, time: Time, id: Int,
                              brokerEpoch: () => Long, cache: MetadataCache): AlterPartitionManager =
      new DefaultAlterPartitionManager(controllerChannel(channel), scheduler, time, id, brokerEpoch)
    def unsentAlterPartition(m: AlterPartitionManager): Boolean = ServerAccess.unsentAlterPartition(m)

    /** The held channel as the release's channel to the controller. */
    private def controllerChannel(held: HeldChannel): NodeToControllerChannelManager = new NodeToControllerChannelManager {
      override def start(): Unit = ()
      override def shutdown(): Unit = ()
      override def controllerApiVersions(): Optional[NodeApiVersions] = Optional.empty()
      override def getTimeoutMs: Long = Long.MaxValue
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
      log.leaderEpochCache.epochEntries().asScala.map(e => (e.epoch, e.startOffset)).toSeq

    /** The image after replaying ``records`` (with their offsets) on ``image``, as the
     *  broker's MetadataLoader publishes one batch, and the delta that did it. */
    def replayDelta(image: MetadataImage, records: Seq[(Long, ApiMessage)]): (MetadataDelta, MetadataImage) = {
      val delta = new MetadataDelta.Builder().setImage(image).build()
      records.foreach { case (_, r) => delta.replay(r) }
      val last = records.lastOption.map(_._1).getOrElse(image.provenance.lastContainedOffset)
      (delta, delta.apply(new MetadataProvenance(last, 1, 0L, true)))
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
        delayedDeleteRecordsPurgatoryParam = p("DeleteRecords"), delayedRemoteFetchPurgatoryParam = p("RemoteFetch"),
        delayedRemoteListOffsetsPurgatoryParam = p("RemoteListOffsets"),
        delayedShareFetchPurgatoryParam = p("ShareFetch"),
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
              fetcherThread(s"b$id-fetcher-${source.id}", leader, config, failedPartitions, rm, quotaManager,
                logContext.logPrefix, cache)
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
      val params = fetchParams(fetch, maxBytes)
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
  }
}
