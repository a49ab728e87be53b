// Kafka 4.1: what the harness calls that 4.0 (k400) and later releases call otherwise.
// The rest, the same in 4.0 and 4.1, is in src/k40-shared; Compat extends Release.

package kafka.server {
  import org.apache.kafka.common.TopicPartition
  import org.apache.kafka.server.PartitionFetchState

  /** Reads the fetcher and AlterPartition state Kafka keeps package-private (for
   *  observation only). */
  object ServerAccess {
    def fetchState(f: AbstractFetcherThread, tp: TopicPartition): Option[PartitionFetchState] = f.fetchState(tp)
    def fetcher(m: ReplicaFetcherManager, tp: TopicPartition): Option[ReplicaFetcherThread] = m.getFetcher(tp)
    def unsentAlterPartition(m: DefaultAlterPartitionManager): Boolean = !m.unsentIsrUpdates.isEmpty
  }
}

package replcheck.harness {
  import scala.jdk.CollectionConverters._

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
    type UnifiedLog = org.apache.kafka.storage.internals.log.UnifiedLog

    def logManager(config: KafkaConfig, cache: KRaftMetadataCache, scheduler: Scheduler, time: Time,
                   stats: BrokerTopicStats, failures: LogDirFailureChannel): kafka.log.LogManager =
      kafka.log.LogManager(config, Seq.empty, cache, scheduler, time, stats, failures)
    /** BrokerMetadataPublisher.initializeManagers: the LogManager starts with the topics
     *  of the first image (no stray detection). */
    def startLogs(logs: kafka.log.LogManager, cache: KRaftMetadataCache): Unit =
      logs.startup(cache.getAllTopics().asScala.toSet, _ => false)
    def quotas(config: KafkaConfig, metrics: Metrics, time: Time, prefix: String): QuotaFactory.QuotaManagers =
      QuotaFactory.instantiate(config, metrics, time, prefix, "broker")

    /** Kafka's fetcher thread, never started (the driver steps ``doWork``). */
    def fetcherThread(name: String, leader: RemoteLeaderEndPoint, config: KafkaConfig,
                                failed: FailedPartitions, rm: ReplicaManager, quota: ReplicationQuotaManager,
                                logPrefix: String, cache: KRaftMetadataCache): ReplicaFetcherThread =
      new ReplicaFetcherThread(name, leader, config, failed, rm, quota, logPrefix) {
        override def start(): Unit = () // stepped by the driver, never run as a thread
      }
    def fetchParams(fetch: FetchRequest, maxBytes: Int): FetchParams =
      new FetchParams(fetch.replicaId, fetch.replicaEpoch, 0L, 0, maxBytes, FetchIsolation.of(fetch),
        Optional.empty())

    /** A producer's acks=all append; ``done`` gets the partition's error. */
    def append(rm: ReplicaManager, tip: TopicIdPartition, records: MemoryRecords, acks: Short, done: Errors => Unit): Unit =
      rm.appendRecords(
        timeout = Long.MaxValue,
        requiredAcks = acks,
        internalTopicsAllowed = false,
        origin = AppendOrigin.CLIENT,
        entriesPerPartition = Map(tip -> records),
        responseCallback = (responses: scala.collection.Map[TopicIdPartition, PartitionResponse]) =>
          done(responses.values.head.error),
      )
  }
}
