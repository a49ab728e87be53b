// Kafka 4.0: what the harness calls that differs from other releases.  The rest, the
// same in 4.0 and 4.1, is in src/k40-shared; Compat extends Release.
//
// In 4.0, against 4.1 (k40): UnifiedLog and PartitionFetchState are still Scala classes
// in kafka.log and kafka.server; LogManager.apply takes keepPartitionMetadataFile;
// QuotaFactory.instantiate has no component name; ReplicaFetcherThread takes a
// metadata.version supplier; FetchParams takes the request version; and
// ReplicaManager.appendRecords is keyed by TopicPartition.

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

package replcheck.harness {
  import kafka.server._
  import kafka.server.metadata.KRaftMetadataCache
  import java.util.Optional
  import org.apache.kafka.common.TopicIdPartition
  import org.apache.kafka.common.metrics.Metrics
  import org.apache.kafka.common.protocol.Errors
  import org.apache.kafka.common.record.MemoryRecords
  import org.apache.kafka.common.requests.FetchRequest
  import org.apache.kafka.common.requests.ProduceResponse.PartitionResponse
  import org.apache.kafka.common.utils.Time
  import org.apache.kafka.server.storage.log.{FetchIsolation, FetchParams}
  import org.apache.kafka.server.util.Scheduler
  import org.apache.kafka.storage.internals.log.{AppendOrigin, LogDirFailureChannel}
  import org.apache.kafka.storage.log.metrics.BrokerTopicStats

  /** What this family calls differently; Compat (src/k40-shared) extends it. */
  trait Release {
    type UnifiedLog = kafka.log.UnifiedLog

    def logManager(config: KafkaConfig, cache: KRaftMetadataCache, scheduler: Scheduler, time: Time,
                   stats: BrokerTopicStats, failures: LogDirFailureChannel): kafka.log.LogManager =
      kafka.log.LogManager(config, Seq.empty, cache, scheduler, time, stats, failures, keepPartitionMetadataFile = true)
    /** BrokerMetadataPublisher.initializeManagers: the LogManager starts with the topics
     *  of the first image (no stray detection). */
    def startLogs(logs: kafka.log.LogManager, cache: KRaftMetadataCache): Unit =
      logs.startup(cache.getAllTopics(), _ => false)
    def quotas(config: KafkaConfig, metrics: Metrics, time: Time, prefix: String): QuotaFactory.QuotaManagers =
      QuotaFactory.instantiate(config, metrics, time, prefix)

    /** Kafka's fetcher thread, never started (the driver steps ``doWork``). */
    def fetcherThread(name: String, leader: RemoteLeaderEndPoint, config: KafkaConfig,
                                failed: FailedPartitions, rm: ReplicaManager, quota: ReplicationQuotaManager,
                                logPrefix: String, cache: KRaftMetadataCache): ReplicaFetcherThread =
      new ReplicaFetcherThread(name, leader, config, failed, rm, quota, logPrefix, () => cache.metadataVersion()) {
        override def start(): Unit = () // stepped by the driver, never run as a thread
      }
    def fetchParams(fetch: FetchRequest, maxBytes: Int): FetchParams =
      new FetchParams(fetch.version, fetch.replicaId, fetch.replicaEpoch, 0L, 0, maxBytes,
        FetchIsolation.of(fetch), Optional.empty())

    /** A producer's acks=all append; ``done`` gets the partition's error. */
    def append(rm: ReplicaManager, tip: TopicIdPartition, records: MemoryRecords, acks: Short, done: Errors => Unit): Unit =
      rm.appendRecords(
        timeout = Long.MaxValue,
        requiredAcks = acks,
        internalTopicsAllowed = false,
        origin = AppendOrigin.CLIENT,
        entriesPerPartition = Map(tip.topicPartition -> records),
        responseCallback = (responses: scala.collection.Map[org.apache.kafka.common.TopicPartition, PartitionResponse]) =>
          done(responses.values.head.error),
      )
  }
}
