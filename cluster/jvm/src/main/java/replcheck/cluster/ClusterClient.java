package replcheck.cluster;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The client side of a reproduction: one long-lived process that takes one command per
 * line on stdin ({@code op key=value ...}, lists comma-separated) and answers one JSON
 * line on stdout (replcheck.cluster.client).  No JSON library: Kafka's own Jackson is
 * not on the compile classpath of every release.
 * Kafka's own Admin, producer (acks=all) and consumer, against the CLIENT listeners.
 */
public final class ClusterClient {
  /** One command: its op and its key=value arguments. */
  private static final class Cmd {
    final Map<String, String> args = new java.util.HashMap<>();

    Cmd(String line) {
      String[] words = line.trim().split("\\s+");
      args.put("op", words[0]);
      for (int i = 1; i < words.length; i++) {
        int eq = words[i].indexOf('=');
        args.put(words[i].substring(0, eq), words[i].substring(eq + 1));
      }
    }

    String get(String key, String otherwise) {
      return args.getOrDefault(key, otherwise);
    }

    List<Integer> ints(String key) {
      List<Integer> out = new ArrayList<>();
      for (String s : args.get(key).split(",")) {
        out.add(Integer.parseInt(s));
      }
      return out;
    }
  }

  /** A JSON object written by hand: string, number and list values. */
  private static final class Reply {
    private final StringBuilder body = new StringBuilder();

    Reply put(String key, Object value) {
      body.append(body.length() == 0 ? "" : ",").append(quote(key)).append(':').append(value(value));
      return this;
    }

    private static String value(Object v) {
      if (v instanceof Number || v instanceof Boolean) {
        return v.toString();
      }
      if (v instanceof Collection) {
        StringBuilder b = new StringBuilder("[");
        for (Object o : (Collection<?>) v) {
          b.append(b.length() == 1 ? "" : ",").append(value(o));
        }
        return b.append(']').toString();
      }
      if (v instanceof Reply) {
        return v.toString();
      }
      return quote(String.valueOf(v));
    }

    private static String quote(String s) {
      StringBuilder b = new StringBuilder("\"");
      for (char ch : s.toCharArray()) {
        if (ch == '"' || ch == '\\') {
          b.append('\\').append(ch);
        } else if (ch < 0x20) {
          b.append(String.format("\\u%04x", (int) ch));
        } else {
          b.append(ch);
        }
      }
      return b.append('"').toString();
    }

    @Override
    public String toString() {
      return "{" + body + "}";
    }
  }

  private final String bootstrap;
  private final Admin admin;
  private KafkaProducer<String, String> producer;
  /** Per write: null while unanswered, then "acked:<offset>" or "failed:<error>". */
  private final Map<String, String> writes = new java.util.concurrent.ConcurrentHashMap<>();

  private ClusterClient(String bootstrap) {
    this.bootstrap = bootstrap;
    this.admin = Admin.create(common());
  }

  private Properties common() {
    Properties p = new Properties();
    p.put("bootstrap.servers", bootstrap);
    p.put("request.timeout.ms", "20000");
    p.put("default.api.timeout.ms", "30000");
    p.put("metadata.max.age.ms", "1000");
    return p;
  }

  public static void main(String[] args) throws Exception {
    ClusterClient c = new ClusterClient(args[0]);
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line = in.readLine(); line != null; line = in.readLine()) {
      if (line.isBlank()) {
        continue;
      }
      Reply reply;
      try {
        reply = c.handle(new Cmd(line));
        reply.put("ok", true);
      } catch (Exception e) {
        Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
        reply = new Reply().put("ok", false);
        reply.put("error", cause.getClass().getSimpleName() + ": " + cause.getMessage());
      }
      out.println(reply);
    }
    c.close();
  }

  private Reply handle(Cmd cmd) throws Exception {
    String topic = cmd.get("topic", "t");
    TopicPartition tp = new TopicPartition(topic, 0);
    Reply r = new Reply();
    switch (cmd.get("op", "")) {
      case "brokers": {
        Collection<Node> nodes = admin.describeCluster().nodes().get(20, TimeUnit.SECONDS);
        List<Integer> ids = new ArrayList<>();
        nodes.forEach(n -> ids.add(n.id()));
        return r.put("brokers", ids);
      }
      case "create": {
        NewTopic t = new NewTopic(topic, Map.of(0, cmd.ints("replicas")))
            .configs(Map.of("min.insync.replicas", cmd.get("min_isr", "1")));
        admin.createTopics(List.of(t)).all().get(30, TimeUnit.SECONDS);
        return r;
      }
      case "describe": {
        TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames()
            .get(20, TimeUnit.SECONDS).get(topic);
        TopicPartitionInfo p = d.partitions().get(0);
        r.put("leader", p.leader() == null ? -1 : p.leader().id());
        return r.put("replicas", ids(p.replicas())).put("isr", ids(p.isr()));
      }
      case "write": {  // acks=all; answered later (see "writes")
        String id = cmd.get("id", "");
        writes.put(id, "");
        producer().send(new ProducerRecord<>(topic, 0, null, id), (meta, e) ->
            writes.put(id, e == null ? "acked:" + meta.offset()
                : "failed:" + e.getClass().getSimpleName() + ": " + e.getMessage()));
        producer().flush();  // sent now; flush returns once answered or failed
        return r;
      }
      case "send": {  // as "write", without waiting for the answer
        String id = cmd.get("id", "");
        writes.put(id, "");
        producer().send(new ProducerRecord<>(topic, 0, null, id), (meta, e) ->
            writes.put(id, e == null ? "acked:" + meta.offset()
                : "failed:" + e.getClass().getSimpleName() + ": " + e.getMessage()));
        return r;
      }
      case "writes": {
        Reply w = new Reply();
        new java.util.TreeMap<>(writes).forEach(w::put);
        return r.put("writes", w);
      }
      case "quorum": {  // the metadata log: the controller's high watermark and log end
        org.apache.kafka.clients.admin.QuorumInfo q =
            admin.describeMetadataQuorum().quorumInfo().get(20, TimeUnit.SECONDS);
        long end = -1;
        for (org.apache.kafka.clients.admin.QuorumInfo.ReplicaState v : q.voters()) {
          if (v.replicaId() == q.leaderId()) {
            end = v.logEndOffset();
          }
        }
        return r.put("hw", q.highWatermark()).put("end", end);
      }
      case "hw": {
        long hw = admin.listOffsets(Map.of(tp, OffsetSpec.latest())).partitionResult(tp)
            .get(20, TimeUnit.SECONDS).offset();
        r.put("hw", hw);
        return r;
      }
      case "elect": {  // the preferred leader: the first replica
        admin.electLeaders(ElectionType.PREFERRED, Set.of(tp)).partitions()
            .get(30, TimeUnit.SECONDS).forEach((k, v) -> v.ifPresent(e -> r.put("error", e.toString())));
        return r;
      }
      case "reorder": {  // the same replicas in a new order: no leader change
        admin.alterPartitionReassignments(
            Map.of(tp, Optional.of(new NewPartitionReassignment(cmd.ints("replicas"))))).all().get(30, TimeUnit.SECONDS);
        return r;
      }
      case "read": {  // every record, from the start, as the partition's leader serves them
        Properties p = common();
        p.put("key.deserializer", StringDeserializer.class.getName());
        p.put("value.deserializer", StringDeserializer.class.getName());
        p.put("enable.auto.commit", "false");
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(p)) {
          c.assign(List.of(tp));
          c.seekToBeginning(List.of(tp));
          long end = c.endOffsets(List.of(tp), Duration.ofSeconds(20)).get(tp);
          r.put("end", end);
          List<Reply> records = new ArrayList<>();
          long deadline = System.currentTimeMillis() + 20000;
          while (c.position(tp, Duration.ofSeconds(20)) < end && System.currentTimeMillis() < deadline) {
            for (ConsumerRecord<String, String> rec : c.poll(Duration.ofMillis(300))) {
              records.add(new Reply().put("offset", rec.offset()).put("value", rec.value()));
            }
          }
          r.put("records", records);
        }
        return r;
      }
      default:
        throw new IllegalArgumentException("unknown op " + cmd.get("op", ""));
    }
  }

  private KafkaProducer<String, String> producer() {
    if (producer == null) {
      Properties p = common();
      p.put("acks", "all");
      p.put("enable.idempotence", "false");
      p.put("retries", "0");
      p.put("max.in.flight.requests.per.connection", "1");
      p.put("linger.ms", "0");
      p.put("request.timeout.ms", "600000");
      p.put("delivery.timeout.ms", "600000");
      p.put("key.serializer", StringSerializer.class.getName());
      p.put("value.serializer", StringSerializer.class.getName());
      producer = new KafkaProducer<>(p);
    }
    return producer;
  }

  private static List<Integer> ids(List<Node> nodes) {
    List<Integer> out = new ArrayList<>();
    nodes.forEach(n -> out.add(n.id()));
    return out;
  }

  private void close() {
    if (producer != null) {
      producer.close(Duration.ZERO);
    }
    admin.close(Duration.ZERO);
  }
}
