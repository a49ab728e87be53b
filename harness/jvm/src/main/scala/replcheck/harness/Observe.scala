package replcheck.harness

import java.io.File
import java.nio.file.Files
import java.util.{ArrayList, LinkedHashMap}

import scala.jdk.CollectionConverters._
import scala.jdk.OptionConverters._

import kafka.cluster.{HarnessAccess, Partition}
import kafka.server.ServerAccess
import org.apache.kafka.controller.ControllerCompat

import replcheck.harness.Compat._

/** Kafka's observable state after a step, as plain maps for JSON: Kafka's own numbers
 *  (leader epochs from 0); replcheck's side maps them to the model's. */
object Observe {
  type Obj = LinkedHashMap[String, AnyRef]
  private def obj(kv: (String, Any)*): Obj = {
    val m = new Obj()
    kv.foreach { case (k, v) => m.put(k, box(v)) }
    m
  }
  private def box(v: Any): AnyRef = v match {
    case null => null
    case i: Int => Integer.valueOf(i)
    case l: Long => java.lang.Long.valueOf(l)
    case b: Boolean => java.lang.Boolean.valueOf(b)
    case s: Iterable[_] => new ArrayList[AnyRef](s.map(box).toSeq.asJava)
    case o: Option[_] => o.map(box).orNull
    case o: AnyRef => o
  }

  def state(c: Cluster): Obj = {
    val p = c.bench.partition
    val controller = obj(
      "leader" -> p.leader,
      "leader_epoch" -> p.leaderEpoch,
      "partition_epoch" -> p.partitionEpoch,
      "replicas" -> p.replicas.toSeq,
      "isr" -> p.isr.toSeq.sorted,
      "elr" -> ControllerCompat.elr(p).sorted,
      "last_known_elr" -> ControllerCompat.lastKnownElr(p).sorted,
      "unfenced" -> (0 until c.brokers.length).filter(c.bench.isUnfenced),
      "log_end" -> c.log.end,
    )
    val brokers = c.brokers.indices.map(i => broker(c, i))
    obj("controller" -> controller, "brokers" -> brokers, "events" -> c.events.toSeq, "clock" -> c.clock.milliseconds())
  }

  private def broker(c: Cluster, i: Int): Obj = {
    val tp = c.bench.topicPartition
    c.brokers(i) match {
      case None =>
        val dir = c.brokerDir(i)
        obj("id" -> i, "alive" -> false, "log" -> fileLog(new File(dir, s"${tp.topic}-0")),
          "hw_checkpoint" -> checkpoint(dir), "clean_shutdown" -> new File(dir, ".kafka_cleanshutdown").exists(),
          "alter_held" -> c.heldRequests(i))
      case Some(b) =>
        val part = b.partition(tp)
        val log = part.flatMap(_.log)
        val fetch = b.fetcherFor(tp).map { f =>
          val st = ServerAccess.fetchState(f, tp)
          val leaderId = f.leader.brokerEndPoint().id
          obj("leader" -> leaderId,
            "state" -> st.map(_.state.toString.toLowerCase),
            "offset" -> st.map(_.fetchOffset),
            "epoch" -> st.map(_.currentLeaderEpoch),
            // A request sent in an earlier leader epoch is one the model has dropped already
            // (Kafka ignores its answer from KAFKA-18991: processFetchRequest checks the epoch).
            "in_flight" -> b.sends.get(leaderId).exists(s => s.parked &&
              s.inflightRequest.exists(r => requestEpochs(r).forall(e => st.exists(_.currentLeaderEpoch == e)))),
            "stale_in_flight" -> b.sends.get(leaderId).exists(s => s.parked &&
              s.inflightRequest.exists(r => !requestEpochs(r).forall(e => st.exists(_.currentLeaderEpoch == e)))),
            // The parked request itself: before KAFKA-18991 Kafka processes an earlier
            // epoch's answer whose fetch offset is the current one (harness/compare.py).
            "request" -> b.sends.get(leaderId).filter(_.parked).flatMap(_.inflightRequest).map(r =>
              obj("epoch" -> requestEpochs(r).headOption.getOrElse(-1), "offset" -> requestOffsets(r).headOption.getOrElse(-1L))))
        }
        obj(
          "id" -> i,
          "alive" -> true,
          "cursor" -> b.cursor,
          // A restarted process opens its logs only with its first metadata
          // (BrokerMetadataPublisher.initializeManagers): till then its log is the files.
          "log" -> log.map(l => batches(Compat.logBatches(l))).getOrElse(fileLog(new File(b.dataDir, s"${tp.topic}-0"))),
          "leo" -> log.map(_.logEndOffset).getOrElse(0L),
          "hw" -> log.map(_.highWatermark).getOrElse(0L),
          "hw_checkpoint" -> checkpoint(b.dataDir),
          "epoch_cache" -> log.map(l => Compat.epochEntries(l).map { case (e, o) => Seq(e, o) }).getOrElse(Seq.empty),
          "partition" -> part.map(partition(_, i)),
          "fetch" -> fetch,
          "alter_unsent" -> Compat.unsentAlterPartition(b.alterPartitions),
          "alter_held" -> c.heldRequests(i),
          "acked" -> b.acked.toSeq.sorted,
          "waiting" -> b.waiting.toSeq.sorted,
          "failed" -> b.failed.toSeq.sortBy(_._1).map { case (k, v) => Seq(k, v) },
        )
    }
  }

  /** The fetch offsets a follower's Fetch names, one per partition. */
  private def requestOffsets(r: org.apache.kafka.common.requests.AbstractRequest): Seq[Long] = r match {
    case f: org.apache.kafka.common.requests.FetchRequest =>
      f.data().topics().asScala.toSeq.flatMap(_.partitions().asScala.map(_.fetchOffset()))
    case _ => Seq.empty
  }

  /** The leader epochs a follower's Fetch names, one per partition. */
  private def requestEpochs(r: org.apache.kafka.common.requests.AbstractRequest): Seq[Int] = r match {
    case f: org.apache.kafka.common.requests.FetchRequest =>
      f.data().topics().asScala.toSeq.flatMap(_.partitions().asScala.map(_.currentLeaderEpoch()))
    case _ => Seq.empty
  }

  private def partition(p: Partition, self: Int): Obj = {
    val leader = p.leaderReplicaIdOpt.getOrElse(-1)
    val remote = if (leader == self) p.remoteReplicas.map { r =>
      val s = r.stateSnapshot
      obj("id" -> r.brokerId, "leo" -> s.logEndOffset, "last_caught_up_ms" -> s.lastCaughtUpTimeMs)
    }.toSeq.sortBy(_.get("id").asInstanceOf[Integer].intValue) else Seq.empty
    obj(
      "leader" -> leader,
      "leader_epoch" -> p.getLeaderEpoch,
      "partition_epoch" -> p.getPartitionEpoch,
      "isr" -> HarnessAccess.isr(p).toSeq.sorted,
      "maximal_isr" -> HarnessAccess.maximalIsr(p).toSeq.sorted,
      "in_flight" -> HarnessAccess.isInflight(p),
      "state" -> HarnessAccess.stateName(p),
      "epoch_start" -> HarnessAccess.epochStart(p),
      "remote" -> remote,
    )
  }

  private def batches(bs: Iterable[_ <: RecordBatch]): Seq[Seq[Any]] =
    bs.toSeq.flatMap { b =>
      b.asScala.map { r =>
        val bytes = new Array[Byte](r.valueSize())
        r.value().get(bytes)
        Seq(b.partitionLeaderEpoch(), new String(bytes))
      }
    }

  private def fileLog(partDir: File): Seq[Seq[Any]] = {
    val segments = Option(partDir.listFiles()).getOrElse(Array.empty[File]).filter(_.getName.endsWith(".log")).sortBy(_.getName)
    segments.toSeq.flatMap { f =>
      val fr = Compat.openFileRecords(f)
      try batches(fr.batches().asScala) finally fr.close()
    }
  }

  /** The partition's entry in replication-offset-checkpoint (0 if none). */
  private def checkpoint(dir: File): Long = {
    val f = new File(dir, "replication-offset-checkpoint")
    if (!f.exists()) 0L
    else Files.readAllLines(f.toPath).asScala.drop(2).map(_.trim.split(" ")).collectFirst {
      case Array(topic, "0", offset) if topic == "t" => offset.toLong
    }.getOrElse(0L)
  }
}
