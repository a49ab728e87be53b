"""A loopback relay that understands Kafka's framing and holds the requests a step orders.

Every broker's inter-broker listener for one follower, and every broker's way to the
controller, is advertised at a relay port: the relay forwards whole frames (a 4-byte
size, then the request or response) and reads each request's API key.  For an API key
it *gates*, a request waits in the relay till a step lets it through (``release``);
a gated request may also have its response held (``hold_responses``) till
``release_response``.  Nothing is rewritten: Kafka sees its own bytes, later.

API keys (Kafka's protocol): 1 Fetch (followers' and the metadata log's), 23
OffsetsForLeaderEpoch (a follower's truncation before it fetches, where it has no
last fetched epoch), 56 AlterPartition.  Everything else (ApiVersions, heartbeats, produce) passes.
"""

from __future__ import annotations

import asyncio
import contextlib
import struct
import threading
import time
from dataclasses import dataclass, field

FETCH = 1
OFFSETS_FOR_LEADER_EPOCH = 23
ALTER_PARTITION = 56


@dataclass
class _Held:
    """A request or response waiting in the relay."""

    frame: bytes
    go: asyncio.Event
    client: asyncio.StreamReader | None = None
    dropped: bool = False
    since: float = field(default_factory=time.time)  # wall clock, as Kafka's logs

    @property
    def gone(self) -> bool:
        """Dropped, or its connection closed (Kafka sends such a request again)."""
        return self.dropped or (self.client is not None and self.client.at_eof())


@dataclass
class Link:
    """One relay port: ``name`` for errors, what it gates, and what waits in it."""

    name: str
    listen: int
    upstream: int
    gated: set[int] = field(default_factory=set)
    hold_responses: set[int] = field(default_factory=set)
    requests: dict[int, list[_Held]] = field(default_factory=dict)
    responses: dict[int, list[_Held]] = field(default_factory=dict)
    passed: dict[int, int] = field(default_factory=dict)  # requests let through, by key
    answered: dict[int, int] = field(default_factory=dict)  # responses delivered, by key
    server: asyncio.AbstractServer | None = None
    sockets: set[asyncio.StreamWriter] = field(default_factory=set)


class Relay:
    """All the links of one cluster, served by one asyncio loop on a daemon thread."""

    def __init__(self) -> None:
        self.links: dict[str, Link] = {}
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()

    def _call(self, coro, timeout: float = 10.0):  # noqa: ANN001, ANN202
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    def add(self, name: str, listen: int, upstream: int) -> Link:
        link = Link(name, listen, upstream)
        self._call(self._serve(link))
        self.links[name] = link
        return link

    async def _serve(self, link: Link) -> None:
        async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                up_reader, up_writer = await asyncio.open_connection("127.0.0.1", link.upstream)
            except OSError:
                writer.close()
                return
            link.sockets.update((writer, up_writer))
            held_keys: dict[int, int] = {}  # correlation id -> gated API key (response held)
            keys: dict[int, int] = {}  # correlation id -> API key
            try:
                await asyncio.gather(
                    self._requests(link, reader, up_writer, keys, held_keys),
                    self._responses(link, up_reader, writer, keys, held_keys, reader),
                )
            except asyncio.CancelledError:
                pass  # the relay is closing
            finally:
                for w in (writer, up_writer):
                    link.sockets.discard(w)
                    w.close()

        link.server = await asyncio.start_server(accept, "127.0.0.1", link.listen)

    async def _requests(self, link, reader, up, keys, held_keys) -> None:  # noqa: ANN001
        try:
            while True:
                frame = await _frame(reader)
                if frame is None:
                    break
                api_key, _version, correlation = struct.unpack(">hhi", frame[4:12])
                keys[correlation] = api_key
                if api_key in link.gated:
                    held = _Held(frame, asyncio.Event(), reader)
                    link.requests.setdefault(api_key, []).append(held)
                    await held.go.wait()
                    if held.dropped:
                        break
                    link.passed[api_key] = link.passed.get(api_key, 0) + 1
                    if api_key in link.hold_responses:
                        held_keys[correlation] = api_key
                up.write(frame)
                await up.drain()
        except (ConnectionError, OSError, asyncio.IncompleteReadError):
            pass
        finally:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.sleep(1)  # what was just sent reaches Kafka before the close
            up.close()

    async def _responses(self, link, up_reader, writer, keys, held_keys, client) -> None:  # noqa: ANN001
        try:
            while True:
                frame = await _frame(up_reader)
                if frame is None:
                    break
                (correlation,) = struct.unpack(">i", frame[4:8])
                api_key = keys.pop(correlation, None)
                if correlation in held_keys:
                    held = _Held(frame, asyncio.Event(), client)
                    link.responses.setdefault(held_keys.pop(correlation), []).append(held)
                    await held.go.wait()
                    if held.dropped:
                        break
                if api_key is not None:
                    link.answered[api_key] = link.answered.get(api_key, 0) + 1
                writer.write(frame)
                await writer.drain()
        except (ConnectionError, OSError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    # -- the steps' controls (called from the main thread) --------------------------

    def gate(self, name: str, api_key: int, hold_responses: bool = False) -> None:
        def change() -> None:
            link = self.links[name]
            link.gated.add(api_key)
            if hold_responses:
                link.hold_responses.add(api_key)

        self._loop.call_soon_threadsafe(change)

    def open(self, name: str, api_key: int) -> None:
        """Stops gating ``api_key``: what waits goes on, and so does everything after."""

        def change() -> None:
            link = self.links[name]
            link.gated.discard(api_key)
            link.hold_responses.discard(api_key)
            for held in link.requests.pop(api_key, []) + link.responses.pop(api_key, []):
                held.go.set()

        self._loop.call_soon_threadsafe(change)

    def waiting(self, name: str, api_key: int, even_if_closed: bool = False) -> int:
        """Requests of ``api_key`` waiting; with ``even_if_closed`` also those whose
        sender has closed its connection since (bytes it sent before it died)."""
        queue = self.links[name].requests.get(api_key, [])
        return len([h for h in queue if not (h.dropped if even_if_closed else h.gone)])

    def waiting_since(self, name: str, api_key: int) -> float | None:
        """When the oldest waiting request of ``api_key`` arrived (time.time)."""
        live = [h.since for h in self.links[name].requests.get(api_key, []) if not h.gone]
        return min(live) if live else None

    def waiting_responses(self, name: str, api_key: int) -> int:
        return len([h for h in self.links[name].responses.get(api_key, []) if not h.gone])

    def release(self, name: str, api_key: int, even_if_closed: bool = False) -> bool:
        """Lets the oldest waiting request of ``api_key`` through; False if none waits."""
        return self._call(self._pop(self.links[name].requests, api_key, even_if_closed))

    def release_response(self, name: str, api_key: int) -> bool:
        return self._call(self._pop(self.links[name].responses, api_key))

    @staticmethod
    async def _pop(queues: dict[int, list[_Held]], api_key: int, closed: bool = False) -> bool:
        queue = queues.get(api_key, [])
        while queue:
            held = queue.pop(0)
            if not (held.dropped if closed else held.gone):
                held.go.set()
                return True
        return False

    def count(self, name: str, api_key: int) -> tuple[int, int]:
        """(requests let through, responses delivered) of ``api_key`` so far."""
        link = self.links[name]
        return link.passed.get(api_key, 0), link.answered.get(api_key, 0)

    def close(self) -> None:
        async def stop() -> None:
            for link in self.links.values():
                if link.server is not None:
                    link.server.close()
                for queue in list(link.requests.values()) + list(link.responses.values()):
                    for held in queue:
                        held.dropped = True
                        held.go.set()
                for w in list(link.sockets):
                    w.close()

        async def cancel() -> None:
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        with contextlib.suppress(Exception):
            self._call(stop(), timeout=5)
        with contextlib.suppress(Exception):
            self._call(cancel(), timeout=5)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)


async def _frame(reader: asyncio.StreamReader) -> bytes | None:
    try:
        size_bytes = await reader.readexactly(4)
    except asyncio.IncompleteReadError:
        return None
    (size,) = struct.unpack(">i", size_bytes)
    return size_bytes + await reader.readexactly(size)
