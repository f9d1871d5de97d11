"""The fault-injecting proxy itself (tests/faults/proxy.py), against a local echo
server: bytes arrive intact and in order, and each fault does what it says,
measured with a clock (bounds with wide margins, so a loaded machine cannot make
them flaky)."""

import contextlib
import os
import socket
import socketserver
import threading
import time

import pytest

from tests.faults.proxy import FaultProxy

# Upper bounds only guard against a hang or a fault that never ends; lower bounds
# are what the fault must cost at least.
SLACK_SECS = 5.0


class _Echo(socketserver.BaseRequestHandler):
    def handle(self):
        while True:
            try:
                data = self.request.recv(65536)
            except OSError:
                return
            if not data:
                return
            self.request.sendall(data)


class _EchoServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), _Echo)
        self.accepted = 0

    def verify_request(self, request, client_address):
        self.accepted += 1
        return True


@pytest.fixture
def echo():
    server = _EchoServer()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def link(echo):
    with FaultProxy() as proxy:
        yield proxy.add_link("client->echo", echo.server_address[1])


def _connect(link):
    sock = socket.create_connection(("127.0.0.1", link.port), timeout=SLACK_SECS)
    sock.settimeout(SLACK_SECS)
    return sock


def _recv_exactly(sock, size):
    chunks, received = [], 0
    while received < size:
        chunk = sock.recv(min(65536, size - received))
        if not chunk:
            # A reset is reported once per socket: when the sending thread saw it,
            # recv sees the end of the stream instead.
            raise ConnectionResetError(f"connection closed after {received} of {size} "
                                       "bytes")
        chunks.append(chunk)
        received += len(chunk)
    return b"".join(chunks)


def _round_trip(sock, data):
    """Sends `data` (from a thread, so big payloads cannot deadlock) and reads the
    echo back; returns (echoed bytes, seconds)."""
    start = time.monotonic()

    def send():
        with contextlib.suppress(OSError):  # the reader sees the reset too
            sock.sendall(data)

    sender = threading.Thread(target=send)
    sender.start()
    echoed = _recv_exactly(sock, len(data))
    sender.join()
    return echoed, time.monotonic() - start


def test_bytes_go_through_intact_and_in_order(link):
    payload = os.urandom(3 * 1024 * 1024)
    with _connect(link) as sock:
        echoed, _ = _round_trip(sock, payload)
    assert echoed == payload
    assert link.bytes_forwarded == 2 * len(payload)


def test_latency_delays_each_direction(link):
    with _connect(link) as sock:
        _, plain_secs = _round_trip(sock, b"ping")
        link.set(latency_ms=150)
        times = [_round_trip(sock, b"ping")[1] for _ in range(3)]
    print(f"round trip without latency {plain_secs * 1000:.1f} ms, with 150 ms each "
          f"way: {[round(t * 1000, 1) for t in times]} ms")
    # Two crossings of the link per round trip.
    assert all(0.3 <= t < 0.3 + SLACK_SECS for t in times), times


def test_jitter_varies_the_delay_but_keeps_the_order(link):
    link.set(latency_ms=100, jitter_ms=80)
    with _connect(link) as sock:
        times = [_round_trip(sock, b"x")[1] for _ in range(8)]
        # Many small writes in a burst: each chunk gets its own delay, yet the
        # stream must come back in order.
        sock.sendall(b"".join(b"%04d" % i for i in range(200)))
        echoed = _recv_exactly(sock, 800)
    print(f"round trips with 100 +- 80 ms each way: {[round(t * 1000) for t in times]} ms")
    assert echoed == b"".join(b"%04d" % i for i in range(200))
    assert all(0.04 <= t < 0.36 + SLACK_SECS for t in times), times
    assert max(times) - min(times) > 0.01, times


def test_bandwidth_cap(link):
    size = 512 * 1024
    rate = 1024 * 1024  # bytes per second, each direction
    link.set(rate_bytes_per_sec=rate)
    with _connect(link) as sock:
        echoed, secs = _round_trip(sock, os.urandom(size))
    throughput = size / secs
    print(f"{size} bytes echoed through a {rate} B/s cap in {secs:.2f} s: "
          f"{throughput / 1024:.0f} KiB/s")
    assert len(echoed) == size
    # Both directions are capped but overlap; the first chunk (64 KiB) of each
    # goes at once: at least (size - 64 KiB) / rate.
    assert (size - 64 * 1024) / rate <= secs < size / rate * 2 + SLACK_SECS, secs


def test_reset_now_and_periodically(link):
    with _connect(link) as sock:
        _round_trip(sock, b"before")
        assert link.reset() == 1
        with pytest.raises(ConnectionResetError):
            sock.sendall(b"after")
            sock.recv(16)
    link.set(reset_every_secs=0.3)
    start = time.monotonic()
    with _connect(link) as sock:
        _round_trip(sock, b"hello")
        with pytest.raises(ConnectionResetError):
            while time.monotonic() - start < SLACK_SECS:
                _round_trip(sock, b"hello")
                time.sleep(0.05)
    took = time.monotonic() - start
    print(f"reset every 0.3 s: the connection was reset after {took:.2f} s")
    assert took < 0.3 + SLACK_SECS
    assert link.connections_reset == 2
    # A new connection works until the next reset.
    link.set(reset_every_secs=0)
    with _connect(link) as sock:
        assert _round_trip(sock, b"again")[0] == b"again"


def test_black_hole_holds_traffic_then_delivers_it(link, echo):
    with _connect(link) as sock:
        _round_trip(sock, b"before")
        link.black_hole()
        sock.sendall(b"held")
        sock.settimeout(0.5)
        with pytest.raises(socket.timeout):
            sock.recv(16)
        # A new connection during the black hole does not reach the target.
        accepted = echo.accepted
        late = _connect(link)
        late.sendall(b"late")
        time.sleep(0.3)
        assert echo.accepted == accepted
        start = time.monotonic()
        link.heal()
        sock.settimeout(SLACK_SECS)
        assert _recv_exactly(sock, 4) == b"held"
        assert _recv_exactly(late, 4) == b"late"
        late.close()
    print(f"held bytes delivered {time.monotonic() - start:.3f} s after the heal")


def test_black_hole_for_a_time_window(link):
    with _connect(link) as sock:
        link.black_hole(secs=0.5)
        echoed, secs = _round_trip(sock, b"window")
    print(f"a round trip started in a 0.5 s black hole took {secs:.2f} s")
    assert echoed == b"window"
    assert 0.4 <= secs < 0.5 + SLACK_SECS
    assert not link.black_holed


def test_a_down_target_resets_the_client():
    with socket.socket() as spare:
        spare.bind(("127.0.0.1", 0))
        port = spare.getsockname()[1]  # nothing listens there once closed
    with FaultProxy() as proxy:
        link = proxy.add_link("client->nobody", port)
        # The reset may even beat connect()'s return on loopback.
        with pytest.raises((ConnectionResetError, BrokenPipeError)), _connect(
                link) as sock:
            sock.sendall(b"x")
            if not sock.recv(1):
                raise ConnectionResetError("closed")
