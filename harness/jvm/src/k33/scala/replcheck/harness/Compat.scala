// Kafka 3.3: what the harness calls that differs from other releases.  Each family
// folder has this one file with the same names; the common code under src/main uses
// only these names for what differs between releases.
//
// As 3.4, against 3.5 (k35): no broker epoch in fetches and AlterPartition (KIP-903): no
// brokerEpochSupplier for ReplicaManager, ReplicaFetcherManager, RemoteLeaderEndPoint; the
// scheduler is the class kafka.utils.KafkaScheduler (LogManager.apply takes it); fetch
// parameters, fetch
// isolation, LogDirFailureChannel, FetchPartitionData (Options) and AppendOrigin (package-
// private) are Scala in kafka.server/kafka.log; the epoch cache's entries are Scala;
// ReplicationControlManager.createTopics takes no request context.  Otherwise as 3.5.
//
// Against 3.4 (k34): MetadataDelta has no Builder and no MetadataProvenance: it is built
// on the image and replays each record with its offset and epoch
// (BrokerMetadataListener), and apply() takes nothing.

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
    /** AppendOrigin is private[kafka] in this release. */
    def clientOrigin: kafka.log.AppendOrigin = kafka.log.AppendOrigin.Client
  }
}

package org.apache.kafka.controller {
  import java.util.{List => JList, Set => JSet}

  import scala.jdk.CollectionConverters._

  import kafka.server.KafkaRaftServer
  import org.apache.kafka.common.Uuid
  import org.apache.kafka.common.message._
  import org.apache.kafka.common.metadata.FeatureLevelRecord
  import org.apache.kafka.common.protocol.ApiMessage
  import org.apache.kafka.common.utils.Time
  import org.apache.kafka.metadata.{BrokerHeartbeatReply, BrokerRegistrationReply, PartitionRegistration}
  import org.apache.kafka.metadata.placement.StripedReplicaPlacer
  import org.apache.kafka.server.common.{ApiMessageAndVersion, MetadataVersion}
  import org.apache.kafka.timeline.SnapshotRegistry

  import replcheck.harness.Compat.LogContext

  /** The controller's calls whose shape differs between releases. */
  object ControllerCompat {
    /** 3.3.0 and 3.3.1's builders demand a ControllerMetrics (setControllerMetrics; 3.3.2
     *  dropped it from both): a no-op one, as the harness reads no metric. */
    private def withMetrics[B <: AnyRef](builder: B): B = {
      // Package-private there, hence getDeclaredMethods and setAccessible.
      builder.getClass.getDeclaredMethods.find(_.getName == "setControllerMetrics").foreach { set =>
        set.setAccessible(true)
        val metrics = set.getParameterTypes()(0)
        val noop = java.lang.reflect.Proxy.newProxyInstance(metrics.getClassLoader, Array(metrics),
          (_: AnyRef, method: java.lang.reflect.Method, _: Array[AnyRef]) => method.getReturnType match {
            case java.lang.Boolean.TYPE => java.lang.Boolean.FALSE
            case java.lang.Integer.TYPE => Integer.valueOf(0)
            case java.lang.Long.TYPE => java.lang.Long.valueOf(0L)
            case _ => null
          })
        set.invoke(builder, noop)
      }
      builder
    }

    def managers(logContext: LogContext, snapshots: SnapshotRegistry, clusterId: String, time: Time,
                 sessionTimeoutNs: Long, elr: Boolean): Managers = {
      val features = new FeatureControlManager.Builder()
        .setLogContext(logContext)
        .setSnapshotRegistry(snapshots)
        .setQuorumFeatures(new QuorumFeatures(3000, new org.apache.kafka.clients.ApiVersions(),
          QuorumFeatures.defaultFeatureMap(), List(Integer.valueOf(3000)).asJava))
        .setMetadataVersion(MetadataVersion.MINIMUM_KRAFT_VERSION) // as QuorumController, till the bootstrap record
        .build()
      val clusterBuilder = new ClusterControlManager.Builder()
        .setLogContext(logContext)
        .setClusterId(clusterId)
        .setTime(time)
        .setSnapshotRegistry(snapshots)
        .setSessionTimeoutNs(sessionTimeoutNs)
        .setReplicaPlacer(new StripedReplicaPlacer(new java.util.Random(0)))
        .setFeatureControlManager(features)
      val cluster = withMetrics(clusterBuilder).build()
      val configs = new ConfigurationControlManager.Builder()
        .setLogContext(logContext)
        .setSnapshotRegistry(snapshots)
        .setKafkaConfigSchema(KafkaRaftServer.configSchema)
        .build()
      val replicationBuilder = new ReplicationControlManager.Builder()
        .setSnapshotRegistry(snapshots)
        .setLogContext(logContext)
        .setMaxElectionsPerImbalance(Integer.MAX_VALUE)
        .setConfigurationControl(configs)
        .setClusterControl(cluster)
        .setFeatureControl(features)
      val replication = withMetrics(replicationBuilder).build()
      Managers(features, cluster, configs, replication)
    }

    /** The bootstrap's feature level: metadata.version (no ELR here). */
    def bootstrapFeatures(metadataVersion: MetadataVersion, elr: Boolean): JList[ApiMessageAndVersion] =
      List(new ApiMessageAndVersion(new FeatureLevelRecord()
        .setName(MetadataVersion.FEATURE_NAME).setFeatureLevel(metadataVersion.featureLevel()), 0.toShort)).asJava

    /** What a registering broker says of itself: the features it supports (no directory,
     *  no previous broker epoch in this release's request). */
    def describeBroker(req: BrokerRegistrationRequestData, dir: Uuid, previousEpoch: Long): Unit =
      req.features().add(new BrokerRegistrationRequestData.Feature().setName(MetadataVersion.FEATURE_NAME)
        .setMinSupportedVersion(MetadataVersion.MINIMUM_KRAFT_VERSION.featureLevel())
        .setMaxSupportedVersion(MetadataVersion.latest().featureLevel()))

    def registerBroker(m: Managers, req: BrokerRegistrationRequestData,
                       newEpoch: Long): ControllerResult[BrokerRegistrationReply] =
      m.cluster.registerBroker(req, newEpoch, m.features.finalizedFeatures(Long.MaxValue))

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

    def assignReplicasToDirs(m: Managers, id: Int, epoch: Long, dir: Uuid, topicId: Uuid): JList[ApiMessageAndVersion] =
      throw new replcheck.harness.Refused("not_enabled", "Kafka 3.6 has no AssignReplicasToDirs (KIP-858, from 3.7)")

    def elr(p: PartitionRegistration): Seq[Int] = Seq.empty
    def lastKnownElr(p: PartitionRegistration): Seq[Int] = Seq.empty

    /** A topic config of a CreateTopics request (CreateableTopicConfig before 3.9). */
    def addTopicConfig(t: CreateTopicsRequestData.CreatableTopic, name: String, value: String): Unit =
      t.configs().add(new CreateTopicsRequestData.CreateableTopicConfig().setName(name).setValue(value))

    def createTopics(r: ReplicationControlManager, context: ControllerRequestContext, request: CreateTopicsRequestData,
                     describable: JSet[String]): ControllerResult[CreateTopicsResponseData] =
      r.createTopics(request, describable)
  }
}

package replcheck.harness {
  import java.io.File
  import java.nio.ByteBuffer
  import java.util.Optional
  import java.util.concurrent.{ScheduledFuture, TimeUnit}
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
  import org.apache.kafka.image.{MetadataDelta, MetadataImage}
  import org.apache.kafka.server.common.MetadataVersion
  import kafka.utils.timer.{Timer, TimerTask}

  object Compat {
    type Scheduler = kafka.utils.KafkaScheduler
    type LogDirFailureChannel = kafka.server.LogDirFailureChannel
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
    /** (LogManager.apply takes the KafkaScheduler class here, so a subclass, never started.) */
    def scheduler(step: StepScheduler): Scheduler = new Scheduler(1) {
      override def startup(): Unit = ()
      override def shutdown(): Unit = step.shutdown()
      override def isStarted: Boolean = true
      override def resizeThreadPool(newSize: Int): Unit = ()
      override def scheduleOnce(name: String, fun: () => Unit): Unit = schedule(name, fun, 0L, -1L, TimeUnit.MILLISECONDS)
      override def schedule(name: String, fun: () => Unit, delay: Long, period: Long, unit: TimeUnit): ScheduledFuture[_] =
        step.schedule(name, () => fun(), unit.toMillis(delay), if (period > 0) unit.toMillis(period) else period)
    }

    /** The purgatories' timer.  Produce requests wait with an infinite timeout and
     *  fetches never wait, so nothing here ever expires: it only holds what is added. */
    private final class HeldTimer extends Timer {
      private val held = scala.collection.mutable.ArrayBuffer.empty[TimerTask]
      override def add(timerTask: TimerTask): Unit = synchronized { held += timerTask }
      override def advanceClock(timeoutMs: Long): Boolean = false
      override def size: Int = synchronized { held.size }
      override def shutdown(): Unit = synchronized { held.clear() }
    }

    def kafkaVersion: String = org.apache.kafka.common.utils.AppInfoParser.getVersion
    def trapExit(): Unit = {
      Exit.setExitProcedure((code, msg) => throw new IllegalStateException(s"Kafka asked to exit($code): $msg"))
      Exit.setHaltProcedure((code, msg) => throw new IllegalStateException(s"Kafka asked to halt($code): $msg"))
    }
    /** No request-thread check before 3.6. */
    def bypassRequestThreadCheck(): Unit = ()
    def metadataVersion(name: String): MetadataVersion = MetadataVersion.fromVersionString(name)

    def record(value: Array[Byte]): MemoryRecords =
      org.apache.kafka.common.record.MemoryRecords.withRecords(org.apache.kafka.common.record.CompressionType.NONE,
        new org.apache.kafka.common.record.SimpleRecord(value))
    def readableRecords(buffer: ByteBuffer): MemoryRecords = org.apache.kafka.common.record.MemoryRecords.readableRecords(buffer)
    def openFileRecords(f: File): FileRecords = org.apache.kafka.common.record.FileRecords.open(f)

    def brokerTopicStats(): BrokerTopicStats = new BrokerTopicStats()

    /** meta.properties as ``kafka-storage format`` writes it (StorageTool: no directory
     *  id before KIP-858). */
    def writeMetaProperties(dir: File, id: Int, clusterId: String, dirId: Uuid): Unit =
      new BrokerMetadataCheckpoint(new File(dir, "meta.properties")).write(MetaProperties(clusterId, id).toProperties)

    def metadataCache(id: Int): MetadataCache = new MetadataCache(id)
    /** As BrokerServer builds it (keepPartitionMetadataFile: KRaft keeps partition.metadata). */
    def logManager(config: KafkaConfig, cache: MetadataCache, scheduler: Scheduler, time: Time,
                   stats: BrokerTopicStats, failures: LogDirFailureChannel): LogManager =
      kafka.log.LogManager(config, Seq.empty, cache, scheduler, time, stats, failures, keepPartitionMetadataFile = true)
    /** BrokerMetadataPublisher.initializeManagers: the LogManager starts with the topics
     *  of the first image. */
    def startLogs(logs: LogManager, cache: MetadataCache): Unit = logs.startup(cache.getAllTopics())
    def quotas(config: KafkaConfig, metrics: Metrics, time: Time, prefix: String): QuotaManagers =
      QuotaFactory.instantiate(config, metrics, time, prefix)
    def alterPartitionManager(channel: HeldChannel, scheduler: Scheduler, time: Time, id: Int,
                              brokerEpoch: () => Long, cache: MetadataCache): AlterPartitionManager =
      new DefaultAlterPartitionManager(controllerChannel(channel), scheduler, time, id, brokerEpoch,
        () => cache.metadataVersion())
    def unsentAlterPartition(m: AlterPartitionManager): Boolean = ServerAccess.unsentAlterPartition(m)

    /** The held channel as the release's channel to the controller. */
    private def controllerChannel(held: HeldChannel): BrokerToControllerChannelManager = new BrokerToControllerChannelManager {
      override def start(): Unit = ()
      override def shutdown(): Unit = ()
      override def controllerApiVersions(): Option[NodeApiVersions] = None
      override def sendRequest(request: AbstractRequest.Builder[_ <: AbstractRequest],
                               callback: ControllerRequestCompletionHandler): Unit =
        held.hold(request, response => callback.onComplete(response))
    }

    /** What KafkaApis answers a fetch with (no node endpoints: no leader moved). */
    def fetchResponse(parts: java.util.LinkedHashMap[TopicIdPartition, FetchResponseData.PartitionData]): FetchResponse =
      FetchResponse.of(Errors.NONE, 0, org.apache.kafka.common.requests.FetchMetadata.INVALID_SESSION_ID, parts)
    def shutdownLogs(logs: LogManager, brokerEpoch: Long): Unit = logs.shutdown()

    /** No clean-shutdown broker epoch before KIP-966 (3.7). */
    def cleanShutdownEpoch(logs: LogManager): Long = -1L

    /** The partition's whole log, its batches in order. */
    def logBatches(log: UnifiedLog): Iterable[RecordBatch] =
      log.read(0, Int.MaxValue, FetchLogEnd, true).records.batches().asScala
    def epochEntries(log: UnifiedLog): Seq[(Int, Long)] =
      log.leaderEpochCache.map(_.epochEntries.map(e => (e.epoch, e.startOffset)).toSeq).getOrElse(Seq.empty)

    /** The image after replaying ``records`` (with their offsets) on ``image``, as the
     *  broker's MetadataLoader publishes one batch, and the delta that did it. */
    def replayDelta(image: MetadataImage, records: Seq[(Long, ApiMessage)]): (MetadataDelta, MetadataImage) = {
      val delta = new MetadataDelta(image)
      records.foreach { case (offset, r) => delta.replay(offset, 1, r) }
      (delta, delta.apply())
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
        threadNamePrefix = Some(s"b$id"),
      ) {
        override protected def createReplicaFetcherManager(metrics: Metrics, time: Time, threadNamePrefix: Option[String],
                                                           quotaManager: ReplicationQuotaManager): ReplicaFetcherManager = {
          val rm = this
          new ReplicaFetcherManager(config, rm, metrics, time, threadNamePrefix, quotaManager,
            () => cache.metadataVersion()) {
            override def createFetcherThread(fetcherId: Int, source: BrokerEndPoint): ReplicaFetcherThread = {
              val logContext = new LogContext(s"[ReplicaFetcher replicaId=$id, leaderId=${source.id}] ")
              val leader = new RemoteLeaderEndPoint(logContext.logPrefix, send(source),
                new org.apache.kafka.clients.FetchSessionHandler(logContext, source.id),
                config, rm, quotaManager, () => cache.metadataVersion())
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
      val params = FetchParams(fetch.version, fetch.replicaId, 0L, 0, maxBytes, FetchIsolation(fetch), None)
      rm.fetchMessages(params, partitions, quotaManagers.leader, (parts: collection.Seq[(TopicIdPartition, FetchPartitionData)]) =>
        done(parts.toSeq.map { case (tip, d) =>
          val pd = new FetchResponseData.PartitionData()
            .setPartitionIndex(tip.partition)
            .setErrorCode(d.error.code)
            .setHighWatermark(d.highWatermark)
            .setLastStableOffset(d.lastStableOffset.getOrElse(FetchResponse.INVALID_LAST_STABLE_OFFSET))
            .setLogStartOffset(d.logStartOffset)
            .setAbortedTransactions(d.abortedTransactions.map(_.asJava).orNull)
            .setRecords(bytes(d.records))
            .setPreferredReadReplica(d.preferredReadReplica.getOrElse(FetchResponse.INVALID_PREFERRED_REPLICA_ID))
          d.divergingEpoch.foreach(e => pd.setDivergingEpoch(e))
          tip -> pd
        }))
    }

    /** A producer's acks=all append; ``done`` gets the partition's error. */
    def append(rm: ReplicaManager, tip: TopicIdPartition, records: MemoryRecords, acks: Short, done: Errors => Unit): Unit =
      rm.appendRecords(
        timeout = Long.MaxValue,
        requiredAcks = acks,
        internalTopicsAllowed = false,
        origin = ServerAccess.clientOrigin,
        entriesPerPartition = Map(tip.topicPartition -> records),
        responseCallback = (responses: scala.collection.Map[TopicPartition, PartitionResponse]) =>
          done(responses.values.head.error),
      )
  }
}
