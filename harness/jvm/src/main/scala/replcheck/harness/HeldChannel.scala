package replcheck.harness

import java.util.Optional

import org.apache.kafka.clients.{ClientResponse, NodeApiVersions}
import org.apache.kafka.common.message.RequestHeaderData
import org.apache.kafka.common.requests.{AbstractRequest, AbstractResponse, RequestHeader}
import org.apache.kafka.server.common.{ControllerRequestCompletionHandler, NodeToControllerChannelManager}

/** A broker's channel to the controller, which holds each request until the model's
 *  ``alter_isr`` step hands it to the controller.  Kafka's own AlterPartitionManager
 *  sends through it, so its one-request-in-flight and one-item-per-partition rules
 *  (KAFKA-12686) are what the run checks. */
final class HeldChannel(val brokerId: Int) extends NodeToControllerChannelManager {
  private var held = Vector.empty[(AbstractRequest.Builder[_ <: AbstractRequest], ControllerRequestCompletionHandler)]
  var generationAlive: Boolean = true

  override def start(): Unit = ()
  override def shutdown(): Unit = ()
  override def controllerApiVersions(): Optional[NodeApiVersions] = Optional.empty()
  override def getTimeoutMs: Long = Long.MaxValue
  override def sendRequest(request: AbstractRequest.Builder[_ <: AbstractRequest],
                           callback: ControllerRequestCompletionHandler): Unit = synchronized {
    held :+= (request -> callback)
  }

  def pending: Int = synchronized(held.size)

  /** The oldest held request, built at the newest version, and a way to answer it. */
  def pop(): Option[(AbstractRequest, AbstractResponse => Unit)] = synchronized {
    held.headOption.map { case (builder, callback) =>
      held = held.tail
      val request = builder.build()
      val header = new RequestHeader(new RequestHeaderData()
        .setRequestApiKey(request.apiKey().id).setRequestApiVersion(request.version())
        .setClientId(s"broker-$brokerId").setCorrelationId(0), request.apiKey().requestHeaderVersion(request.version()))
      request -> ((response: AbstractResponse) =>
        callback.onComplete(new ClientResponse(header, null, "3000", 0L, 0L, false, null, null, response)))
    }
  }
}
