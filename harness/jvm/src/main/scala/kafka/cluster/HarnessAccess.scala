package kafka.cluster

/** Reads the Partition state Kafka keeps package-private (for observation only). */
object HarnessAccess {
  def state(p: Partition): PartitionState = p.partitionState
  def epochStart(p: Partition): Option[Long] = p.leaderEpochStartOffsetOpt
}
