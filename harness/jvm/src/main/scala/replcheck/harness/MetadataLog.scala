package replcheck.harness

import java.util.{List => JList}

import scala.collection.mutable
import scala.jdk.CollectionConverters._

import org.apache.kafka.common.metadata.PartitionChangeRecord
import org.apache.kafka.common.metadata.PartitionRecord
import org.apache.kafka.image.{MetadataDelta, MetadataImage}
import org.apache.kafka.server.common.ApiMessageAndVersion

/** The controller's metadata log: each controller step's records are one batch.  A
 *  broker reads it through its own cursor, so what a broker knows lags the
 *  controller by exactly the records the trace has not delivered to it yet. */
final class MetadataLog {
  val records = mutable.ArrayBuffer.empty[ApiMessageAndVersion]
  /** The offset one past each batch. */
  val batchEnds = mutable.ArrayBuffer.empty[Long]

  def end: Long = records.size.toLong

  /** The end of the batch that holds ``offset``: a broker's metadata loader applies a
   *  controller batch whole (MetadataBatchLoader.loadBatch), never part of one. */
  def batchEnd(offset: Long): Long = batchEnds.find(_ > offset).getOrElse(end)

  def append(batch: JList[ApiMessageAndVersion]): Long = {
    val first = end
    records ++= batch.asScala
    if (!batch.isEmpty) batchEnds += end
    first
  }

  /** The partition's leader and partition epochs after each record, as the controller
   *  replayed it. */
  private val epochs = mutable.ArrayBuffer.empty[Int]
  private val partitionEpochs = mutable.ArrayBuffer.empty[Int]
  def noteEpoch(offset: Long, leaderEpoch: Int, partitionEpoch: Int): Unit = {
    while (epochs.size <= offset) { epochs += -1; partitionEpochs += -1 }
    epochs(offset.toInt) = leaderEpoch
    partitionEpochs(offset.toInt) = partitionEpoch
  }
  def partitionEpochAt(offset: Long): Int = partitionEpochs(offset.toInt)
  def leaderEpochAt(offset: Long): Int = epochs(offset.toInt)

  def isPartitionRecord(offset: Long): Boolean = records(offset.toInt).message match {
    case _: PartitionRecord | _: PartitionChangeRecord => true
    case _ => false
  }

  /** The image after replaying [from, to) on ``image``, and the delta that did it: what
   *  the broker's MetadataLoader would publish for that stretch of the log as one
   *  batch (TopicDelta.replay merges the partition changes in it). */
  def read(image: MetadataImage, from: Long, to: Long): (MetadataDelta, MetadataImage) = {
    Compat.replayDelta(image, (from until to).map(o => o -> records(o.toInt).message))
  }
}
