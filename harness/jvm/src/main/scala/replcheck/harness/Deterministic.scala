package replcheck.harness

import java.util.concurrent.{Delayed, ScheduledFuture, TimeUnit}
import java.util.function.Supplier

import scala.collection.mutable

import org.apache.kafka.common.utils.Time

/** The one clock of a run.  It moves only when the driver moves it (a shrink needs a
 *  follower out of sync for replica.lag.time.max.ms), never by itself: no step of a
 *  trace depends on how long the JVM took. */
final class StepClock(start: Long = 1000000L) extends Time {
  private var now = start
  override def milliseconds(): Long = now
  override def nanoseconds(): Long = TimeUnit.MILLISECONDS.toNanos(now)
  override def sleep(ms: Long): Unit = now += ms
  override def waitObject(obj: Object, condition: Supplier[java.lang.Boolean], deadlineMs: Long): Unit =
    if (!condition.get()) throw new IllegalStateException("a Kafka class waited on the harness's clock")
  def advanceTo(t: Long): Unit = if (t > now) now = t
}

/** Kafka's background scheduler, replaced (Compat.scheduler gives it the release's
 *  Scheduler interface): one-shot tasks (an asynchronous epoch-cache flush, an
 *  AlterPartition retry) run at the end of the step they become due in; periodic tasks
 *  (log flush, retention, recovery-point checkpoints) never run, since each model
 *  action that needs one (the HW checkpoint, an ISR shrink) is its own op. */
final class StepScheduler(clock: StepClock) {
  private case class Task(name: String, run: Runnable, due: Long, seq: Long)
  private val tasks = mutable.ArrayBuffer.empty[Task]
  private var seq = 0L
  val periodic = mutable.ArrayBuffer.empty[String]

  def shutdown(): Unit = tasks.clear()
  def schedule(name: String, task: Runnable, delayMs: Long, periodMs: Long): ScheduledFuture[_] = {
    if (periodMs > 0) periodic += name
    else synchronized { seq += 1; tasks += Task(name, task, clock.milliseconds() + math.max(delayMs, 0), seq) }
    Done
  }

  /** Runs the one-shot tasks due now, oldest first, and those they schedule. */
  def runDue(): Int = {
    var ran = 0
    var due = nextDue()
    while (due.isDefined) {
      synchronized { tasks -= due.get }
      due.get.run.run()
      ran += 1
      due = nextDue()
    }
    ran
  }
  private def nextDue(): Option[Task] = synchronized {
    tasks.filter(_.due <= clock.milliseconds()).sortBy(t => (t.due, t.seq)).headOption
  }

  private object Done extends ScheduledFuture[AnyRef] {
    def getDelay(unit: TimeUnit): Long = 0
    def compareTo(o: Delayed): Int = 0
    def cancel(mayInterruptIfRunning: Boolean): Boolean = false
    def isCancelled: Boolean = false
    def isDone: Boolean = false
    def get(): AnyRef = null
    def get(timeout: Long, unit: TimeUnit): AnyRef = null
  }
}
