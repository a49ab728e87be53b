package replcheck.harness

import org.apache.kafka.clients.ClientResponse
import org.apache.kafka.common.message.RequestHeaderData
import org.apache.kafka.common.requests.{AbstractRequest, AbstractResponse, RequestHeader}

/** A broker's channel to the controller, which holds each request until the model's
 *  ``alter_isr`` step hands it to the controller.  Kafka's own AlterPartitionManager
 *  sends through it (Compat.alterPartitionManager wraps it in the release's channel
 *  interface), so its one-request-in-flight and one-item-per-partition rules
 *  (KAFKA-12686) are what the run checks. */
final class HeldChannel(val brokerId: Int) {
  private var held = Vector.empty[(AbstractRequest.Builder[_ <: AbstractRequest], ClientResponse => Unit)]
  var generationAlive: Boolean = true

  /** What the release's NodeToControllerChannelManager.sendRequest does here. */
  def hold(request: AbstractRequest.Builder[_ <: AbstractRequest], complete: ClientResponse => Unit): Unit = synchronized {
    held :+= (request -> complete)
  }

  def pending: Int = synchronized(held.size)

  /** The oldest held request, built at the newest version, and a way to answer it. */
  def pop(): Option[(AbstractRequest, AbstractResponse => Unit)] = synchronized {
    held.headOption.map { case (builder, complete) =>
      held = held.tail
      val request = builder.build()
      val header = new RequestHeader(new RequestHeaderData()
        .setRequestApiKey(request.apiKey().id).setRequestApiVersion(request.version())
        .setClientId(s"broker-$brokerId").setCorrelationId(0), request.apiKey().requestHeaderVersion(request.version()))
      request -> ((response: AbstractResponse) =>
        complete(new ClientResponse(header, null, "3000", 0L, 0L, false, null, null, response)))
    }
  }
}
