"""The device side of the ADB protocol over TCP: what a real ``adb`` server (``adb connect 127.0.0.1:PORT``, or an
emulator registered with ``host:emulator:PORT``) and adbutils talk to when they drive the simulated phone.

The wire protocol is AOSP's ``adb/protocol.txt``: 24-byte little-endian headers (command, arg0, arg1, data length,
data checksum, magic = command ^ 0xffffffff) followed by the data. The host connects with ``CNXN`` and we answer with
our own ``CNXN`` (never ``AUTH`` or ``STLS``: the phone is served on loopback only). Each ``OPEN`` starts a stream
that runs one service in its own thread:

=================  ======================================================================================
``shell:CMD``      one command line of :class:`~vlui.served.shell.Shell`, output raw (the legacy protocol:
``exec:CMD``       stdout and stderr together, no exit status; we do not advertise ``shell_v2``)
``shell:``         an interactive shell: a prompt, the host's keystrokes echoed, ``exit`` ends it
``sync:``          file transfer (version 1: ``STAT LIST SEND RECV QUIT``) on :attr:`ServedPhone.files`
``root:``          "adbd is already running as root"
``reboot:``        the phone reboots: every connection drops and the phone comes back on its snapshot
=================  ======================================================================================

Flow control is the classic one: after each ``WRTE`` we wait for the host's ``OKAY`` before the next. Output the
service writes while a packet is in flight is queued on its stream and sent, coalesced up to the payload limit, once
that ``OKAY`` comes. Nothing but a connection's own writer thread waits for its socket: packets go to the
connection's outbox (sent at once when the socket takes them without waiting), so a host that does not read stalls
only its own streams. The queues are bounded (docs/security.md): a service that writes faster than its host reads
waits once its stream holds a megabyte, or its connection or all connections hold their quota
(:class:`~vlui.served.phone.ServeLimits`), except while it holds the phone's lock, when it must not wait; a stream
that then queues :data:`LOCKED_QUEUE_LIMIT` bytes is closed instead: the host that does not read loses it.
"""

from __future__ import annotations

import itertools
import logging
import posixpath
import re
import select
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Protocol

import numpy as np

from vlui.errors import VluiError
from vlui.served.phone import ServedPhone
from vlui.served.shell import Shell
from vlui.served.shell.files import SYMLINKS, dir_names, is_dir, resolve_storage, system_file
from vlui.served.storage import PhoneFiles, StorageError, name_too_long, read_only

log = logging.getLogger(__name__)

A_SYNC, A_CNXN, A_OPEN, A_OKAY = 0x434E5953, 0x4E584E43, 0x4E45504F, 0x59414B4F
A_CLSE, A_WRTE, A_AUTH, A_STLS = 0x45534C43, 0x45545257, 0x48545541, 0x534C5453
A_VERSION_MIN = 0x01000000
A_VERSION = 0x01000001  # the first version that lets both sides leave the checksum 0
MAX_PAYLOAD = 1 << 20  # what we accept and send in one packet; a larger packet means a confused peer: dropped
HEADER = struct.Struct("<6I")
# shell_v2: exit statuses and stderr of their own; fixed_push_mkdir: SEND creates the parent directories
FEATURES = ("shell_v2", "fixed_push_mkdir")
QUEUE_LIMIT = 1 << 20  # bytes a stream queues before its writer waits for the host
LOCKED_QUEUE_LIMIT = 4 << 20  # bytes a stream queues from a writer that holds the phone's lock, which cannot wait
OUTBOX_LIMIT = 4096  # buffers in a connection's outbox before its reader stops taking the host's packets
POLL_S = 0.05  # how often a writer waiting on a quota shared with other streams looks again

SYNC_DATA_MAX = 64 << 10
MODE_FILE, MODE_DIR, MODE_LINK = 0o100644, 0o40755, 0o120000

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
MAX_CANON = 4096  # a terminal line's room, the newline included (Linux's N_TTY_BUF_SIZE)
TTY_CONTROL = re.compile(rb"[\r\n\x03\x04\x08\x7f]")  # the bytes a terminal session acts on


class ShellLike(Protocol):
    exited: bool

    def run(self, command: str, write: Callable[[bytes], None], cancelled: threading.Event,
            err: Callable[[bytes], None] | None = None) -> int: ...


def listen(host: str, port: int, what: str) -> socket.socket:
    """A listening TCP socket on a loopback address (port 0: any free port). ``what`` names it in errors."""
    if host not in LOOPBACK_HOSTS:
        raise VluiError(f"the simulated phone's {what} only listens on loopback ({', '.join(LOOPBACK_HOSTS)}), "
                        f"not {host!r}")
    family = socket.AF_INET6 if host == "::1" else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(16)
    except OSError as err:
        sock.close()
        raise VluiError(f"cannot listen on {host}:{port} for the {what}: {err.strerror or err}") from None
    return sock


def stop_listening(sock: socket.socket) -> None:
    """Close a listening socket and wake the thread blocked in its ``accept`` (Linux wakes it on shutdown)."""
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()


class LoopbackServer:
    """A TCP server on a loopback address with a thread that accepts clients: :meth:`_accepted` takes each new
    socket (under :attr:`_lock`, before :meth:`close` can run) and returns what starts serving it."""

    def __init__(self, host: str, port: int, what: str) -> None:
        self._listener = listen(host, port, what)
        self.what = what
        self.host = host
        self.port: int = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self._closed = False
        self._thread = threading.Thread(target=self._accept, name=f"{what}:{self.port}", daemon=True)
        self._thread.start()

    def _accepted(self, sock: socket.socket, peer: str) -> Callable[[], None]:
        raise NotImplementedError

    def _accept(self) -> None:
        while True:
            try:
                sock, address = self._listener.accept()
            except OSError:
                return
            sock.settimeout(None)
            peer = _peer_name(address)
            evict = None
            with self._lock:
                if self._closed:
                    sock.close()
                    return
                if self._client_count() >= self.max_connections:
                    evict = self._make_room()
                full = self._client_count() >= self.max_connections
                start = None if full else self._accepted(sock, peer)
            if evict is not None:
                evict()
            if start is None:
                log.warning("%s: refused a connection from %s: %d connections already (the limit)", self.what,
                            peer, self.max_connections)
                self._refuse(sock)
                continue
            start()

    max_connections = 64

    def _client_count(self) -> int:
        """Clients connected now (the caller holds :attr:`_lock`)."""
        raise NotImplementedError

    def _refuse(self, sock: socket.socket) -> None:
        """Turn away a client over the connection limit."""
        sock.close()

    def _make_room(self) -> Callable[[], None] | None:
        """With every connection taken (the caller holds :attr:`_lock`): stop counting a connection that may be
        dropped for a new client and return what drops it; None: the new client is refused."""
        return None

    def _stop(self) -> bool:
        """Stop accepting; False if the server was already closed."""
        with self._lock:
            if self._closed:
                return False
            self._closed = True
        stop_listening(self._listener)
        return True


def register_emulator(adb_port: int, server_port: int = 5037, attempts: int = 5, delay: float = 0.3) -> None:
    """Ask the adb server on ``127.0.0.1:server_port`` to connect to our transport on ``adb_port`` as the emulator
    ``emulator-<adb_port - 1>`` (the request an emulator sends at boot). Retried while the server is not up."""
    request = f"host:emulator:{adb_port}".encode()
    last: OSError | None = None
    for attempt in range(attempts):
        if attempt:
            time.sleep(delay)
        try:
            with socket.create_connection(("127.0.0.1", server_port), timeout=5) as sock:
                sock.sendall(b"%04x%s" % (len(request), request))
                sock.recv(64)  # the server answers nothing: it connects to us, then closes this socket
            return
        except OSError as err:
            last = err
    raise VluiError(f"could not register with the adb server on 127.0.0.1:{server_port}: "
                    f"{last.strerror or last if last else 'no answer'}")


def _readable(sock: socket.socket, timeout: float | None) -> bool:
    """Wait until ``sock`` has data (or has been hung up); False after ``timeout`` s (None: no limit)."""
    poller = select.poll()
    poller.register(sock, select.POLLIN | select.POLLPRI | select.POLLHUP | select.POLLERR)
    return bool(poller.poll(None if timeout is None else int(timeout * 1000)))


def _peer_name(address) -> str:
    return f"{address[0]}:{address[1]}" if isinstance(address, tuple) and len(address) >= 2 else str(address)


def _checksum(data: bytes | memoryview) -> int:
    return int(np.frombuffer(data, np.uint8).sum(dtype=np.uint64)) & 0xFFFFFFFF


class AdbDaemon(LoopbackServer):
    """Serves ``phone`` to adb hosts on ``host:port`` (port 0 picks a free one; see :attr:`port`).

    ``shell`` makes the shell a ``shell:``/``exec:`` stream runs (one per stream; an interactive ``shell:`` keeps
    its own for the session)."""

    def __init__(self, phone: ServedPhone, port: int = 0, host: str = "127.0.0.1",
                 shell: Callable[[ServedPhone], ShellLike] = Shell) -> None:
        self.phone = phone
        self.shell = shell
        self.limits = phone.limits
        self.max_connections = phone.limits.max_connections
        self._connections: set[_Connection] = set()
        self._open_streams = 0
        self._shared_streams = 0  # streams beyond their connection's reserved share (ServeLimits.reserved_streams)
        self._usage = threading.Lock()  # for the byte counts below
        self.buffered = 0  # output queued on every stream, in bytes
        self.registered_with: int | None = None  # the adb server we register with (see register)
        self._comeback: threading.Thread | None = None
        super().__init__(host, port, "adb transport")

    def register(self, server_port: int = 5037) -> None:
        """Register with the adb server on ``127.0.0.1:server_port`` as ``emulator-<port - 1>`` (see
        :func:`register_emulator`), and again after every ``adb reboot``, as an emulator does at each boot."""
        register_emulator(self.port, server_port)
        self.registered_with = server_port

    def _accepted(self, sock: socket.socket, peer: str) -> Callable[[], None]:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conn = _Connection(self, sock, peer)
        self._connections.add(conn)
        return conn.start

    def _client_count(self) -> int:
        return len(self._connections)

    def _make_room(self) -> Callable[[], None] | None:
        """The connection that holds the most streams beyond its reserved share makes way for a new client: one
        client cannot keep the others out by holding every connection busy. Idle connections stay (an adb server
        keeps one to each device it knows)."""
        share = self.limits.reserved_streams
        victim = max(self._connections, key=lambda c: c.open_streams, default=None)
        if victim is None or victim.open_streams <= share:
            return None
        self._connections.discard(victim)
        log.warning("adb transport: dropped the connection from %s: it runs %d streams, more than its share of %d, "
                    "and every connection is taken", victim.peer, victim.open_streams, share)
        return victim.drop

    def _stream_opened(self, conn: _Connection) -> str:
        """Count a new stream on ``conn``; why it is refused ("" when it is not). Every connection can open
        :attr:`ServeLimits.reserved_streams` streams; beyond those, up to :attr:`ServeLimits.client_streams`, it
        takes from a pool that all share, so that all of them hold at most :attr:`ServeLimits.max_streams`."""
        limits = self.limits
        share = limits.reserved_streams
        with self._lock:
            own = conn.open_streams
            if own >= limits.client_streams:
                return f"{own} streams open on its connection (the most for one client)"
            if own >= share and self._shared_streams >= limits.max_streams - share * limits.max_connections:
                return f"{self._open_streams} streams open already (the limit)"
            conn.open_streams += 1
            self._open_streams += 1
            if own >= share:
                self._shared_streams += 1
            return ""

    def _stream_closed(self, conn: _Connection) -> None:
        with self._lock:
            conn.open_streams -= 1
            self._open_streams -= 1
            if conn.open_streams >= self.limits.reserved_streams:
                self._shared_streams -= 1

    def _buffer(self, conn: _Connection, size: int) -> None:
        """``size`` more bytes (fewer, if negative) queued for ``conn``'s host."""
        with self._usage:
            conn.buffered += size
            self.buffered += size

    def _over_quota(self, conn: _Connection) -> bool:
        """Whether the output queued for ``conn``, or for every connection, is at its quota."""
        return conn.buffered >= self.limits.client_buffer_bytes or self.buffered >= self.limits.max_buffer_bytes

    def reboot(self) -> None:
        """``adb reboot``: every connection drops (once what is queued for it has gone out), the phone comes back
        on its snapshot, and registers again with the adb server it registered with."""
        with self._lock:
            conns = list(self._connections)
        for conn in conns:
            conn.flush(1.0)
        for conn in conns:
            conn.drop()
        self.phone.reboot()
        if self.registered_with is not None and not self._closed:
            self._comeback = threading.Thread(target=self._register_again, args=(self.registered_with,),
                                              name="adbd-reboot", daemon=True)
            self._comeback.start()

    def _register_again(self, server_port: int) -> None:
        """Ask the adb server to connect until it does: it ignores the request while it has not yet seen the old
        connection close."""
        for _ in range(20):
            if self._closed:
                return
            try:
                register_emulator(self.port, server_port, attempts=1)
            except VluiError:
                pass
            deadline = time.monotonic() + 0.5
            while time.monotonic() < deadline:
                with self._lock:
                    if any(conn.online for conn in self._connections):
                        return
                time.sleep(0.02)

    @property
    def streams(self) -> int:
        """Streams open now, on every connection."""
        with self._lock:
            return self._open_streams

    def _forget(self, conn: _Connection) -> None:
        with self._lock:
            self._connections.discard(conn)

    @property
    def connections(self) -> int:
        """Hosts connected now."""
        with self._lock:
            return len(self._connections)

    def close(self, timeout: float = 5.0) -> None:
        """Stop listening, drop every connection and cancel its streams; wait up to ``timeout`` s for the threads."""
        if not self._stop():
            return
        with self._lock:
            conns = list(self._connections)
        for conn in conns:
            conn.drop()
        deadline = time.monotonic() + timeout
        self._thread.join(max(0.0, deadline - time.monotonic()))
        if self._comeback is not None:
            self._comeback.join(max(0.0, deadline - time.monotonic()))
        for conn in conns:
            conn.join(max(0.0, deadline - time.monotonic()))

    def __enter__(self) -> AdbDaemon:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class _Rejected(Exception):
    """Why a connection is dropped (logged in one line with the peer's address)."""


class _Connection:
    """One host (one client, see :class:`~vlui.served.phone.ServeLimits`): a reader thread that dispatches its
    packets, a writer thread that sends what :meth:`send` queues, and the streams it opened."""

    def __init__(self, daemon: AdbDaemon, sock: socket.socket, peer: str) -> None:
        self.daemon = daemon
        self.phone = daemon.phone
        self.sock = sock
        self.peer = peer
        self.inbuf = bytearray()
        self.outbox: deque[bytes | memoryview] = deque()  # what the writer thread sends, in order
        self.ocond = threading.Condition()  # guards outbox, sending and dropped
        self.sending = False  # the writer thread has taken buffers from the outbox and is sending them
        self.open_streams = 0  # counted by the daemon, under its lock
        self.buffered = 0  # bytes queued on its streams, counted by the daemon
        self.push_slots = threading.Semaphore(daemon.limits.client_pushes)
        self.streams: dict[int, _Stream] = {}
        self.slock = threading.Lock()
        self.ids = itertools.count(1)
        self.version = A_VERSION
        self.max_send = MAX_PAYLOAD
        self.online = False
        self.dropped = False
        self.threads: list[threading.Thread] = []
        self.reader = threading.Thread(target=self._read, name="adbd-connection", daemon=True)
        self.writer = threading.Thread(target=self._write, name="adbd-writer", daemon=True)

    def start(self) -> None:
        self.reader.start()
        self.writer.start()

    def join(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        self.reader.join(timeout)
        self.writer.join(max(0.0, deadline - time.monotonic()))
        for thread in list(self.threads):
            thread.join(max(0.0, deadline - time.monotonic()))

    # ------------------------------------------------------------------------------------------ packets
    def send(self, command: int, arg0: int, arg1: int, data: bytes | memoryview = b"") -> None:
        """Queue a packet for the host; it never waits for the network. When nothing is queued before it and the
        caller does not hold the phone's lock, the socket takes what it can at once (the common case: no switch to
        the writer thread). Raises BrokenPipeError once the connection is dropped."""
        check = _checksum(data) if self.version < A_VERSION and len(data) else 0
        header = HEADER.pack(command, arg0, arg1, len(data), check, command ^ 0xFFFFFFFF)
        parts: list[bytes | memoryview] = [header, data] if len(data) else [header]
        with self.ocond:
            if self.dropped:
                raise BrokenPipeError("the connection is closed")
            if not self.outbox and not self.sending and not self.phone.holds_lock():
                try:
                    sent = self.sock.sendmsg(parts, (), socket.MSG_DONTWAIT)
                except OSError:  # a full socket (BlockingIOError), or a broken one: the writer finds out
                    sent = 0
                while parts and sent >= len(parts[0]):
                    sent -= len(parts.pop(0))
                if parts and sent:
                    parts[0] = memoryview(parts[0])[sent:]
            if parts:
                self.outbox.extend(parts)
                self.ocond.notify_all()

    def _write(self) -> None:
        """The writer thread: the only one that waits for the host to take what we send."""
        try:
            while True:
                with self.ocond:
                    while not self.outbox and not self.dropped:
                        self.ocond.wait()
                    if self.dropped:
                        return
                    parts = list(self.outbox)
                    self.outbox.clear()
                    self.sending = True
                for part in parts:
                    self.sock.sendall(part)
                with self.ocond:
                    self.sending = False
                    self.ocond.notify_all()
        except OSError:
            pass
        finally:
            self.drop()

    def flush(self, timeout: float) -> None:
        """Wait up to ``timeout`` s for what is queued to be sent."""
        deadline = time.monotonic() + timeout
        with self.ocond:
            while (self.outbox or self.sending) and not self.dropped and time.monotonic() < deadline:
                self.ocond.wait(max(0.0, deadline - time.monotonic()))

    def _recv(self, n: int, starting: bool = False) -> bytes:
        """Exactly ``n`` bytes from the host. Raises EOFError when it hangs up, and :class:`_Rejected` when it
        stalls: before its CNXN or inside a packet for :attr:`ServeLimits.handshake_timeout_s`, or, with no stream
        open, between packets for :attr:`ServeLimits.idle_timeout_s` (``starting``: waiting for a new packet)."""
        limits = self.daemon.limits
        while len(self.inbuf) < n:
            if self.inbuf or not starting:  # a packet begun (its header or its data) must be finished
                timeout, why = limits.handshake_timeout_s, "a truncated packet"
            elif not self.online:
                timeout, why = limits.handshake_timeout_s, "no CNXN"
            else:
                timeout, why = limits.idle_timeout_s, "idle"
            if not _readable(self.sock, timeout):
                if why == "idle" and self.streams:
                    continue  # a command that runs long and quietly: the host is waiting for it, not idle
                raise _Rejected(f"{why} for {timeout:g} s")
            chunk = self.sock.recv(max(256 << 10, n - len(self.inbuf)))
            if not chunk:
                raise EOFError
            self.inbuf += chunk
        data = bytes(self.inbuf[:n])
        del self.inbuf[:n]
        return data

    def _read(self) -> None:
        try:
            while True:
                with self.ocond:  # a host that sends faster than it reads our answers waits, as TCP makes it
                    while len(self.outbox) > OUTBOX_LIMIT and not self.dropped:
                        self.ocond.wait()
                command, arg0, arg1, length, check, magic = HEADER.unpack(self._recv(HEADER.size, starting=True))
                if magic != command ^ 0xFFFFFFFF:
                    raise _Rejected("a packet with a bad magic")
                if length > MAX_PAYLOAD:
                    raise _Rejected(f"a {length}-byte packet (the most is {MAX_PAYLOAD})")
                data = self._recv(length) if length else b""
                version = arg0 if command == A_CNXN else self.version
                if version < A_VERSION and length and check != _checksum(data):
                    raise _Rejected("a packet with a wrong checksum")
                self._dispatch(command, arg0, arg1, data)
        except _Rejected as why:
            if not self.dropped:
                log.warning("adb transport: dropped the connection from %s: %s", self.peer, why)
        except (OSError, EOFError, ValueError):
            pass
        finally:
            self.drop()

    def _dispatch(self, command: int, arg0: int, arg1: int, data: bytes) -> None:
        if command == A_CNXN:
            self._connect(arg0, arg1)
        elif not self.online:
            return  # a host speaks only after CNXN; adbd ignores anything else, and so do we
        elif command == A_OPEN:
            self._open(arg0, data.split(b"\0", 1)[0].decode("utf-8", "replace"))
        elif command == A_OKAY:
            stream = self._stream(arg1)
            if stream is not None:
                stream.on_okay()
        elif command == A_WRTE:
            stream = self._stream(arg1)
            if stream is not None and stream.on_write(data):
                self.send(A_OKAY, stream.local_id, stream.remote_id)
            if stream is not None and len(stream.inbox) > QUEUE_LIMIT + 2 * MAX_PAYLOAD:
                raise _Rejected("data written past the flow control (no OKAY was given for it)")
        elif command == A_CLSE:
            stream = self._stream(arg1)
            if stream is not None:
                stream.on_host_close()
        # AUTH, STLS and SYNC answer requests we never make: ignored

    def _stream(self, local_id: int) -> _Stream | None:
        with self.slock:
            return self.streams.get(local_id)

    def _connect(self, version: int, max_data: int) -> None:
        if self.online:  # a host that reconnects starts afresh, as with adbd
            self._cancel_streams()
        self.version = max(A_VERSION_MIN, min(version, A_VERSION))
        self.max_send = max(256, min(max_data, MAX_PAYLOAD))
        self.online = True
        prop = self.phone.prop
        banner = (f"device::ro.product.name={prop('ro.product.name')};ro.product.model={prop('ro.product.model')};"
                  f"ro.product.device={prop('ro.product.device')};features={','.join(FEATURES)}")
        self.send(A_CNXN, self.version, self.max_send, banner.encode())

    def _open(self, remote_id: int, service: str) -> None:
        run = _service(service)
        if run is None:
            log.info("adbd: refused unknown service %r", service)
            self.send(A_CLSE, 0, remote_id)
            return
        refused = self.daemon._stream_opened(self)
        if refused:
            log.warning("adb transport: refused service %r from %s: %s", service[:40], self.peer, refused)
            self.send(A_CLSE, 0, remote_id)
            return
        stream = _Stream(self, next(self.ids), remote_id)
        with self.slock:
            self.streams[stream.local_id] = stream
        self.send(A_OKAY, stream.local_id, remote_id)
        thread = threading.Thread(target=stream.serve, args=(run,), name=f"adbd-stream:{service[:40]}", daemon=True)
        self.threads = [t for t in self.threads if t.is_alive()] + [thread]
        thread.start()

    def forget(self, stream: _Stream) -> None:
        with self.slock:
            self.streams.pop(stream.local_id, None)
        self.daemon._stream_closed(self)

    def _cancel_streams(self) -> None:
        with self.slock:
            streams = list(self.streams.values())
            self.streams.clear()
        for stream in streams:
            stream.on_drop()

    def drop(self) -> None:
        """The connection is gone (or the server closes): cancel every stream and close the socket."""
        with self.ocond:
            if self.dropped:
                return
            self.dropped = True
            self.outbox.clear()
            self.ocond.notify_all()
        self._cancel_streams()
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
        self.daemon._forget(self)


class _Stream:
    """One service on one connection. :meth:`write` is what the service writes with; :meth:`read` reads what the
    host sent. Locking: the phone's lock, then the stream's condition, then the connection's outbox and the daemon's
    counters, never the other way round."""

    def __init__(self, conn: _Connection, local_id: int, remote_id: int) -> None:
        self.conn = conn
        self.phone = conn.phone
        self.local_id = local_id
        self.remote_id = remote_id
        self.cond = threading.Condition()
        self.cancelled = threading.Event()  # set when the host closes the stream or the connection drops
        self.out: deque[memoryview] = deque()
        self.out_size = 0
        self.in_flight = False
        self.finishing = False
        self.closed = False
        self.inbox = bytearray()
        self.owe_okay = False

    def serve(self, run: Callable[[_Stream], None]) -> None:
        try:
            run(self)
        except (BrokenPipeError, EOFError):
            pass  # the host went away mid-service
        except Exception:
            log.exception("adbd: a service failed")
        finally:
            self.finish()

    # ------------------------------------------------------------------------------------------ output
    def write(self, data: bytes | bytearray | memoryview) -> None:
        """Send ``data`` to the host. Raises BrokenPipeError once the host has closed the stream, or once it has
        been closed because its host does not read (see the module's documentation)."""
        view = memoryview(data).cast("B")
        if not view.readonly:  # the caller may reuse its buffer after we return
            view = memoryview(bytes(view))
        if not len(view):
            return
        locked = self.phone.holds_lock()
        daemon = self.conn.daemon
        with self.cond:
            while not self.closed and (self.out_size >= QUEUE_LIMIT or daemon._over_quota(self.conn)):
                if locked:  # waiting here would stall every client: queue it, up to a limit
                    if self.out_size < LOCKED_QUEUE_LIMIT:
                        break
                    log.warning("adb transport: closed a stream of %s: its host does not read (%d bytes queued)",
                                self.conn.peer, self.out_size)
                    self._close(send=True)
                else:  # an OKAY on this stream wakes us; room on the others' we look for
                    self.cond.wait(None if self.out_size >= QUEUE_LIMIT else POLL_S)
            if self.closed:
                raise BrokenPipeError("the host closed the stream")
            self.out.append(view)
            self._queued(len(view))
            if not self.in_flight:
                self._send_next()

    def _queued(self, size: int) -> None:
        """``size`` more bytes (fewer, if negative) in :attr:`out` (the caller holds :attr:`cond`)."""
        self.out_size += size
        self.conn.daemon._buffer(self.conn, size)

    def _send_next(self) -> None:
        """Send the next packet of queued output (the caller holds :attr:`cond`)."""
        limit = self.conn.max_send
        first = self.out[0]
        if len(first) >= limit:
            chunk: bytes | memoryview = first[:limit]
            if len(first) == limit:
                self.out.popleft()
            else:
                self.out[0] = first[limit:]
        else:
            parts, size = [], 0
            while self.out and size < limit:
                part = self.out[0]
                if size + len(part) <= limit:
                    self.out.popleft()
                else:
                    part, self.out[0] = part[:limit - size], part[limit - size:]
                parts.append(part)
                size += len(part)
            chunk = parts[0] if len(parts) == 1 else b"".join(parts)
        self._queued(-len(chunk))
        self.in_flight = True
        try:
            self.conn.send(A_WRTE, self.local_id, self.remote_id, chunk)
        except OSError:
            self._close(send=False)

    def on_okay(self) -> None:
        with self.cond:
            self.in_flight = False
            if self.closed:
                return
            if self.out:
                self._send_next()
            elif self.finishing:
                self._close(send=True)
            self.cond.notify_all()

    def finish(self) -> None:
        """The service is done: close the stream once the queued output has been sent."""
        with self.cond:
            self.finishing = True
            if not self.closed and not self.out and not self.in_flight:
                self._close(send=True)

    def _close(self, send: bool) -> None:
        if self.closed:
            return
        self.closed = True
        self.cancelled.set()
        self.out.clear()
        self._queued(-self.out_size)
        self.conn.forget(self)
        if send:
            try:
                self.conn.send(A_CLSE, self.local_id, self.remote_id)
            except OSError:
                pass
        self.cond.notify_all()

    def on_host_close(self) -> None:
        with self.cond:
            self._close(send=True)

    def on_drop(self) -> None:
        with self.cond:
            self._close(send=False)

    # ------------------------------------------------------------------------------------------ input
    def on_write(self, data: bytes) -> bool:
        """Take the host's data; whether to answer ``OKAY`` now. A service that does not read what the host sends
        gets at most :data:`QUEUE_LIMIT` bytes queued: the ``OKAY`` then waits until it reads, and the host waits
        for the ``OKAY``, as adbd makes a host wait for a process that does not read its standard input."""
        with self.cond:
            self.inbox += data
            self.cond.notify_all()
            if len(self.inbox) <= QUEUE_LIMIT:
                return True
            self.owe_okay = True
            return False

    def _taken(self) -> None:
        """After a read (the caller holds :attr:`cond`): send the ``OKAY`` held back for a full inbox."""
        if self.owe_okay and len(self.inbox) <= QUEUE_LIMIT and not self.closed:
            self.owe_okay = False
            try:
                self.conn.send(A_OKAY, self.local_id, self.remote_id)
            except OSError:
                pass

    def read(self, n: int) -> bytes:
        """Exactly ``n`` bytes from the host; EOFError if the stream closes first."""
        with self.cond:
            while len(self.inbox) < n and not self.closed:
                self.cond.wait()
            if len(self.inbox) < n:
                raise EOFError
            data = bytes(self.inbox[:n])
            del self.inbox[:n]
            self._taken()
            return data

    def read_some(self) -> bytes:
        """Whatever the host has sent (at least a byte), or b"" once the stream is closed."""
        with self.cond:
            while not self.inbox and not self.closed:
                self.cond.wait()
            data = bytes(self.inbox)
            self.inbox.clear()
            self._taken()
            return data


# ---------------------------------------------------------------------------------------------- services
def _service(name: str) -> Callable[[_Stream], None] | None:
    """The function that runs service ``name`` on a stream, or None for a service we do not offer."""
    kind, _, arg = name.partition(":")
    base, *options = kind.split(",")
    if base == "shell" and "v2" in options:  # shell,v2[,raw|,pty][,TERM=...]:[COMMAND]
        pty = "pty" in options or ("raw" not in options and not arg.strip())
        return lambda stream: _shell_v2(stream, arg, pty)
    if base in ("shell", "exec") and arg.strip():
        return lambda stream: _run_command(stream, arg)
    if base == "shell":
        return _interactive
    if name == "sync:":
        return _sync
    if name == "root:":
        return lambda stream: stream.write(b"adbd is already running as root\n")
    if base == "reboot":  # reboot:[bootloader|recovery|...]: an emulator has neither, and reboots into Android
        return lambda stream: stream.conn.daemon.reboot()
    return None


def _run_command(stream: _Stream, command: str) -> None:
    phone = stream.phone
    try:
        stream.conn.daemon.shell(phone).run(command, stream.write, stream.cancelled)
    finally:
        phone.changed()


def _tty(write: Callable[[bytes], None]) -> Callable[[bytes], None]:
    """``write`` through a terminal's line discipline: ``\\n`` becomes ``\\r\\n``."""
    return lambda data: write(bytes(data).replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))


def _interactive(stream: _Stream) -> None:
    """The legacy ``shell:`` with no command: a terminal session on the stream's raw bytes."""
    _terminal(stream, stream.read_some, stream.write)


def _terminal(stream: _Stream, read: Callable[[], bytes], write: Callable[[bytes], None]) -> int:
    """A pseudo-terminal session: echo what the host types (``read`` gives it, b"" at its end), hand each line to
    the shell (a command spanning lines, an ``if`` or an open quote, waits for its end behind a ``> `` prompt),
    ``exit`` (or ^D on an empty line) ends it; the status of the last command. As the kernel's terminal does, a line
    holds at most MAX_CANON - 1 bytes: what is typed beyond is dropped until the newline. Plain text is taken in
    runs, so a long paste costs time linear in its length."""
    phone = stream.phone
    shell = stream.conn.daemon.shell(phone)
    prompt = f"{phone.prop('ro.product.device')}:/ # ".encode()
    tty_write = _tty(write)
    status = 0
    write(prompt)
    line = bytearray()
    previous = 0
    while True:
        data = read()
        if not data:
            return status
        pos = 0
        while pos < len(data):
            control = TTY_CONTROL.search(data, pos)
            end = control.start() if control else len(data)
            if end > pos:  # plain text: kept up to the line's room, echoed as kept
                kept = data[pos:min(end, pos + MAX_CANON - 1 - len(line))]
                line += kept
                write(kept)
                previous = data[end - 1]
            if control is None:
                break
            byte, pos = data[end], end + 1
            if byte == 0x0A and previous == 0x0D:  # \r\n from a pipe: one line, not two
                previous = byte
                continue
            previous = byte
            if byte in (0x0D, 0x0A):
                write(b"\r\n")
                if not shell.waiting and line.strip() == b"logout":
                    return status
                if line.strip() or shell.waiting:
                    try:
                        status = shell.feed(bytes(line) + b"\n", tty_write, stream.cancelled)
                    finally:
                        phone.changed()
                    if shell.exited:
                        return status
                line.clear()
                write(b"> " if shell.waiting else prompt)
            elif byte == 0x04:  # ^D ends the session on an empty line; within a line it sends nothing here
                if not line:
                    return status
            elif byte == 0x03:  # ^C
                line.clear()
                write(b"^C\r\n" + prompt)
            elif line:  # DEL or backspace
                del line[-1]
                write(b"\b \b")


# ---------------------------------------------------------------------------------------------- shell v2
# The shell protocol (AOSP adb/shell_protocol.h): both ways, packets of an id byte, a little-endian 32-bit length
# and the data.
V2_STDIN, V2_STDOUT, V2_STDERR, V2_EXIT, V2_CLOSE_STDIN, V2_WINDOW_SIZE = range(6)
V2_HEADER = struct.Struct("<BI")


def _shell_v2(stream: _Stream, command: str, pty: bool) -> None:
    """``shell,v2``: standard output and error in their own packets, then the exit status, so that ``adb shell
    false`` exits 1. With a command, it runs (``pty``: through a terminal, both outputs as one); without one,
    ``pty`` is an interactive session and ``raw`` runs the lines the host sends on standard input, as ``sh``
    reading a pipe does, until the host closes it."""
    phone = stream.phone

    def packet(kind: int) -> Callable[[bytes], None]:
        return lambda data: stream.write(V2_HEADER.pack(kind, len(data)) + bytes(data)) if len(data) else None

    def stdin() -> bytes:
        """The host's next standard-input bytes; b"" once it closes them (or the stream)."""
        while True:
            try:
                kind, length = V2_HEADER.unpack(stream.read(V2_HEADER.size))
                data = stream.read(length) if length else b""
            except EOFError:
                return b""
            if kind == V2_CLOSE_STDIN:
                return b""
            if kind == V2_STDIN and data:
                return data  # window-size changes and empty packets change nothing here

    out, err = packet(V2_STDOUT), packet(V2_STDERR)
    shell = stream.conn.daemon.shell(phone)
    status = 0
    try:
        if command.strip():
            status = shell.run(command, _tty(out) if pty else out, stream.cancelled, _tty(out) if pty else err)
        elif pty:
            status = _terminal(stream, stdin, out)
        else:
            status = shell.run_script(stdin, out, stream.cancelled, err)
    finally:
        phone.changed()
    stream.write(V2_HEADER.pack(V2_EXIT, 1) + bytes([status & 0xFF]))


# ---------------------------------------------------------------------------------------------- file sync
def _sync(stream: _Stream) -> None:
    """File sync, version 1 (AOSP ``adb/SYNC.TXT``): requests are an id and a little-endian length-prefixed path."""
    phone = stream.phone
    while True:
        header = stream.read(8)
        ident, length = header[:4], int.from_bytes(header[4:], "little")
        if ident == b"QUIT":
            return
        if length > 1024:
            return _fail(stream, "path too long")
        # adbd reads the path as a C string: a NUL ends it
        path = stream.read(length).split(b"\0", 1)[0].decode("utf-8", "surrogateescape")
        if ident == b"STAT":
            with phone.lock:
                mode, size = _lstat(phone, path)
            stream.write(b"STAT" + struct.pack("<3I", mode, size, _mtime(phone) if mode else 0))
        elif ident == b"LIST":
            stream.write(_list(phone, _normpath(path)))
        elif ident == b"SEND":
            if not _send(stream, path):
                return
        elif ident == b"RECV":
            if not _recv(stream, _normpath(path)):
                return
        else:
            return _fail(stream, f"unknown sync command {ident!r}")


def _normpath(path: str) -> str:
    """A sync path as the phone's files name it: absolute, normalised, another name of the shared storage
    (/storage/emulated/0, /storage/self/primary) read as /sdcard, as the shell reads it."""
    return resolve_storage(posixpath.normpath("/" + path.lstrip("/"))) if path else "/"


def _mtime(phone: ServedPhone) -> int:
    """Files carry no times of their own: they report the phone's (virtual) clock."""
    with phone.lock:
        return max(0, phone.device.state.time_ms // 1000)


def _lstat(phone: ServedPhone, path: str) -> tuple[int, int]:
    """STAT's (mode, size): adbd's ``lstat``, so a link (``/sdcard``) is reported as one, with its target's length
    as its size, unless the path ends in ``/`` (then the kernel follows it). An adb client without ``stat_v2`` asks
    again with a ``/`` to learn whether the link leads to a folder. The caller holds the phone's lock."""
    lexical = posixpath.normpath("/" + path.lstrip("/")) if path else "/"
    link = SYMLINKS.get(lexical)
    if link is not None and not path.endswith("/"):
        return MODE_LINK | int(_permissions(link[0]), 8), len(link[1])
    return _stat(phone, _normpath(path))


def _permissions(mode: str) -> str:
    """``rwxr-xr-x`` -> ``755``."""
    bits = "".join("0" if c == "-" else "1" for c in mode[-9:])
    return "".join(str(int(bits[k:k + 3], 2)) for k in (0, 3, 6))


def _stat(phone: ServedPhone, path: str) -> tuple[int, int]:
    """(mode, size); (0, 0) for a path that does not exist. The caller holds the phone's lock. The system's folders
    and files (``/proc``, ``/system/bin``) are there as the shell sees them."""
    data = phone.files.get(path)
    if data is not None:
        return MODE_FILE, len(data)
    if is_dir(phone, path):
        return MODE_DIR, 4096
    data = system_file(phone, path)
    if data is not None:
        return MODE_FILE, len(data) if not path.startswith("/proc/") else 0  # /proc files report no size, as on Linux
    return 0, 0


def _list(phone: ServedPhone, path: str) -> bytes:
    mtime = _mtime(phone)
    out = bytearray()
    with phone.lock:
        if is_dir(phone, path):  # what ``ls`` lists (the system's folders and /proc included)
            prefix = path.rstrip("/") + "/"
            for child in dir_names(phone, path):
                mode, size = _lstat(phone, prefix + child)
                raw = child.encode("utf-8", "surrogateescape")
                out += b"DENT" + struct.pack("<4I", mode, size, mtime, len(raw)) + raw
    return bytes(out + b"DONE" + bytes(16))


def _fail(stream: _Stream, message: str) -> bool:
    raw = message.encode()
    stream.write(b"FAIL" + struct.pack("<I", len(raw)) + raw)
    return False


def _send(stream: _Stream, spec: str) -> bool:
    """SEND "path,mode": DATA chunks then DONE(mtime); answered OKAY or FAIL. A connection sends
    :attr:`ServeLimits.client_pushes` files at once; the others wait their turn."""
    raw_path = spec.rpartition(",")[0] if "," in spec else spec
    path = _normpath(raw_path)
    if read_only(path):
        return _fail(stream, "couldn't create file: Read-only file system")
    if name_too_long(path):
        return _fail(stream, "couldn't create file: File name too long")
    slots = stream.conn.push_slots
    while not slots.acquire(timeout=POLL_S):
        if stream.cancelled.is_set():
            raise EOFError
    try:
        return _receive_file(stream, raw_path, path)
    finally:
        slots.release()


def _receive_file(stream: _Stream, raw_path: str, path: str) -> bool:
    """The DATA chunks of a push, each reserved against the storage budget before it is taken, so that pushes in
    parallel never hold more than the budget; then the file, stored in place of its reservation. A push that fails
    has given its reservation back before it answers FAIL."""
    phone = stream.phone
    with phone.lock:
        files = phone.files  # reserved and released here, even if a snapshot load replaces phone.files meanwhile
    failure = _take_file(stream, files, raw_path, path)
    if failure:
        return _fail(stream, failure)
    stream.write(b"OKAY" + bytes(4))
    return True


def _take_file(stream: _Stream, files: PhoneFiles, raw_path: str, path: str) -> str:
    """Receive and store the pushed file: "" once it is stored, else why it failed. Whatever it reserved is given
    back by the time it returns; a chunk that does not fit gives back the push's whole reservation in the same step
    (under the phone's lock) that refuses it, so that pushes in parallel fail one at a time and the space of one that
    fails goes at once to the others (without this, each could be refused for space another failed push still held
    while it said so, and all of them failed)."""
    phone = stream.phone
    content = bytearray()  # one buffer that grows, not a list of chunks: freed whole, it goes back to the system
    reserved = 0
    try:
        while True:
            header = stream.read(8)
            ident, length = header[:4], int.from_bytes(header[4:], "little")
            if ident == b"DATA":
                if length > SYNC_DATA_MAX:
                    return "data chunk too large"
                with phone.lock:
                    try:
                        files.reserve(path, length)
                    except StorageError:  # refused as it arrives: never held in memory
                        files.release(reserved)
                        reserved = 0
                        return "write failed: No space left on device"
                reserved += length
                content += stream.read(length)
            elif ident == b"DONE":
                break
            else:
                return f"invalid data message {ident!r}"
        data = bytes(content)  # copied unlocked; the buffer goes before the file is stored
        del content
        with phone.lock:
            files.release(reserved)
            reserved = 0
            parents = [posixpath.dirname(path)]
            while parents[-1] != "/":
                parents.append(posixpath.dirname(parents[-1]))
            if phone.is_dir(path) or raw_path.endswith("/"):
                return f"couldn't create file {raw_path}: Is a directory"
            if any(p in phone.files for p in parents):
                return f"couldn't create file {path}: Not a directory"
            try:
                phone.files[path] = data
            except StorageError as err:  # others filled the storage meanwhile
                return f"write failed: {err.strerror}"
        return ""
    finally:
        if reserved:
            with phone.lock:
                files.release(reserved)


def _recv(stream: _Stream, path: str) -> bool:
    phone = stream.phone
    with phone.lock:
        data = phone.files.get(path)
        folder = data is None and is_dir(phone, path)
        if data is None and not folder:
            data = system_file(phone, path)  # ``adb pull /proc/cpuinfo`` as on a device
    if data is None:
        return _fail(stream, "open failed: Is a directory" if folder else "open failed: No such file or directory")
    view = memoryview(data)
    for start in range(0, len(view), SYNC_DATA_MAX):
        chunk = view[start:start + SYNC_DATA_MAX]
        stream.write(b"DATA" + struct.pack("<I", len(chunk)))
        stream.write(chunk)
    stream.write(b"DONE" + bytes(4))
    return True
