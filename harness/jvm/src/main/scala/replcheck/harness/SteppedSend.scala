package replcheck.harness

import java.io.IOException
import java.util.concurrent.{LinkedBlockingQueue, TimeUnit}

import kafka.server.BlockingSend
import org.apache.kafka.clients.ClientResponse
import org.apache.kafka.common.message.RequestHeaderData
import org.apache.kafka.common.requests.{AbstractRequest, AbstractResponse, RequestHeader}

import replcheck.harness.Compat.BrokerEndPoint

/** The follower fetcher's network, cut so that one model step is one half of an exchange.
 *
 *  Kafka's own ReplicaFetcherThread runs unchanged, but never as a thread of its own: a
 *  ``fetch_request`` runs one ``doWork()`` on a worker thread, which builds the request
 *  from the fetcher's state of that moment and parks in ``sendRequest``; the driver
 *  answers it at once on the leader (``answer``) and keeps the answer.  The matching
 *  ``fetch_response`` hands the answer over and waits for ``doWork()`` to return.  At
 *  any moment exactly one of the driver and a worker runs. */
final class SteppedSend(
  endpoint: BrokerEndPoint,
  answer: AbstractRequest => AbstractResponse,
  empty: AbstractRequest => AbstractResponse,
) extends BlockingSend {
  private sealed trait Event
  private case class Sent(request: AbstractRequest) extends Event
  private case class Finished(error: Option[Throwable]) extends Event
  private sealed trait Reply
  private case class Deliver(response: AbstractResponse) extends Reply
  private case object Close extends Reply

  private val toDriver = new LinkedBlockingQueue[Event]()
  private val toWorker = new LinkedBlockingQueue[Reply]()
  @volatile private var closed = false
  private var worker: Thread = _
  /** The request a parked worker sent, and the leader's answer to it. */
  private var inflight: Option[(AbstractRequest, AbstractResponse)] = None
  private var correlation = 0

  def parked: Boolean = inflight.isDefined
  def inflightRequest: Option[AbstractRequest] = inflight.map(_._1)
  def inflightResponse: Option[AbstractResponse] = inflight.map(_._2)

  override def brokerEndPoint(): BrokerEndPoint = endpoint

  // ---------------------------------------------------------------- worker side

  override def sendRequest(builder: AbstractRequest.Builder[_ <: AbstractRequest]): ClientResponse = {
    if (closed) throw new IOException("the harness closed this fetcher's connection")
    val request = builder.build()
    toDriver.put(Sent(request))
    toWorker.take() match {
      case Deliver(response) =>
        correlation += 1
        val header = new RequestHeader(new RequestHeaderData()
          .setRequestApiKey(request.apiKey().id).setRequestApiVersion(request.version())
          .setClientId("replcheck-harness").setCorrelationId(correlation), request.apiKey().requestHeaderVersion(request.version()))
        new ClientResponse(header, null, endpoint.id.toString, 0L, 0L, false, null, null, response)
      case Close => throw new IOException("the harness closed this fetcher's connection")
    }
  }

  override def initiateClose(): Unit = {
    closed = true
    if (inflight.isDefined) { // called on the driver thread: finish the parked worker now
      inflight = None
      toWorker.put(Close)
      awaitFinished(answerExtra = false)
    }
  }

  override def close(): Unit = initiateClose()

  // ---------------------------------------------------------------- driver side

  /** Runs one ``doWork`` until it sends its request (answered and kept: the request
   *  step), or returns without sending one.  Returns the request, if any. */
  def request(doWork: () => Unit): Option[AbstractRequest] = {
    require(inflight.isEmpty, "a request is already in flight")
    worker = new Thread(() => {
      val error = try { doWork(); None } catch { case t: Throwable => Some(t) }
      toDriver.put(Finished(error))
    }, s"replcheck-fetch-worker-${endpoint.id}")
    worker.setDaemon(true)
    worker.start()
    next() match {
      case Sent(request) =>
        inflight = Some(request -> answer(request))
        Some(request)
      case Finished(error) =>
        error.foreach(e => throw e)
        None
    }
  }

  /** Hands the kept answer to the parked worker and waits for its ``doWork`` to end.
   *  Returns how many further requests that ``doWork`` sent (answered empty). */
  def respond(): Int = {
    val (_, response) = inflight.getOrElse(throw new IllegalStateException("no request in flight"))
    inflight = None
    toWorker.put(Deliver(response))
    awaitFinished(answerExtra = true)
  }

  private def awaitFinished(answerExtra: Boolean): Int = {
    var extra = 0
    var done = false
    while (!done) next() match {
      case Finished(error) =>
        done = true
        error.foreach(e => if (!closed) throw e)
      case Sent(request) =>
        extra += 1
        if (answerExtra && !closed) toWorker.put(Deliver(empty(request)))
        else toWorker.put(Close)
    }
    worker.join(60000)
    extra
  }

  private def next(): Event = {
    val e = toDriver.poll(120, TimeUnit.SECONDS)
    if (e == null) throw new IllegalStateException("the fetcher's worker did not answer within 120 s")
    e
  }
}
