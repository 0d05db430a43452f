"""One client cannot starve the others (issue 34): a host that does not read stalls only its own streams, pushes in
parallel hold the storage budget together, one client's many connections and streams leave room for the rest, and
``adb reboot`` reboots the phone. Sizes are scaled down through :class:`ServeLimits`."""

from __future__ import annotations

import socket
import struct
import threading
import time

import pytest

from tests.served.conftest import ProbeShell
from tests.served.test_adbd import RawHost
from vlui.errors import VluiError
from vlui.served.adbd import A_CLSE, A_CNXN, A_OKAY, A_OPEN, A_WRTE, AdbDaemon
from vlui.served.phone import ServedPhone, ServeLimits
from vlui.served.private_adb import PrivateAdb

SLOW_RCVBUF = 4096  # the receive buffer of a host that never reads
# How long a client waits for an answer, and a test for what it waits on: a guard against a hang, not a measure of
# speed (the suite runs on loaded machines, two tests at a time, where a normal answer may take seconds).
PATIENCE_S = 30.0


def wait_until(condition, timeout: float = PATIENCE_S) -> bool:
    """Poll ``condition()`` until it holds (True, at once) or ``timeout`` s have passed (False)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def raw_host(port: int) -> RawHost:
    """A :class:`RawHost` that waits up to :data:`PATIENCE_S` for each packet."""
    host = RawHost(port)
    host.sock.settimeout(PATIENCE_S)
    return host


def slow_host(port: int) -> socket.socket:
    """A host with a 4 KB receive buffer that sends CNXN and will never read a byte."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, SLOW_RCVBUF)  # before connecting: it sets the window
    sock.connect(("127.0.0.1", port))
    send(sock, A_CNXN, 0x01000001, 1 << 20, b"host::features=shell_v2\0")
    return sock


def send(sock: socket.socket, command: int, arg0: int, arg1: int, data: bytes = b"") -> None:
    sock.sendall(struct.pack("<6I", command, arg0, arg1, len(data), 0, command ^ 0xFFFFFFFF) + data)


def run(host: RawHost, service: str, remote: int = 1) -> bytes:
    """Open ``service``, take its output (answering each packet) until the phone closes the stream."""
    host.send(A_OPEN, remote, 0, service.encode() + b"\0")
    command, local, _, _ = host.recv()
    assert command == A_OKAY, f"{service} refused"
    out = bytearray()
    while True:
        command, _, arg1, data = host.recv()
        assert arg1 == remote
        if command == A_CLSE:
            return bytes(out)
        assert command == A_WRTE
        out += data
        host.send(A_OKAY, remote, local)


def well_behaved_client_is_served(port: int, within: float = PATIENCE_S) -> None:
    """A client's echo, getprop, input and screencap, each answered and closed, all within ``within`` seconds (a
    client that is stalled waits forever)."""
    host = RawHost(port)
    host.sock.settimeout(within)
    try:
        assert host.recv()[0] == A_CNXN
        start = time.monotonic()
        assert run(host, "shell:echo hi", 1) == b"hi\n"
        assert run(host, "shell:getprop ro.build.version.sdk", 2) == b"29\n"
        assert run(host, "shell:input tap 540 1000", 3) == b""
        assert len(run(host, "exec:screencap", 4)) == 16 + 1080 * 2160 * 4
        assert time.monotonic() - start < within
    finally:
        host.close()


class FloodShell(ProbeShell):
    """The phone's shell (a terminal's lines and a script on standard input go to it as they are) plus ``flood``:
    16 MB written while it holds the phone's lock, as a command does that writes what it reads under the lock;
    ``flood`` records how it ended in :attr:`floods`."""

    floods: list[str] = []

    def __init__(self, phone: ServedPhone) -> None:
        super().__init__(phone)
        self.phone = phone

    def run(self, command: str, write, cancelled: threading.Event, err=None) -> int:
        if command != "flood":
            return super().run(command, write, cancelled, err)
        try:
            with self.phone.lock:
                for _ in range(256):
                    write(bytes(64 << 10))
            FloodShell.floods.append("written")
        except BrokenPipeError:
            FloodShell.floods.append("closed")
            raise
        return 0


@pytest.fixture
def served():
    phone = ServedPhone("000", noise=False)
    with AdbDaemon(phone, shell=FloodShell) as daemon:
        yield daemon


def test_a_host_that_does_not_read_stalls_only_itself(served):
    """Issue 34, HIGH: 8 ``exec:screencap`` and a ``shell,v2,raw:`` running ``dumpsys display`` from a host with a
    4 KB receive buffer that never reads hung every other client (output went to the network under the phone's
    lock)."""
    slow = slow_host(served.port)
    try:
        for stream in range(1, 9):
            send(slow, A_OPEN, stream, 0, b"exec:screencap\0")
        send(slow, A_OPEN, 9, 0, b"shell,v2,raw:\0")
        line = b"dumpsys display\n"
        send(slow, A_WRTE, 9, 9, struct.pack("<BI", 0, len(line)) + line)  # local ids count from 1: this is 9
        # the screencaps fill the slow host's window; dumpsys writes under the lock
        assert wait_until(lambda: served.streams == 9), served.streams
        well_behaved_client_is_served(served.port)
        well_behaved_client_is_served(served.port)
    finally:
        slow.close()


def test_a_stream_that_queues_too_much_under_the_lock_is_closed(served):
    """A command that writes under the phone's lock cannot wait for a host that does not read: its stream is
    closed once it holds a few megabytes, and that host alone loses it."""
    FloodShell.floods.clear()
    slow = slow_host(served.port)
    try:
        send(slow, A_OPEN, 1, 0, b"shell:flood\0")
        wait_until(lambda: bool(FloodShell.floods))
        assert FloodShell.floods == ["closed"]
        well_behaved_client_is_served(served.port)
        assert served.buffered < 8 << 20  # the slow host's queue is gone with its stream (what is in flight stays)
    finally:
        slow.close()


# ---------------------------------------------------------------------------------------------- pushes
class SyncHost:
    """``sync:`` streams on one raw connection, each a push sent chunk by chunk with the flow control obeyed."""

    def __init__(self, port: int) -> None:
        self.host = raw_host(port)
        assert self.host.recv()[0] == A_CNXN
        self.local: dict[int, int] = {}  # our id -> the phone's
        self.replies: dict[int, bytearray] = {}
        self.closed: set[int] = set()

    def open(self, remote: int, path: str) -> None:
        self.host.send(A_OPEN, remote, 0, b"sync:\0")
        command, local, _, _ = self.host.recv()
        assert command == A_OKAY
        self.local[remote], self.replies[remote] = local, bytearray()
        spec = f"{path},33188".encode()
        self.write(remote, b"SEND" + struct.pack("<I", len(spec)) + spec)

    def write(self, remote: int, data: bytes) -> None:
        """Send ``data`` on the stream and wait for its OKAY (or for the stream to close)."""
        if remote in self.closed:
            return
        self.host.send(A_WRTE, remote, self.local[remote], data)
        assert self.pump(lambda okayed: remote in okayed or remote in self.closed), "no OKAY from the phone"

    def pump(self, done, timeout: float = PATIENCE_S) -> bool:
        """Answer the phone's packets until ``done(streams okayed)``; False if that takes over ``timeout`` s."""
        okayed: set[int] = set()
        deadline = time.monotonic() + timeout
        while not done(okayed):
            if time.monotonic() > deadline:
                return False
            self.host.sock.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                command, _, remote, data = self.host.recv()
            except (TimeoutError, socket.timeout):
                continue
            if command == A_OKAY:
                okayed.add(remote)
            elif command == A_WRTE:
                self.replies[remote] += data
                self.host.send(A_OKAY, remote, self.local[remote])
            elif command == A_CLSE:
                self.closed.add(remote)
        self.host.sock.settimeout(PATIENCE_S)
        return True

    def close(self) -> None:
        self.host.close()


def test_pushes_in_parallel_hold_the_storage_budget_together():
    """Issue 34, MED: each push was checked against the stored files only, so parallel pushes together held many
    times the budget in memory. Now each chunk is reserved as it arrives: three 6 MB pushes against an 8 MB budget
    fail (``No space left on device``) before they end, and the reservations of failed pushes come back."""
    budget, size, chunk = 8 << 20, 6 << 20, 64 << 10
    phone = ServedPhone("000", noise=False, limits=ServeLimits(storage_bytes=budget))
    with AdbDaemon(phone) as daemon:
        sync = SyncHost(daemon.port)
        try:
            pushes = (1, 2, 3)
            for remote in pushes:
                sync.open(remote, f"/data/local/tmp/push{remote}")
            for _ in range(size // chunk):  # round robin, as adb pushes from three terminals go
                for remote in pushes:
                    sync.write(remote, b"DATA" + struct.pack("<I", chunk) + bytes(chunk))
            assert sync.pump(lambda okayed: len(sync.closed) >= 2), "fewer than 2 pushes failed"
            # no DONE yet: the failures were refused as the data arrived
            failed = [r for r in pushes if sync.replies[r].startswith(b"FAIL")]
            assert len(failed) == 2 and all(b"No space left on device" in sync.replies[r] for r in failed)
            with phone.lock:
                assert phone.files.used + phone.files.reserved <= budget
            survivors = [r for r in pushes if r not in failed]
            for remote in survivors:
                sync.write(remote, b"DONE" + bytes(4))
            assert sync.pump(lambda okayed: all(sync.replies[r] for r in survivors))
            stored = [r for r in survivors if sync.replies[r] == b"OKAY" + bytes(4)]
            with phone.lock:
                assert phone.files.used <= budget
                assert [len(phone.files.get(f"/data/local/tmp/push{r}", b"")) for r in stored] == [size] * len(stored)
        finally:
            sync.close()
        wait_until(lambda: phone.files.reserved == 0)
        assert phone.files.reserved == 0  # every push's reservation given back, stored or failed


def test_a_failed_push_gives_its_reservation_back():
    phone = ServedPhone("000", noise=False, limits=ServeLimits(storage_bytes=4 << 20))
    with AdbDaemon(phone) as daemon:
        sync = SyncHost(daemon.port)
        try:
            sync.open(1, "/data/local/tmp/a")
            for _ in range(16):
                sync.write(1, b"DATA" + struct.pack("<I", 64 << 10) + bytes(64 << 10))
            # the phone OKAYs a chunk as it arrives and reserves it as the push takes it: wait for the last one
            wait_until(lambda: phone.files.reserved == 1 << 20)
            assert phone.files.reserved == 1 << 20
            sync.write(1, b"BOGUS" + bytes(3))  # a broken push: FAIL, and its megabyte is free again
            assert sync.pump(lambda okayed: 1 in sync.closed)
            assert sync.replies[1].startswith(b"FAIL") and phone.files.reserved == 0
        finally:
            sync.close()


# ---------------------------------------------------------------------------------------------- quotas
def test_one_client_with_many_connections_cannot_lock_out_the_rest(caplog):
    """Issue 34, MED: 62 connections x 5 ``shell:sleep 100`` took every stream (a well-behaved client got
    ``error: closed``) and, at the connection cap, no new adb server could attach. Scaled: 8 connections, 32
    streams; every connection keeps 2 streams whatever the others hold."""
    limits = ServeLimits(max_connections=8, max_streams=32)
    phone = ServedPhone("000", noise=False, limits=limits)
    with AdbDaemon(phone) as daemon:
        greedy = [raw_host(daemon.port) for _ in range(limits.max_connections - 1)]
        good = newcomer = None
        try:
            for host in greedy:
                assert host.recv()[0] == A_CNXN
                for stream in range(1, 6):
                    host.send(A_OPEN, stream, 0, b"shell:sleep 100\0")
                    host.recv()  # OKAY, or CLSE once the shared streams are taken
            assert daemon.streams <= limits.max_streams
            good = raw_host(daemon.port)
            assert good.recv()[0] == A_CNXN
            assert run(good, "shell:echo hi", 1) == b"hi\n"
            newcomer = raw_host(daemon.port)  # every connection is taken: one of the greedy ones makes way
            assert newcomer.recv()[0] == A_CNXN
            assert run(newcomer, "shell:echo still", 1) == b"still\n"
            assert run(good, "shell:echo hi", 2) == b"hi\n"  # the well-behaved client was not the one dropped
            assert daemon.streams <= limits.max_streams
        finally:
            for host in [*greedy, good, newcomer]:
                if host is not None:
                    host.close()
    assert any("more than its share of 2" in r.getMessage() for r in caplog.records)


def test_one_connection_opens_at_most_its_quota_of_streams():
    limits = ServeLimits(client_streams=3)
    phone = ServedPhone("000", noise=False, limits=limits)
    with AdbDaemon(phone) as daemon:
        host = raw_host(daemon.port)
        try:
            assert host.recv()[0] == A_CNXN
            for stream in range(1, 5):
                host.send(A_OPEN, stream, 0, b"shell:sleep 100\0")
            answers = [host.recv()[0] for _ in range(4)]
            assert answers == [A_OKAY] * 3 + [A_CLSE] and daemon.streams == 3
            other = raw_host(daemon.port)  # another client is not counted against it
            try:
                assert other.recv()[0] == A_CNXN
                assert run(other, "shell:echo hi") == b"hi\n"
            finally:
                other.close()
        finally:
            host.close()


@pytest.mark.parametrize("field", ["client_streams", "client_pushes", "client_buffer_bytes", "max_buffer_bytes"])
def test_quotas_are_checked(field):
    with pytest.raises(VluiError, match=field):
        ServeLimits(**{field: 0})


# ---------------------------------------------------------------------------------------------- reboot
def test_adb_reboot_reboots_the_phone():
    """Issue 34: ``adb reboot`` answered ``error: closed``. Now the connection drops and the phone comes back on its
    snapshot, registered again with the adb server."""
    with PrivateAdb("000", noise=False) as pa:
        def adb(*args: str) -> str:
            out = pa.adb("-s", pa.serial, *args, timeout=60)
            assert out.returncode == 0, out
            return out.stdout

        adb("shell", "setprop debug.before_reboot 1; echo hi >/data/local/tmp/f")
        other = RawHost(pa.daemon.port)  # another client, with a command streaming
        try:
            assert other.recv()[0] == A_CNXN
            other.send(A_OPEN, 1, 0, b"shell:logcat\0")
            assert other.recv()[0] == A_OKAY
            adb("reboot")
            # every connection drops, this one too, as a device's reboot drops them (docs/security.md)
            other.sock.settimeout(30)
            with pytest.raises((struct.error, ConnectionError)):  # the end of the stream, not a time-out
                while True:
                    other.recv()  # logcat's lines, until the connection drops
        finally:
            other.close()
        adb("wait-for-device")
        # the property and the file were not on the snapshot
        assert adb("shell", "getprop debug.before_reboot; ls /data/local/tmp; getprop sys.boot_completed") == "\n1\n"
