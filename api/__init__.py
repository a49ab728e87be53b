"""replcheck: a model checker for Kafka's partition replication."""
