"""The relay on its own: Kafka's framing, gates by API key, held answers, closed senders.

A fake "broker" on loopback answers every frame with its correlation id; no Kafka."""

from __future__ import annotations

import socket
import struct
import threading
import time

import pytest

from replcheck.cluster.nodes import free_port
from replcheck.cluster.relay import ALTER_PARTITION, FETCH, Relay


def _request(api_key: int, correlation: int, body: bytes = b"") -> bytes:
    payload = struct.pack(">hhi", api_key, 13, correlation) + body
    return struct.pack(">i", len(payload)) + payload


def _read_frame(sock: socket.socket) -> bytes:
    size = struct.unpack(">i", _exactly(sock, 4))[0]
    return _exactly(sock, size)


def _exactly(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return data


@pytest.fixture
def upstream():
    """A server that answers each request frame with (correlation id, api key)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    seen: list[int] = []

    def serve(conn: socket.socket) -> None:
        with conn:
            try:
                while True:
                    frame = _read_frame(conn)
                    api_key, _v, correlation = struct.unpack(">hhi", frame[:8])
                    seen.append(api_key)
                    answer = struct.pack(">ih", correlation, api_key)
                    conn.sendall(struct.pack(">i", len(answer)) + answer)
            except (ConnectionError, OSError):
                pass

    def accept() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    yield server.getsockname()[1], seen
    server.close()


def _until(test, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not test():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_frames_pass_and_gated_requests_wait_for_their_step(upstream) -> None:
    port, seen = upstream
    relay = Relay()
    try:
        relay.add("link", free_port(), port)
        listen = relay.links["link"].listen
        relay.gate("link", FETCH, hold_responses=True)
        with socket.create_connection(("127.0.0.1", listen)) as client:
            client.settimeout(10)
            client.sendall(_request(18, 1))  # ApiVersions: not gated
            assert struct.unpack(">ih", _read_frame(client)) == (1, 18)
            client.sendall(_request(FETCH, 2, b"x" * 70000))  # larger than one read
            _until(lambda: relay.waiting("link", FETCH) == 1)
            assert seen == [18]  # the fetch has not reached the broker
            assert relay.release("link", FETCH)
            _until(lambda: relay.waiting_responses("link", FETCH) == 1)
            assert seen == [18, FETCH]
            assert relay.count("link", FETCH) == (1, 0)  # let through, answer held
            assert relay.release_response("link", FETCH)
            assert struct.unpack(">ih", _read_frame(client)) == (2, FETCH)
            assert relay.count("link", FETCH) == (1, 1)
            assert not relay.release("link", FETCH)  # nothing waits
            relay.open("link", FETCH)
            client.sendall(_request(FETCH, 3))
            assert struct.unpack(">ih", _read_frame(client)) == (3, FETCH)
    finally:
        relay.close()


def test_a_closed_senders_request_is_gone_unless_asked_for(upstream) -> None:
    port, seen = upstream
    relay = Relay()
    try:
        relay.add("link", free_port(), port)
        relay.gate("link", ALTER_PARTITION)
        client = socket.create_connection(("127.0.0.1", relay.links["link"].listen))
        client.sendall(_request(ALTER_PARTITION, 7))
        _until(lambda: relay.waiting("link", ALTER_PARTITION) == 1)
        client.close()
        _until(lambda: relay.waiting("link", ALTER_PARTITION) == 0)
        assert relay.waiting("link", ALTER_PARTITION, even_if_closed=True) == 1
        assert relay.waiting_since("link", ALTER_PARTITION) is None
        # A broker that died after sending: its bytes still reach the controller.
        assert relay.release("link", ALTER_PARTITION, even_if_closed=True)
        _until(lambda: seen == [ALTER_PARTITION])
    finally:
        relay.close()


def test_close_stops_serving(upstream) -> None:
    port, _seen = upstream
    relay = Relay()
    relay.add("link", free_port(), port)
    listen = relay.links["link"].listen
    relay.gate("link", FETCH)
    client = socket.create_connection(("127.0.0.1", listen))
    client.sendall(_request(FETCH, 1))
    _until(lambda: relay.waiting("link", FETCH) == 1)
    relay.close()
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", listen), timeout=2)
    client.close()
