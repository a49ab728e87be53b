package replcheck.harness

import java.io.File
import java.nio.file.{Files, Path, StandardCopyOption}

import scala.collection.mutable
import scala.jdk.CollectionConverters._
import scala.jdk.OptionConverters._

import com.fasterxml.jackson.databind.JsonNode
import kafka.cluster.HarnessAccess
import kafka.server.ServerAccess
import org.apache.kafka.common.{TopicIdPartition, Uuid}
import org.apache.kafka.common.message.AlterPartitionRequestData
import org.apache.kafka.common.requests.{AlterPartitionRequest, AlterPartitionResponse, FetchRequest}
import org.apache.kafka.controller.{ControllerBench, ControllerCompat}
import org.apache.kafka.metadata.LeaderConstants

import replcheck.harness.Compat._

/** A step the trace asks for that Kafka does not take (or takes otherwise): the run
 *  stops there and says why.  ``kind`` is one of the protocol's error kinds. */
final class Refused(val kind: String, message: String) extends RuntimeException(message)

/** One run of one trace: a controller bench, the metadata log and a broker per replica,
 *  all on one clock, driven one op at a time. */
final class Cluster(settings: Settings, assignment: Seq[Int], root: Path) {
  val clock = new StepClock()
  val scheduler = new StepScheduler(clock)
  private val kafkaScheduler = Compat.scheduler(scheduler)
  val log = new MetadataLog
  val bench = new ControllerBench(settings.replicas, settings.metadataVersion, settings.elr, log)
  private val n = settings.replicas
  private val generation = Array.fill(n)(0)
  private val dirIds = Array.tabulate(n)(i => Uuid.randomUuid())
  val brokers: Array[Option[Broker]] = Array.fill(n)(None)
  val channels: Array[HeldChannel] = Array.tabulate(n)(i => new HeldChannel(i))
  /** Requests an earlier process of the broker sent before it ended: the controller may
   *  still get them (the model's queue keeps them across a crash), oldest first. */
  private val earlier: Array[Vector[HeldChannel]] = Array.fill(n)(Vector.empty)
  def heldRequests(i: Int): Int = earlier(i).map(_.pending).sum + channels(i).pending
  val events = mutable.ArrayBuffer.empty[String]
  private var lastOp: Option[(String, Int)] = None

  private def dir(i: Int): File = root.resolve(s"b$i-g${generation(i)}").toFile
  def brokerDir(i: Int): File = dir(i)

  def start(): Unit = {
    (0 until n).foreach(i => Broker.format(dir(i), i, bench.clusterId, dirIds(i)))
    bench.bootstrap(assignment, settings.minIsr, settings.unclean, dirIds(_))
    (0 until n).foreach(i => brokers(i) = Some(newBroker(i)))
    // The model starts with every replica told epoch 1: the whole bootstrap log, one delta.
    brokers.flatten.foreach(_.publish(log, log.end))
    settle()
  }

  private def newBroker(i: Int): Broker = {
    if (channels(i).pending > 0) earlier(i) = earlier(i) :+ channels(i) // still on its way
    channels(i) = new HeldChannel(i)
    new Broker(i, dir(i), dirIds(i), clock, kafkaScheduler, settings, () => bench.brokerEpoch(i), channels(i),
      id => brokers(id))
  }

  def tip = new TopicIdPartition(bench.topicId, bench.topicPartition)
  private def live(i: Int): Broker = brokers(i).getOrElse(throw new Refused("not_enabled", s"r$i is not running"))

  /** Runs one op; what it refused is a Refused exception. */
  def apply(op: JsonNode): Unit = {
    val name = op.get("op").asText()
    def int(k: String): Int = op.get(k).asInt()
    events.clear()
    // One millisecond per step: events a step apart are apart in Kafka's time too (a
    // follower that caught up after the leader's epoch started is not tied with it).
    clock.sleep(1)
    // Followers the model's leaders do not count after this step: let time pass first so
    // that Kafka's leaders need not wait for them either (see letHwPass).
    Option(op.get("let_pass")).foreach(_.fields().asScala.foreach { e =>
      letHwPass(e.getKey.toInt, e.getValue.elements().asScala.map(_.asInt()).toSet)
    })
    name match {
      case "write" => live(int("leader")).write(tip, int("id"))
      case "fetch_request" =>
        Option(op.get("leader_learns_brokers")).foreach(how => learnBrokers(int("leader"), how.asText() == "all"))
        fetchRequest(int("follower"), int("leader"))
      case "fetch_response" => fetchResponse(int("follower"))
      case "diverging_truncate" =>
        if (!lastOp.contains("fetch_response" -> int("follower")))
          throw new Refused("unrealizable_timing", "Kafka truncates on a diverging epoch in the same " +
            "processFetchRequest call that takes the HW: only right after that fetch_response")
      case "shrink_isr" => shrink(int("leader"), Set(int("follower")))
      case "shrink_isr_set" => shrink(int("leader"), op.get("followers").elements().asScala.map(_.asInt()).toSet)
      case "alter_isr" => alterIsr(int("leader"))
      case "apply_isr" => applyIsr(int("leader"), replayOwed = false)
      case "reapply_isr" => applyIsr(int("leader"), replayOwed = true)
      case "deliver" => deliver(int("replica"))
      case "deliver_latest" => publish(live(int("replica")), log.end)
      case "checkpoint_hw" => live(int("replica")).replicaManager.checkpointHighWatermarks()
      case "crash" => crash(int("replica"), int("keep"))
      case "shutdown" =>
        val i = int("replica")
        live(i).shutdown()
        brokers(i) = None
      case "replace_disk" =>
        val i = int("replica")
        generation(i) += 1
        dirIds(i) = Uuid.randomUuid()
        Broker.format(dir(i), i, bench.clusterId, dirIds(i))
      case "restart" =>
        val i = int("replica")
        if (brokers(i).isDefined) throw new Refused("not_enabled", s"r$i is running")
        brokers(i) = Some(newBroker(i))
      case "notice_crash" | "fence" => expire(int("replica"), int("new_leader"))
      case "notice_restart" =>
        val i = int("replica")
        val previous = Compat.cleanShutdownEpoch(live(i).logManager)
        bench.register(i, dirIds(i), previous)
        bench.heartbeat(i, fence = false)
      case "unfence" => bench.heartbeat(int("replica"), fence = false)
      case "reorder" => bench.reorder(op.get("replicas").elements().asScala.map(_.asInt()).toSeq)
      case "elect" => elect(int("leader"))
      case "report_dir" =>
        val i = int("replica")
        bench.assignDir(i, dirIds(i))
      case other => throw new Refused("bad_op", s"unknown op $other")
    }
    lastOp = Some(name -> Option(op.get("follower")).orElse(Option(op.get("replica"))).orElse(Option(op.get("leader"))).map(_.asInt()).getOrElse(-1))
    settle()
  }

  /** What KafkaApis does after each request, and the one-shot tasks now due. */
  private def settle(): Unit = {
    var more = true
    while (more) {
      brokers.flatten.foreach(_.replicaManager.tryCompleteActions())
      more = scheduler.runDue() > 0
    }
  }

  // ------------------------------------------------------------ fetches

  /** Broker ``l`` applies the broker records (registrations, fencing) the controller wrote
   *  since its cursor, up to the first partition record it does not hold yet (none while
   *  it has a change pending, which a replay would drop, nor the record of a change it
   *  adopted whose replay the trace has still to take: ``adopted`` false): a timing Kafka allows (its loader
   *  applies the log in order), chosen where the model's leader adds a follower to its ISR.
   *  The model checks a follower's eligibility at the controller; Kafka's leader reads
   *  its own metadata too (Partition.isReplicaIsrEligible: not fenced, not shutting down,
   *  and from 3.5 the broker epoch of the fetch, KIP-903). */
  private def learnBrokers(l: Int, adopted: Boolean): Unit = brokers(l).foreach { b =>
    val part = b.partition(bench.topicPartition)
    val (leaderEpoch, partitionEpoch) = (part.map(_.getLeaderEpoch).getOrElse(-1), part.map(_.getPartitionEpoch).getOrElse(-1))
    // A partition record the leader already holds (the record of a change it adopted from
    // an AlterPartition response, with nothing pending since) changes nothing on it.
    def known(o: Long) = !log.isPartitionRecord(o) ||
      (adopted && log.leaderEpochAt(o) == leaderEpoch && log.partitionEpochAt(o) <= partitionEpoch)
    var to = b.cursor
    var more = !part.exists(p => HarnessAccess.maximalIsr(p) != HarnessAccess.isr(p))
    while (more && to < log.end) {
      val end = log.batchEnd(to)
      if ((to until end).forall(known)) to = end else more = false
    }
    if (to > b.cursor) {
      events += s"r$l applied the broker records up to offset $to before the fetch"
      publish(b, to)
    }
  }

  private def fetchRequest(f: Int, l: Int): Unit = {
    val b = live(f)
    val fetcher = b.fetcherFor(bench.topicPartition).getOrElse(
      throw new Refused("not_enabled", s"r$f has no fetcher for the partition"))
    val source = fetcher.leader.brokerEndPoint().id
    if (source != l) throw new Refused("not_enabled", s"r$f fetches from r$source, not r$l")
    val send = b.sends(l)
    // A response the model dropped (a new epoch came).  Kafka ignores it from KAFKA-18991
    // (3.9.1, 4.0.1, 4.1.0: processFetchRequest compares the request's leader epoch); before,
    // it acts on it where the restarted fetch state is Fetching at the offset requested.
    if (send.parked) {
      events += s"r$f processes its earlier, stale fetch response first"
      send.respond()
    }
    send.request(() => fetcher.doWork()) match {
      case None => throw new Refused("not_enabled", s"r$f's fetcher sent no request (nothing to fetch)")
      case Some(_: FetchRequest) =>
        send.inflightResponse.foreach { r =>
          r.asInstanceOf[org.apache.kafka.common.requests.FetchResponse].data().responses().forEach(t => t.partitions().forEach { pd =>
            val n = org.apache.kafka.common.requests.FetchResponse.recordsSize(pd)
            events += s"r$l answers r$f: ${org.apache.kafka.common.protocol.Errors.forCode(pd.errorCode()).name}, hw ${pd.highWatermark()}, $n bytes" +
              (if (pd.divergingEpoch().epoch() >= 0) s", diverging epoch ${pd.divergingEpoch().epoch()} end ${pd.divergingEpoch().endOffset()}" else "")
          })
        }
      case Some(other) => throw new Refused("wrong_request", s"r$f sent ${other.apiKey()}, not a Fetch")
    }
  }

  private def fetchResponse(f: Int): Unit = {
    val b = live(f)
    val parked = b.sends.values.filter(_.parked)
    if (parked.isEmpty) throw new Refused("not_enabled", s"r$f has no fetch in flight")
    parked.foreach { s =>
      val extra = s.respond()
      if (extra > 0) events += s"r$f sent $extra more request(s) in the same doWork (answered empty)"
    }
  }

  // ------------------------------------------------------------ ISR

  /** Moves the clock so that exactly ``followers`` are out of sync, then lets the leader
   *  shrink (Partition.maybeShrinkIsr removes every out-of-sync follower at once). */
  private def shrink(l: Int, followers: Set[Int]): Unit = {
    val p = live(l).partition(bench.topicPartition).getOrElse(throw new Refused("not_enabled", s"r$l has no partition"))
    val leo = p.localLogOrException.logEndOffset
    val isr = HarnessAccess.isr(p) - l
    val lag = settings.lagMs
    def state(f: Int) = p.getReplica(f).map(_.stateSnapshot)
    val lagging = isr.filter(f => !state(f).exists(_.logEndOffset == leo))
    if (!followers.subsetOf(lagging))
      throw new Refused("not_enabled", s"r$l: ${followers.diff(lagging).mkString(",")} caught up (LEO $leo)")
    def caughtUpAt(f: Int) = state(f).map(_.lastCaughtUpTimeMs).getOrElse(0L)
    val needed = followers.map(caughtUpAt).max + lag + 1
    val others = lagging -- followers
    val latest = if (others.isEmpty) Long.MaxValue else others.map(caughtUpAt).min + lag
    val t = math.max(needed, clock.milliseconds())
    if (t > latest)
      throw new Refused("unrealizable_timing", s"r$l cannot find ${followers.mkString(",")} out of sync without " +
        s"${others.mkString(",")}: last caught up at ${followers.map(f => s"r$f ${caughtUpAt(f)}").mkString(", ")} vs " +
        s"${others.map(f => s"r$f ${caughtUpAt(f)}").mkString(", ")} (lag ${lag} ms, now ${clock.milliseconds()})")
    clock.advanceTo(t)
    p.maybeShrinkIsr()
    HarnessAccess.shrinking(p) match {
      case Some(outOfSync) =>
        if (outOfSync != followers)
          throw new Refused("not_enabled", s"r$l proposed to remove ${outOfSync.mkString(",")}")
      case None => throw new Refused("not_enabled", s"r$l did not propose a shrink (${HarnessAccess.describe(p)})")
    }
  }

  /** The model has no clock: its leader never holds the HW for a follower outside its
   *  (maximal) ISR.  Kafka's does while that follower caught up within
   *  replica.lag.time.max.ms (Partition.maybeIncrementLeaderHW: isCaughtUp, and from 3.6
   *  isReplicaIsrEligible, KAFKA-15021).  So before each step the clock moves past the lag
   *  of every follower the model's leader ``l`` does not count after the step (``let_pass``,
   *  from harness/steps.py) and that is not ahead of the leader's log end (a write moves
   *  that end): a run in which the step came that much later, which the timeless model
   *  stands for. */
  private def letHwPass(l: Int, followers: Set[Int]): Unit = brokers(l).flatMap(_.partition(bench.topicPartition)).foreach { p =>
    if (p.isLeader) {
      val leo = p.localLogOrException.logEndOffset
      val stuck = p.remoteReplicas.filter { r =>
        val st = r.stateSnapshot
        // Caught up by time (the LEO half of ReplicaState.isCaughtUp is the log's business).
        followers.contains(r.brokerId) && st.logEndOffset <= leo &&
          clock.milliseconds() - st.lastCaughtUpTimeMs <= settings.lagMs
      }
      if (stuck.nonEmpty) {
        val t = stuck.map(_.stateSnapshot.lastCaughtUpTimeMs).max + settings.lagMs + 1
        events += s"clock moved ${t - clock.milliseconds()} ms: r${stuck.map(_.brokerId).mkString(",r")} no longer " +
          s"caught up (outside the ISR), so r$l's HW need not wait for it"
        clock.advanceTo(t)
      }
    }
  }

  private def alterIsr(l: Int): Unit = {
    earlier(l) = earlier(l).filter(_.pending > 0)
    val from = earlier(l).headOption.getOrElse(channels(l))
    val (request, respond) = from.pop().getOrElse(throw new Refused("not_enabled", s"r$l has no AlterPartition held"))
    val data = request.asInstanceOf[AlterPartitionRequest].data()
    val (response, _, _) = try bench.alterPartition(data, request.version()) catch {
      // The controller refuses the whole request (a stale broker epoch: an earlier process
      // of the broker sent it), as ControllerApis answers a failed request.
      case e: org.apache.kafka.common.errors.ApiException =>
        events += s"controller refused r$l's AlterPartition: ${org.apache.kafka.common.protocol.Errors.forException(e).name}"
        (request.getErrorResponse(0, e).asInstanceOf[AlterPartitionResponse].data(), 0L, 0)
    }
    val errors = response.topics().asScala.flatMap(_.partitions().asScala).map(_.errorCode()).filter(_ != 0)
    if (errors.nonEmpty) events += s"controller refused r$l's AlterPartition: ${errors.map(e => org.apache.kafka.common.protocol.Errors.forCode(e).name).mkString(",")}"
    val adopted = brokers(l).exists(_.channel eq from)
    respond(new AlterPartitionResponse(response))
    if (!adopted) events += s"r$l's AlterPartition answered after its process ended"
    else if (errors.isEmpty) for {
      answer <- response.topics().asScala.flatMap(_.partitions().asScala).headOption
      p <- live(l).partition(bench.topicPartition)
    } {
      val isr = answer.isr().asScala.toSeq.map(_.toInt).sorted.mkString("[", ", ", "]")
      if (p.getPartitionEpoch == answer.partitionEpoch())
        events += s"r$l adopts the AlterPartition response: ISR $isr, partition epoch ${answer.partitionEpoch()}"
      else {
        val why =
          if (answer.leaderEpoch() != p.getLeaderEpoch) s"a new leader epoch (${answer.leaderEpoch()}), which it takes from the record only"
          else if (!HarnessAccess.isInflight(p)) "no change of its is pending: it answers a proposal the leader dropped"
          else "not the change it waits for"
        events += s"r$l ignores the AlterPartition response (ISR $isr, partition epoch " +
          s"${answer.partitionEpoch()}): $why; it stays ${HarnessAccess.stateName(p)} at partition epoch ${p.getPartitionEpoch}"
      }
    }
  }

  /** ``b`` applies the log up to ``to`` as one delta, and the events say what its
   *  Partition did that the findings turn on: a leader made leader again from one delta
   *  (Partition.makeLeader's isNewLeader = !isLeader is false, so Replica.resetReplicaState
   *  keeps its followers' LEOs: F2), and a record at the partition epoch the leader holds
   *  that commits its ISR over a pending change (makeLeader skips only an older one: F3). */
  private def publish(b: Broker, to: Long): Unit = {
    val before = b.partition(bench.topicPartition).map(p => (p.leaderReplicaIdOpt.contains(b.id),
      p.getLeaderEpoch, p.getPartitionEpoch, HarnessAccess.stateName(p), HarnessAccess.maximalIsr(p)))
    b.publish(log, to)
    for ((wasLeader, epoch, partitionEpoch, state, maximal) <- before; p <- b.partition(bench.topicPartition)
         if wasLeader && p.leaderReplicaIdOpt.contains(b.id)) {
      val isr = HarnessAccess.isr(p).toSeq.sorted.mkString("[", ", ", "]")
      if (p.getLeaderEpoch > epoch)
        events += s"r${b.id} stays leader, leader epoch $epoch -> ${p.getLeaderEpoch}" +
          (if (p.getLeaderEpoch == epoch + 2) s" (epoch ${epoch + 1} unseen: one delta)"
           else if (p.getLeaderEpoch > epoch + 2) s" (epochs ${epoch + 1} to ${p.getLeaderEpoch - 1} unseen: one delta)"
           else "") +
          ": Partition.makeLeader with isNewLeader = false keeps its followers' LEOs " +
          s"(${p.remoteReplicas.map(r => s"r${r.brokerId} ${r.stateSnapshot.logEndOffset}").mkString(", ")})"
      else if (state.startsWith("Pending") && p.getPartitionEpoch == partitionEpoch && !HarnessAccess.isInflight(p))
        events += s"r${b.id} replays the record of partition epoch $partitionEpoch, the one it holds: " +
          s"Partition.makeLeader commits ISR $isr and drops its $state " +
          s"(maximal ISR ${maximal.toSeq.sorted.mkString("[", ", ", "]")})"
    }
  }

  /** The leader replays partition records of its own leader epoch: up to the record of
   *  the change it adopted from a response (``reapply_isr``), or up to the newest
   *  record that keeps the leader epoch (``apply_isr``). */
  private def applyIsr(l: Int, replayOwed: Boolean): Unit = {
    val b = live(l)
    val myEpoch = b.partition(bench.topicPartition).map(_.getLeaderEpoch).getOrElse(-1)
    var to = b.cursor
    var o = b.cursor
    while (o < log.end && !(log.isPartitionRecord(o) && log.leaderEpochAt(o) != myEpoch)) {
      o += 1
      if (log.isPartitionRecord(o - 1)) to = o
    }
    if (replayOwed) {
      // The record of the change the leader adopted from an AlterPartition response: the
      // unread partition record of the leader and partition epochs it holds.  A response
      // it ignored (Partition.handleAlterPartitionUpdate: another leader epoch, as a shrink
      // before 3.6 bumps it) adopted nothing and leaves the earlier change's record owed.
      val myPartitionEpoch = b.partition(bench.topicPartition).map(_.getPartitionEpoch).getOrElse(-1)
      val owed = (b.cursor until o).filter(x => log.isPartitionRecord(x) && log.leaderEpochAt(x) == myEpoch &&
        log.partitionEpochAt(x) == myPartitionEpoch).lastOption
        .getOrElse(throw new Refused("not_enabled", s"r$l has no adopted change's record to replay"))
      to = owed + 1
    }
    if (to <= b.cursor) throw new Refused("not_enabled", s"r$l has no record of its leader epoch to apply")
    publish(b, log.batchEnd(to - 1))
  }

  /** The next leader epoch's record reaches the broker, with everything before it (and
   *  the rest of its batch) in one delta. */
  private def deliver(i: Int): Unit = {
    val b = live(i)
    val current = b.partition(bench.topicPartition).map(_.getLeaderEpoch).getOrElse(-1)
    var o = b.cursor
    while (o < log.end && !(log.isPartitionRecord(o) && log.leaderEpochAt(o) > current)) o += 1
    if (o >= log.end) throw new Refused("not_enabled", s"r$i has no newer leader epoch to learn")
    publish(b, log.batchEnd(o))
  }

  // ------------------------------------------------------------ processes

  private def crash(i: Int, keep: Int): Unit = {
    val b = live(i)
    val leo = b.partition(bench.topicPartition).flatMap(_.log).map(_.logEndOffset).getOrElse(0L)
    b.abandon()
    brokers(i) = None
    val from = dir(i).toPath
    generation(i) += 1
    copyTree(from, dir(i).toPath)
    if (keep < leo) cut(dir(i), keep)
  }

  private def copyTree(from: Path, to: Path): Unit = {
    val walk = Files.walk(from)
    try walk.iterator().asScala.foreach { p =>
      val target = to.resolve(from.relativize(p))
      if (Files.isDirectory(p)) Files.createDirectories(target)
      else if (!p.getFileName.toString.endsWith(".lock")) Files.copy(p, target, StandardCopyOption.REPLACE_EXISTING)
    } finally walk.close()
  }

  /** A lossy crash: the partition's log keeps its first ``keep`` records (whole batches:
   *  the model writes one record per batch); the indexes go, recovery rebuilds them. */
  private def cut(root: File, keep: Int): Unit = {
    val partDir = new File(root, s"${bench.topic}-0")
    val segments = Option(partDir.listFiles()).getOrElse(Array.empty[File]).filter(_.getName.endsWith(".log")).sortBy(_.getName)
    segments.foreach { f =>
      val records = Compat.openFileRecords(f)
      var position = 0
      records.batches().asScala.foreach(b => if (b.lastOffset < keep) position += b.sizeInBytes())
      records.close()
      val ch = java.nio.channels.FileChannel.open(f.toPath, java.nio.file.StandardOpenOption.WRITE)
      try ch.truncate(position) finally ch.close()
    }
    Option(partDir.listFiles()).getOrElse(Array.empty[File]).filter(f => f.getName.endsWith(".index") || f.getName.endsWith(".timeindex"))
      .foreach(_.delete())
  }

  private def expire(i: Int, newLeader: Int): Unit = {
    bench.expireSession(i)
    val leader = bench.partition.leader
    val want = if (newLeader < 0) LeaderConstants.NO_LEADER else newLeader
    if (leader != want) throw new Refused("choice_mismatch", s"the controller elected ${name(leader)}, the model ${name(want)}")
  }

  private def elect(x: Int): Unit = {
    val p = bench.partition
    if (p.leader == LeaderConstants.NO_LEADER && p.isr.isEmpty && ControllerCompat.elr(p).isEmpty) bench.balance()
    else {
      if (p.replicas(0) != x) throw new Refused("choice_mismatch", s"r$x is not the preferred replica (replicas ${p.replicas.mkString(",")})")
      bench.electPreferred()
    }
    val leader = bench.partition.leader
    if (leader != x) throw new Refused("choice_mismatch", s"the controller elected ${name(leader)}, the model r$x")
  }

  private def name(leader: Int) = if (leader < 0) "no leader" else s"r$leader"

  def close(): Unit = brokers.flatten.foreach(b => try b.abandon() catch { case _: Throwable => () })
}
