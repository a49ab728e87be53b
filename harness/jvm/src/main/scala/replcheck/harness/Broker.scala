package replcheck.harness

import java.io.File
import java.nio.file.Files
import java.util.{LinkedHashMap, Properties}

import scala.collection.mutable
import scala.jdk.CollectionConverters._

import kafka.cluster.Partition
import kafka.server.{KafkaConfig, ReplicaFetcherThread, ReplicaManager, ServerAccess}
import org.apache.kafka.common.{TopicIdPartition, TopicPartition, Uuid}
import org.apache.kafka.common.message.FetchResponseData
import org.apache.kafka.common.metrics.Metrics
import org.apache.kafka.common.protocol.Errors
import org.apache.kafka.common.requests.{AbstractRequest, AbstractResponse, FetchRequest, FetchResponse}
import org.apache.kafka.image.MetadataImage
import org.apache.kafka.server.common.MetadataVersion

import replcheck.harness.Compat._

/** What a run is: the model's configuration, in Kafka's terms. */
final case class Settings(
  replicas: Int,
  minIsr: Int,
  lagMs: Long,
  metadataVersion: MetadataVersion,
  elr: Boolean,
  unclean: Boolean,
  acks: Short = -1,
)

/** One broker process: Kafka's own ReplicaManager, LogManager, Partition, fetcher and
 *  AlterPartitionManager, on the run's clock, with no thread of its own.  A crash
 *  abandons the object; a restart builds a new one over the same directory. */
final class Broker(
  val id: Int,
  val dataDir: File,
  val dirId: Uuid,
  clock: StepClock,
  scheduler: Scheduler,
  settings: Settings,
  brokerEpoch: () => Long,
  val channel: HeldChannel,
  leaderOf: Int => Option[Broker],
) {
  val config: KafkaConfig = KafkaConfig.fromProps(Broker.props(id, dataDir, settings), false)
  val metrics = new Metrics(clock)
  val metadataCache: MetadataCache = Compat.metadataCache(id)
  private val topicStats = Compat.brokerTopicStats()
  private val dirFailures = new LogDirFailureChannel(1)
  val logManager: LogManager = Compat.logManager(config, metadataCache, scheduler, clock, topicStats, dirFailures)
  private val quotas = Compat.quotas(config, metrics, clock, s"broker-$id-")
  val alterPartitions: AlterPartitionManager = Compat.alterPartitionManager(channel, scheduler, clock, id, brokerEpoch, metadataCache)

  /** Each follower fetcher's cut network, by the leader it fetches from. */
  val sends = mutable.Map.empty[Int, SteppedSend]

  val replicaManager: ReplicaManager = Compat.replicaManager(id, config, metrics, clock, scheduler, logManager, quotas,
    metadataCache, dirFailures, alterPartitions, topicStats, brokerEpoch, source => {
      val send = new SteppedSend(source, request => Broker.this.answer(source.id, request), Broker.emptyAnswer)
      sends(source.id) = send
      send
    })

  // ------------------------------------------------------------ metadata

  /** The broker's metadata: its image and how far it has read the log. */
  var image: MetadataImage = MetadataImage.EMPTY
  var cursor: Long = 0L
  private var published = false

  /** Publishes [cursor, to) as one delta, as BrokerMetadataPublisher.onMetadataUpdate
   *  does: the image to the metadata cache first, then the topics delta to the
   *  ReplicaManager (ReplicaManager.applyDelta). */
  def publish(log: MetadataLog, to: Long): Unit = {
    if (to <= cursor) return
    val (delta, newImage) = log.read(image, cursor, to)
    metadataCache.setImage(newImage)
    if (!published) { // BrokerMetadataPublisher.initializeManagers
      Compat.startLogs(logManager, metadataCache)
      published = true
    }
    image = newImage
    cursor = to
    Option(delta.topicsDelta()).foreach(d => replicaManager.applyDelta(d, newImage))
  }

  // ------------------------------------------------------------ produce

  val acked = mutable.Set.empty[Int]
  val failed = mutable.Map.empty[Int, String]
  val waiting = mutable.Set.empty[Int]

  /** A producer (acks=all, or acks=1) appends record ``recordId`` (its value names it). */
  def write(tip: TopicIdPartition, recordId: Int): Unit = {
    waiting += recordId
    Compat.append(replicaManager, tip, Compat.record(s"m$recordId".getBytes), settings.acks, error => {
      waiting -= recordId
      if (error == Errors.NONE) acked += recordId else failed(recordId) = error.name
    })
  }

  // ------------------------------------------------------------ fetches

  /** The leader's side of a follower's request, as KafkaApis handles it. */
  private def answer(leaderId: Int, request: AbstractRequest): AbstractResponse = request match {
    case fetch: FetchRequest =>
      leaderOf(leaderId) match {
        case None => Broker.emptyAnswer(fetch)
        case Some(leader) => leader.handleFetch(fetch)
      }
    case other => throw new IllegalStateException(s"unexpected request ${other.apiKey()}")
  }

  /** KafkaApis.handleFetchRequest for a follower's fetch, answered at once (maxWait 0
   *  in effect: the harness never parks a fetch in purgatory). */
  def handleFetch(fetch: FetchRequest): FetchResponse = {
    val names = metadataCache.topicIdsToNames()
    val data = fetch.fetchData(names).asScala.toSeq
    val result = new LinkedHashMap[TopicIdPartition, FetchResponseData.PartitionData]()
    val interesting = data.filter { case (tip, _) =>
      if (tip.topic == null) { result.put(tip, FetchResponse.partitionResponse(tip, Errors.UNKNOWN_TOPIC_ID)); false }
      else if (!metadataCache.contains(tip.topicPartition)) {
        result.put(tip, FetchResponse.partitionResponse(tip, Errors.UNKNOWN_TOPIC_OR_PARTITION)); false
      } else true
    }
    if (interesting.nonEmpty) {
      var answered = false
      Compat.fetchForFollower(replicaManager, quotas, fetch, interesting, math.min(fetch.maxBytes, config.fetchMaxBytes),
        Broker.inMemory, answer => {
          answered = true
          answer.foreach { case (tip, pd) => result.put(tip, pd) }
        })
      if (!answered) throw new IllegalStateException("a follower's fetch was parked in purgatory")
    }
    Compat.fetchResponse(result)
  }

  def fetcherFor(tp: TopicPartition): Option[ReplicaFetcherThread] = ServerAccess.fetcher(replicaManager.replicaFetcherManager, tp)

  // ------------------------------------------------------------ inspection

  def partition(tp: TopicPartition): Option[Partition] = replicaManager.onlinePartition(tp)

  /** Every parked fetch worker released, the objects left to the garbage collector: a
   *  process that is gone.  Its files stay as they are (the page cache survives). */
  def abandon(): Unit = {
    sends.values.foreach(_.initiateClose())
    quotas.shutdown() // its throttled-channel reapers are threads
    metrics.close()
  }

  /** A clean shutdown, as BrokerServer.shutdown does it for the replication path. */
  def shutdown(): Unit = {
    sends.values.foreach(_.initiateClose())
    replicaManager.shutdown(checkpointHW = true)
    Compat.shutdownLogs(logManager, brokerEpoch())
    quotas.shutdown()
    metrics.close()
  }
}

object Broker {
  def props(id: Int, dataDir: File, settings: Settings): Properties = {
    val p = new Properties()
    p.put("process.roles", "broker")
    p.put("node.id", id.toString)
    p.put("controller.quorum.voters", "3000@localhost:9093")
    p.put("controller.listener.names", "CONTROLLER")
    p.put("listeners", s"PLAINTEXT://localhost:${9092 + id}")
    p.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT")
    p.put("inter.broker.listener.name", "PLAINTEXT")
    p.put("log.dirs", dataDir.getAbsolutePath)
    p.put("min.insync.replicas", settings.minIsr.toString)
    p.put("default.replication.factor", settings.replicas.toString)
    p.put("replica.lag.time.max.ms", settings.lagMs.toString)
    p.put("replica.fetch.backoff.ms", "0")
    p.put("replica.fetch.wait.max.ms", "0")
    p.put("num.replica.fetchers", "1")
    p.put("unclean.leader.election.enable", settings.unclean.toString)
    p.put("log.flush.interval.messages", java.lang.Long.MAX_VALUE.toString)
    // No compacted topic here: the cleaner's threads and 128 MiB buffers would only cost.
    p.put("log.cleaner.enable", "false")
    p.put("offsets.topic.replication.factor", "1")
    p
  }

  /** Formats a broker's disk as ``kafka-storage format`` does: meta.properties with the
   *  cluster id, node id and this directory's id (KIP-858). */
  def format(dataDir: File, id: Int, clusterId: String, dirId: Uuid): Unit = {
    Files.createDirectories(dataDir.toPath)
    Compat.writeMetaProperties(dataDir, id, clusterId, dirId)
  }

  def emptyAnswer(request: AbstractRequest): AbstractResponse = request match {
    case _: FetchRequest => Compat.fetchResponse(new LinkedHashMap[TopicIdPartition, FetchResponseData.PartitionData]())
    case other => throw new IllegalStateException(s"unexpected request ${other.apiKey()}")
  }

  /** The bytes a network send would carry now: the leader's later truncation must not
   *  change an answer already sent. */
  def inMemory(records: Records): MemoryRecords = records match {
    case m: MemoryRecords => m
    case f: FileRecords =>
      val buffer = java.nio.ByteBuffer.allocate(f.sizeInBytes())
      f.readInto(buffer, 0) // reads from the slice's start, and flips
      Compat.readableRecords(buffer)
    case other =>
      val buffer = java.nio.ByteBuffer.allocate(other.sizeInBytes())
      other.batches().forEach(b => b.writeTo(buffer))
      buffer.flip()
      Compat.readableRecords(buffer)
  }
}
