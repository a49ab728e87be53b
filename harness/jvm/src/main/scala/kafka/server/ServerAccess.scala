package kafka.server

import org.apache.kafka.common.TopicPartition
import org.apache.kafka.server.PartitionFetchState

/** Reads the fetcher and AlterPartition state Kafka keeps package-private (for
 *  observation only). */
object ServerAccess {
  def fetchState(f: AbstractFetcherThread, tp: TopicPartition): Option[PartitionFetchState] = f.fetchState(tp)
  def fetcher(m: ReplicaFetcherManager, tp: TopicPartition): Option[ReplicaFetcherThread] = m.getFetcher(tp)
  def unsentAlterPartition(m: DefaultAlterPartitionManager): Boolean = !m.unsentIsrUpdates.isEmpty
}
