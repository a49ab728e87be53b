package replcheck.harness

import java.io.{BufferedReader, InputStreamReader, PrintStream}
import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Path}
import java.util.LinkedHashMap

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import org.apache.kafka.server.common.MetadataVersion

/** Reads a run (settings and traces, one JSON document on stdin or in the file named
 *  by the first argument) and prints one JSON line per step of each trace: Kafka's
 *  state after it, or why Kafka did not take it (the trace stops there). */
object Main {
  private val json = new ObjectMapper()

  def main(args: Array[String]): Unit = {
    val out = new PrintStream(System.out, true, StandardCharsets.UTF_8)
    System.setOut(new PrintStream(System.err, true)) // Kafka's own prints never mix with the protocol
    Compat.trapExit()
    Compat.bypassRequestThreadCheck()
    val input: JsonNode =
      if (args.nonEmpty) json.readTree(Path.of(args(0)).toFile)
      else json.readTree(new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)))
    val s = input.get("settings")
    val settings = Settings(
      replicas = s.get("replicas").asInt(),
      minIsr = s.get("min_isr").asInt(),
      lagMs = s.get("lag_ms").asLong(),
      metadataVersion = Compat.metadataVersion(s.get("metadata_version").asText()),
      elr = s.get("elr").asBoolean(),
      unclean = s.get("unclean").asBoolean(),
      acks = Option(s.get("acks")).map(_.asInt().toShort).getOrElse(-1.toShort),
    )
    out.println(json.writeValueAsString(header(settings)))
    input.get("traces").elements().asScala.zipWithIndex.foreach { case (trace, k) => run(settings, trace, k, out) }
    out.flush()
    System.exit(0) // no Kafka thread may keep the JVM alive
  }

  private def header(settings: Settings): LinkedHashMap[String, AnyRef] = {
    val m = new LinkedHashMap[String, AnyRef]()
    m.put("harness", "replcheck kafka harness")
    m.put("kafka", Compat.kafkaVersion)
    m.put("metadata_version", settings.metadataVersion.version())
    m
  }

  private def run(settings: Settings, trace: JsonNode, k: Int, out: PrintStream): Unit = {
    val root = Files.createTempDirectory("replcheck-harness-")
    val assignment = trace.get("assignment").elements().asScala.map(_.asInt()).toSeq
    val cluster = new Cluster(settings, assignment, root)
    def emit(step: Int, body: LinkedHashMap[String, AnyRef]): Unit = {
      body.put("trace", Integer.valueOf(k))
      body.put("step", Integer.valueOf(step))
      out.println(json.writeValueAsString(body))
    }
    def ok(step: Int): Unit = {
      val m = new LinkedHashMap[String, AnyRef]()
      m.put("ok", java.lang.Boolean.TRUE)
      m.put("state", Observe.state(cluster))
      emit(step, m)
    }
    def refused(step: Int, kind: String, detail: String): Unit = {
      val m = new LinkedHashMap[String, AnyRef]()
      m.put("ok", java.lang.Boolean.FALSE)
      m.put("kind", kind)
      m.put("detail", detail)
      emit(step, m)
    }
    var step = 0
    try {
      cluster.start()
      ok(0)
      val ops = trace.get("ops").elements().asScala.toSeq
      var going = true
      for (op <- ops if going) {
        step += 1
        try {
          cluster.apply(op)
          ok(step)
        } catch {
          case r: Refused => refused(step, r.kind, r.getMessage); going = false
        }
      }
    } catch {
      case t: Throwable =>
        val w = new java.io.StringWriter()
        t.printStackTrace(new java.io.PrintWriter(w))
        refused(step, "exception", w.toString)
    } finally {
      cluster.close()
      deleteTree(root)
    }
  }

  private def deleteTree(root: Path): Unit = {
    val walk = Files.walk(root)
    try walk.sorted(java.util.Comparator.reverseOrder()).forEach(p => Files.deleteIfExists(p))
    catch { case _: Throwable => () }
    finally walk.close()
  }
}
