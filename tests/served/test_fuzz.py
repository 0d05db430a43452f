"""Both served ports under hostile input: random bytes, truncated and oversized packets, wrong checksums, half-open
and silent connections, too many clients. Each bad connection is dropped with one log line; the server keeps serving
well-behaved clients and leaks no thread."""

from __future__ import annotations

import logging
import socket
import struct
import threading
import time

import numpy as np
import pytest

from tests.served.test_adbd import RawHost
from vlui.served.adbd import A_CNXN, A_OKAY, A_OPEN, A_WRTE, AdbDaemon
from vlui.served.console import EmulatorConsole
from vlui.served.phone import ServedPhone, ServeLimits

LIMITS = ServeLimits(handshake_timeout_s=0.3, auth_timeout_s=0.3, idle_timeout_s=0.6, max_connections=6,
                     max_streams=4)


@pytest.fixture
def served(tmp_path):
    phone = ServedPhone("000", noise=False, limits=LIMITS)
    baseline = threading.active_count()
    token = tmp_path / "token"
    token.write_text("secret")
    with AdbDaemon(phone) as daemon, EmulatorConsole(phone, token_path=token) as console:
        yield daemon, console
    deadline = time.monotonic() + 5
    while threading.active_count() > baseline and time.monotonic() < deadline:
        time.sleep(0.02)
    assert threading.active_count() == baseline, [t.name for t in threading.enumerate()]


def header(command: int, arg0: int, arg1: int, length: int, check: int = 0, magic: int | None = None) -> bytes:
    return struct.pack("<6I", command, arg0, arg1, length, check, command ^ 0xFFFFFFFF if magic is None else magic)


def connect(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=5)


def closed_by_server(sock: socket.socket, within: float = 3.0) -> bool:
    """Whether the server hangs up on ``sock`` (what it sent before that is skipped)."""
    sock.settimeout(within)
    try:
        while sock.recv(65536):
            pass
        return True
    except (TimeoutError, socket.timeout):
        return False
    except OSError:  # reset
        return True
    finally:
        sock.close()


def still_serves(daemon: AdbDaemon, console: EmulatorConsole) -> None:
    host = RawHost(daemon.port)
    try:
        assert host.recv()[0] == A_CNXN
        host.send(A_OPEN, 1, 0, b"shell:getprop ro.build.version.sdk\0")
        assert host.recv()[0] == A_OKAY
        command, _, _, data = host.recv()
        assert (command, data) == (A_WRTE, b"29\n")
    finally:
        host.close()
    with connect(console.port) as sock:
        rfile = sock.makefile("rb")
        while rfile.readline() != b"OK\r\n":
            pass
        sock.sendall(b"auth secret\r\nping\r\n")
        replies = [rfile.readline() for _ in range(4)]
        assert replies[2:] == [b"I am alive!\r\n", b"OK\r\n"]


def dropped_lines(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if "dropped the connection" in r.getMessage()
            or "refused a connection" in r.getMessage()]


def test_the_adb_port_drops_bad_packets_with_one_line_each(served, caplog):
    daemon, console = served
    rng = np.random.default_rng(0)
    caplog.set_level(logging.WARNING)
    bad = []
    for size in (24, 100, 4096, 70_000):  # random bytes: no valid header
        bad.append(rng.bytes(size))
    bad.append(header(A_CNXN, 0x01000001, 4096, 2 << 20))  # oversized
    bad.append(header(A_CNXN, 0x01000000, 4096, 5, check=12345) + b"host:")  # wrong checksum on an old host
    bad.append(header(A_CNXN, 0x01000001, 4096, 1000) + b"host::")  # truncated, then silent
    bad.append(b"CNXN")  # half a header, then silent
    bad.append(b"")  # connected, never a word
    for payload in bad:
        sock = connect(daemon.port)
        sock.sendall(payload)
        assert closed_by_server(sock), payload[:30]
        still_serves(daemon, console)
    lines = dropped_lines(caplog)
    assert len(lines) == len(bad), lines
    assert all(line.startswith("adb transport: dropped the connection from 127.0.0.1:") for line in lines)
    assert any("bad magic" in line for line in lines) and any("wrong checksum" in line for line in lines)
    assert any("2097152-byte packet" in line for line in lines) and any("no CNXN" in line for line in lines)


def test_an_online_host_that_goes_quiet_is_dropped_only_when_nothing_runs(served, caplog):
    daemon, _ = served
    caplog.set_level(logging.WARNING)
    host = RawHost(daemon.port)
    assert host.recv()[0] == A_CNXN
    host.send(A_OPEN, 1, 0, b"shell:sleep 1; echo done\0")  # quiet for longer than the idle limit, but running
    assert host.recv()[0] == A_OKAY
    command, stream, _, data = host.recv()
    assert (command, data) == (A_WRTE, b"done\n")
    host.send(A_OKAY, 1, stream)
    assert closed_by_server(host.sock, within=3)
    host.close()
    assert any("idle for 0.6 s" in line for line in dropped_lines(caplog))


def test_the_console_drops_garbage_long_lines_and_silence(served, caplog):
    daemon, console = served
    caplog.set_level(logging.WARNING)
    rng = np.random.default_rng(1)
    for payload in (rng.bytes(300), b"a" * 10_000, b"", b"auth wrong\r\n"):
        sock = connect(console.port)
        sock.sendall(payload)
        assert closed_by_server(sock), payload[:30]
    still_serves(daemon, console)
    lines = [line for line in dropped_lines(caplog) if line.startswith("emulator console")]
    assert len(lines) == 4, lines
    assert sum("longer than 4096 bytes" in line for line in lines) == 1


def test_connections_and_streams_are_capped(served, caplog):
    daemon, console = served
    caplog.set_level(logging.WARNING)
    hosts = [RawHost(daemon.port) for _ in range(LIMITS.max_connections)]
    try:
        for host in hosts:
            assert host.recv()[0] == A_CNXN
        extra = connect(daemon.port)
        assert closed_by_server(extra, within=1)
        host = hosts[0]
        for stream in range(1, LIMITS.max_streams + 2):  # streams that run until cancelled: one too many
            host.send(A_OPEN, stream, 0, b"shell:sleep 30\0")
        answers = [host.recv() for _ in range(LIMITS.max_streams + 1)]
        assert sum(a[0] == A_OKAY for a in answers) == LIMITS.max_streams
        assert answers[-1][0] != A_OKAY and daemon.streams == LIMITS.max_streams
    finally:
        for host in hosts:
            host.close()
    console_clients = [connect(console.port) for _ in range(LIMITS.max_connections)]
    try:
        with connect(console.port) as extra:
            assert extra.makefile("rb").readline() == b"KO: too many console connections\r\n"
    finally:
        for sock in console_clients:
            sock.close()
    deadline = time.monotonic() + 3
    while (daemon.connections or daemon.streams) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert daemon.streams == 0
    still_serves(daemon, console)
    refused = [line for line in dropped_lines(caplog) if "refused a connection" in line]
    assert len(refused) == 2
    assert any("refused service 'shell:sleep 30'" in r.getMessage() for r in caplog.records)
