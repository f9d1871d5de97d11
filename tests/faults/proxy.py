"""A fault-injecting TCP proxy for the fault suite (the way Toxiproxy works).

Each `Link` listens on its own 127.0.0.1 port and forwards every connection to
one real address. A test points a role's ``TF_CONFIG`` at the link's port
instead of the peer's, and then, while the job runs, changes what the link does:

- ``latency_ms`` / ``jitter_ms``: every chunk of bytes is held that long
  (uniform in ``latency ± jitter``) before it is sent on; bytes never overtake
  each other, as on one TCP stream;
- ``rate_bytes_per_sec``: a bandwidth cap per direction of each connection;
- ``reset_every_secs``: every that many seconds every open connection is reset
  (RST to both ends, as a NAT or load balancer dropping its state does);
  `reset()` does it once, now;
- `black_hole` (for ``secs``, or until `heal`): nothing gets through in either
  direction and no new connection reaches the target. Bytes are held, not
  dropped (a partition: TCP would retransmit them), and flow again once it ends.

The proxy runs an asyncio event loop in one daemon thread of the test process
(standard library only); every method of `FaultProxy` and `Link` may be called
from the test's thread while connections are open.
"""

import asyncio
import contextlib
import random
import socket
import struct
import threading
import time

__all__ = ["FaultProxy", "Link"]

_HOST = "127.0.0.1"
_CHUNK_BYTES = 64 * 1024
# Chunks read ahead of the latency / bandwidth stage per direction: bounds the
# memory a delayed stream holds and keeps TCP's backpressure.
_QUEUE_CHUNKS = 64
_CALL_SECS = 10
_RESET_POLL_SECS = 0.05


def _linger_zero(writer):
    """Makes closing this stream's socket send RST instead of FIN."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


class _Connection:
    """One proxied connection: the client's stream and the target's."""

    def __init__(self, client_writer, target_writer):
        self.writers = (client_writer, target_writer)

    def reset(self):
        """Aborts both ends with RST."""
        for writer in self.writers:
            _linger_zero(writer)
            writer.transport.abort()


class Link:
    """One listening port forwarding to one target, with its faults.

    The fault settings are plain attributes (read for every chunk), so a test
    may change them at any time: ``latency_ms``, ``jitter_ms``,
    ``rate_bytes_per_sec`` (None: no cap), ``reset_every_secs`` (None: never).
    """

    def __init__(self, proxy, name, target_port, target_host=_HOST):
        self.name = name
        self.target = (target_host, target_port)
        self.port = None
        self.latency_ms = 0.0
        self.jitter_ms = 0.0
        self.rate_bytes_per_sec = None
        self.reset_every_secs = None
        # Counters, for tests and reports.
        self.connections_accepted = 0
        self.connections_reset = 0
        self.bytes_forwarded = 0
        self._proxy = proxy
        self._open = None  # asyncio.Event: set = traffic flows; clear = black hole
        self._heal_handle = None
        self._connections = set()
        self._server = None
        self._tasks = set()
        self._random = random.Random(name)

    def __repr__(self):
        return f"Link({self.name!r}, :{self.port} -> {self.target[0]}:{self.target[1]})"

    # Control (any thread) ------------------------------------------------------------

    def set(self, latency_ms=None, jitter_ms=None, rate_bytes_per_sec=None,
            reset_every_secs=None):
        """Changes the given fault settings (others stay); returns self."""
        if latency_ms is not None:
            self.latency_ms = float(latency_ms)
        if jitter_ms is not None:
            self.jitter_ms = float(jitter_ms)
        if rate_bytes_per_sec is not None:
            self.rate_bytes_per_sec = rate_bytes_per_sec or None
        if reset_every_secs is not None:
            self.reset_every_secs = reset_every_secs or None
        return self

    def clear(self):
        """Removes every fault: no latency, no cap, no resets, no black hole."""
        self.latency_ms = self.jitter_ms = 0.0
        self.rate_bytes_per_sec = self.reset_every_secs = None
        self.heal()

    def black_hole(self, secs=None):
        """Stops all traffic of this link, for `secs` seconds or until `heal`."""
        self._proxy.call(self._black_hole, secs)

    def heal(self):
        """Ends a black hole: held bytes and waiting connections go through."""
        self._proxy.call(self._heal)

    @property
    def black_holed(self):
        return self._open is not None and not self._open.is_set()

    def reset(self):
        """Resets every open connection of this link now; returns how many."""
        return self._proxy.call(self._reset_all)

    def open_connections(self):
        """How many connections are open through this link now."""
        return self._proxy.call(lambda: len(self._connections))

    # Event loop side -----------------------------------------------------------------

    async def _start(self):
        self._open = asyncio.Event()
        self._open.set()
        self._server = await asyncio.start_server(self._serve, _HOST, 0)
        self.port = self._server.sockets[0].getsockname()[1]
        self._spawn(self._reset_periodically())

    def _spawn(self, coroutine):
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _black_hole(self, secs):
        if self._heal_handle is not None:
            self._heal_handle.cancel()
            self._heal_handle = None
        self._open.clear()
        if secs is not None:
            self._heal_handle = asyncio.get_running_loop().call_later(secs, self._heal)

    def _heal(self):
        if self._heal_handle is not None:
            self._heal_handle.cancel()
            self._heal_handle = None
        self._open.set()

    def _reset_all(self):
        connections = list(self._connections)
        for connection in connections:
            connection.reset()
        self._connections.clear()
        self.connections_reset += len(connections)
        return len(connections)

    async def _reset_periodically(self):
        last = time.monotonic()
        while True:
            await asyncio.sleep(_RESET_POLL_SECS)
            every = self.reset_every_secs
            now = time.monotonic()
            if every is None:
                last = now
            elif now - last >= every:
                last = now
                self._reset_all()

    async def _serve(self, client_reader, client_writer):
        self.connections_accepted += 1
        try:
            await self._open.wait()  # a black hole: the target is not reached
            try:
                target_reader, target_writer = await asyncio.open_connection(*self.target)
            except OSError:
                # The target is down: the client sees a reset, as it would see a
                # refused connection without the proxy.
                _linger_zero(client_writer)
                client_writer.transport.abort()
                return
            connection = _Connection(client_writer, target_writer)
            self._connections.add(connection)
            try:
                await asyncio.gather(
                    self._pipe(client_reader, target_writer, connection),
                    self._pipe(target_reader, client_writer, connection))
            finally:
                self._connections.discard(connection)
                for writer in connection.writers:
                    writer.transport.abort()
        except asyncio.CancelledError:
            # The proxy is closing. Not re-raised: asyncio's server callback
            # would log a cancelled connection task as an error.
            client_writer.transport.abort()

    async def _pipe(self, reader, writer, connection):
        """Forwards one direction: read, delay, pace, write; ends on EOF or error."""
        queue = asyncio.Queue(_QUEUE_CHUNKS)
        sender = self._spawn(self._send(queue, writer, connection))
        last_release = 0.0
        try:
            while True:
                await self._open.wait()
                try:
                    data = await reader.read(_CHUNK_BYTES)
                except OSError:
                    data = None
                if not data:
                    await queue.put((0.0, data))
                    break
                delay_secs = (self.latency_ms + self._random.uniform(
                    -self.jitter_ms, self.jitter_ms)) / 1000
                # Never before the previous chunk: one TCP stream stays in order.
                last_release = max(last_release, time.monotonic() + max(delay_secs, 0.0))
                await queue.put((last_release, data))
            await sender
        finally:
            sender.cancel()

    async def _send(self, queue, writer, connection):
        next_free = 0.0
        while True:
            release, data = await queue.get()
            wait = release - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            await self._open.wait()
            if data is None:  # one end was reset: so is the other (RST both)
                connection.reset()
                return
            if not data:  # EOF: pass the half-close on
                if writer.can_write_eof():
                    with contextlib.suppress(OSError):
                        writer.write_eof()
                return
            rate = self.rate_bytes_per_sec
            if rate:
                # Each chunk leaves only when the cap allows its bytes.
                now = time.monotonic()
                next_free = max(next_free, now) + len(data) / rate
            # Counted when handed on (a reader may see the bytes before drain ends).
            self.bytes_forwarded += len(data)
            try:
                writer.write(data)
                await writer.drain()
            except OSError:
                connection.reset()
                return
            if rate:
                wait = next_free - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)

    async def _close(self):
        self._server.close()
        self._reset_all()
        for task in list(self._tasks):
            task.cancel()
        await self._server.wait_closed()


class FaultProxy:
    """The links of one test, served by one asyncio loop in a daemon thread.

    Use as a context manager, or call `close`.
    """

    def __init__(self):
        self._loop = asyncio.new_event_loop()
        self._links = []
        self._thread = threading.Thread(target=self._run, name="fault-proxy",
                                        daemon=True)
        self._thread.start()

    def _run(self):
        asyncio.set_event_loop(self._loop)
        self._loop.run_forever()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    def call(self, function, *args):
        """Runs `function(*args)` on the proxy's loop; returns its result."""
        async def run():
            return function(*args)
        return asyncio.run_coroutine_threadsafe(run(), self._loop).result(_CALL_SECS)

    def add_link(self, name, target_port, target_host=_HOST):
        """Starts listening for a new link to `target_host:target_port`.

        Returns:
          The `Link`; its ``port`` is the address to give the link's users.
        """
        link = Link(self, name, target_port, target_host)
        asyncio.run_coroutine_threadsafe(link._start(), self._loop).result(_CALL_SECS)
        self._links.append(link)
        return link

    @property
    def links(self):
        return list(self._links)

    def close(self):
        """Closes every link and connection and stops the loop's thread."""
        if self._loop.is_closed():
            return
        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop).result(
                _CALL_SECS)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(_CALL_SECS)
        self._loop.close()

    async def _shutdown(self):
        for link in self._links:
            await link._close()
        # The connections' own tasks (started by asyncio's servers) end too.
        others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in others:
            task.cancel()
        await asyncio.gather(*others, return_exceptions=True)
