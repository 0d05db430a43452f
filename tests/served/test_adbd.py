"""The simulated phone over ADB: the device side of the protocol, checked byte by byte on the wire and driven by the
real adb binary (adbutils' bundled one, through a private server) and by adbutils."""

from __future__ import annotations

import os
import signal
import socket
import struct
import subprocess
import threading
import time

import numpy as np
import pytest
from adbutils import AdbError

from tests.conftest import run_python
from tests.served.conftest import ProbeShell, blob
from vlui.errors import VluiError
from vlui.served.adbd import A_CLSE, A_CNXN, A_OKAY, A_OPEN, A_WRTE, AdbDaemon
from vlui.served.console import EmulatorConsole
from vlui.served.phone import ServedPhone
from vlui.served.private_adb import PrivateAdb, free_port

SCREEN_BYTES = 1080 * 2160 * 4 + 16  # a raw 1080x2160 screencap


def adb_ok(pa: PrivateAdb, *args: str, **kwargs) -> subprocess.CompletedProcess:
    out = pa.adb(*args, **kwargs)
    assert out.returncode == 0, (args, out.stdout, out.stderr)
    return out


# ---------------------------------------------------------------------------------------------- the wire protocol
class RawHost:
    """A minimal adb host speaking to :class:`AdbDaemon` directly, checking every header it receives."""

    def __init__(self, port: int, version: int = 0x01000001, max_data: int = 1 << 20) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.rfile = self.sock.makefile("rb")
        self.version = version
        self.send(A_CNXN, version, max_data, b"host::features=shell_v2,cmd\0")

    def send(self, command: int, arg0: int, arg1: int, data: bytes = b"") -> None:
        self.sock.sendall(struct.pack("<6I", command, arg0, arg1, len(data), sum(data), command ^ 0xFFFFFFFF) + data)

    def recv(self) -> tuple[int, int, int, bytes]:
        command, arg0, arg1, length, check, magic = struct.unpack("<6I", self.rfile.read(24))
        assert magic == command ^ 0xFFFFFFFF
        data = self.rfile.read(length)
        assert len(data) == length
        if self.version < 0x01000001:
            assert check == sum(data)
        return command, arg0, arg1, data

    def close(self) -> None:
        self.rfile.close()
        self.sock.close()


@pytest.fixture(scope="module")
def daemon():
    phone = ServedPhone("000", noise=False)
    with AdbDaemon(phone, shell=ProbeShell) as daemon:
        yield daemon


def test_handshake_banner_and_a_command_for_an_old_host(daemon):
    host = RawHost(daemon.port, version=0x01000000, max_data=4096)  # before checksums could be left out
    try:
        command, version, max_data, banner = host.recv()
        assert (command, version, max_data) == (A_CNXN, 0x01000000, 4096)
        kind, props = banner.decode().split("::")
        fields = dict(item.split("=", 1) for item in props.split(";"))
        assert kind == "device"
        assert fields["ro.product.model"] == "Pixel 3" and fields["ro.product.device"] == "generic_x86"
        assert fields["features"].split(",") == ["shell_v2", "fixed_push_mkdir"]  # the legacy shell: works too

        host.send(A_OPEN, 7, 0, b"shell:echo hi\0")
        command, local, remote, _ = host.recv()
        assert (command, remote) == (A_OKAY, 7) and local > 0
        assert host.recv() == (A_WRTE, local, 7, b"hi\n")
        host.send(A_OKAY, 7, local)
        assert host.recv() == (A_CLSE, local, 7, b"")

        host.send(A_OPEN, 8, 0, b"frobnicate:\0")
        assert host.recv() == (A_CLSE, 0, 8, b"")  # an unknown service is refused
    finally:
        host.close()


def test_output_is_chunked_to_the_hosts_payload_and_waits_for_okay(daemon):
    host = RawHost(daemon.port, max_data=4096)
    try:
        assert host.recv()[:3] == (A_CNXN, 0x01000001, 4096)
        host.send(A_OPEN, 1, 0, b"exec:blob 10000 3\0")
        _, local, _, _ = host.recv()
        received = b""
        while True:
            command, _, _, data = host.recv()
            if command == A_CLSE:
                break
            assert command == A_WRTE and len(data) <= 4096
            received += data
            host.sock.settimeout(0.05)  # nothing more may come before our OKAY
            with pytest.raises(socket.timeout):
                host.sock.recv(1, socket.MSG_PEEK)
            host.sock.settimeout(10)
            host.send(A_OKAY, 1, local)
        assert received == blob(10000, 3)
    finally:
        host.close()


def test_dropping_the_connection_cancels_its_streams(daemon):
    ProbeShell.ticks_ended.clear()
    host = RawHost(daemon.port)
    host.recv()
    host.send(A_OPEN, 1, 0, b"shell:ticks\0")
    assert host.recv()[0] == A_OKAY
    assert host.recv()[3] == b"tick 0\n"
    host.close()
    assert ProbeShell.ticks_ended.wait(5)


def test_only_loopback_is_served():
    phone = ServedPhone("000", noise=False)
    with pytest.raises(VluiError, match="loopback"):
        AdbDaemon(phone, 0, host="0.0.0.0")
    with pytest.raises(VluiError, match="loopback"):
        EmulatorConsole(phone, 0, host="192.168.1.2", token_path=os.devnull)


# ---------------------------------------------------------------------------------------------- the real adb
def test_registered_as_an_emulator(private_adb):
    lines = adb_ok(private_adb, "devices", "-l").stdout.splitlines()
    (line,) = [x for x in lines if x.startswith(private_adb.serial + " ")]
    assert line.split()[1:] == ["device", "product:sdk_gphone_x86", "model:Pixel_3", "device:generic_x86",
                                line.split()[-1]]
    assert private_adb.serial == f"emulator-{private_adb.console_port}"
    assert private_adb.device_port == private_adb.console_port + 1


def test_adb_connect_then_shell(private_adb):
    target = f"127.0.0.1:{private_adb.device_port}"
    assert f"connected to {target}" in adb_ok(private_adb, "connect", target).stdout
    try:
        assert adb_ok(private_adb, "-s", target, "shell", "echo", "hi").stdout == "hi\n"
        assert adb_ok(private_adb, "-s", target, "exec-out", "echo", "raw").stdout == "raw\n"
    finally:
        adb_ok(private_adb, "disconnect", target)


def test_root_and_features(private_adb):
    assert adb_ok(private_adb, "-s", private_adb.serial, "root").stdout == "adbd is already running as root\n"
    assert adb_ok(private_adb, "-s", private_adb.serial, "features").stdout.split() == ["shell_v2", "fixed_push_mkdir"]


def test_adbutils_shell(private_adb):
    device = private_adb.device()
    assert device.shell("echo hello world") == "hello world"
    assert device.shell(["echo", "two words"]) == "two words"


def test_adbutils_shell2_exit_status(private_adb):
    device = private_adb.device()
    assert device.shell("echo a; echo b") == "a\nb"
    result = device.shell2("echo out")
    assert (result.output, result.returncode) == ("out\n", 0)
    assert device.shell2("no-such-command").returncode == 127


def test_interactive_shell(private_adb):
    # -tt: a terminal although stdin is a pipe (without it, the shell reads the pipe as a script: no prompt, no echo)
    out = adb_ok(private_adb, "-s", private_adb.serial, "shell", "-tt", input=b"echo inter\nexit\n", text=False).stdout
    assert out.startswith(b"generic_x86:/ # ")
    assert b"inter\r\n" in out  # through a terminal: \n becomes \r\n


def test_unknown_service_is_refused(private_adb):
    conn = private_adb.device().open_transport()
    try:
        conn.send_command("frobnicate:")
        with pytest.raises(AdbError, match="closed"):
            conn.check_okay()
    finally:
        conn.close()


def test_big_output_is_byte_exact(private_adb):
    expected = blob(SCREEN_BYTES, 1)
    out = adb_ok(private_adb, "-s", private_adb.serial, "exec-out", "blob", str(SCREEN_BYTES), "1", text=False)
    assert out.stdout == expected
    conn = private_adb.device().shell(f"blob {SCREEN_BYTES} 1", stream=True)
    received = bytearray()
    try:
        while chunk := conn.conn.recv(1 << 20):
            received += chunk
    finally:
        conn.close()
    assert received == expected


def test_exec_out_screencap_is_the_frame(private_adb):
    phone = private_adb.phone
    out = adb_ok(private_adb, "-s", private_adb.serial, "exec-out", "screencap", text=False).stdout
    with phone.lock:
        frame = phone.device.screenshot()
    h, w, _ = frame.shape
    pixels = np.frombuffer(out[-h * w * 4:], np.uint8).reshape(h, w, 4)
    assert struct.unpack("<2I", out[:8]) == (w, h)
    assert np.array_equal(pixels[..., :3], frame)


def test_push_and_pull_with_adb(private_adb, tmp_path):
    phone, serial = private_adb.phone, private_adb.serial
    src = tmp_path / "notes.txt"
    src.write_bytes(b"shopping list\n" * 1000)
    pushed = adb_ok(private_adb, "-s", serial, "push", str(src), "/sdcard/Download/")
    assert "1 file pushed" in pushed.stdout + pushed.stderr
    assert phone.files["/sdcard/Download/notes.txt"] == src.read_bytes()
    back = tmp_path / "back.txt"
    adb_ok(private_adb, "-s", serial, "pull", "/sdcard/Download/notes.txt", str(back))
    assert back.read_bytes() == src.read_bytes()
    listing = adb_ok(private_adb, "-s", serial, "ls", "/sdcard/Download").stdout
    assert listing.split()[-1] == "notes.txt"
    missing = private_adb.adb("-s", serial, "pull", "/sdcard/nothing.txt", str(tmp_path))
    assert missing.returncode != 0 and "does not exist" in missing.stdout + missing.stderr  # adb 29: on stdout
    into_a_file = private_adb.adb("-s", serial, "push", str(src), "/sdcard/Download/notes.txt/inside.txt")
    assert into_a_file.returncode != 0 and "Not a directory" in into_a_file.stdout + into_a_file.stderr
    # the shared storage's other names reach the same files, as /sdcard links to them on a device
    adb_ok(private_adb, "-s", serial, "push", str(src), "/storage/emulated/0/Download/again.txt")
    assert phone.files["/sdcard/Download/again.txt"] == src.read_bytes()
    adb_ok(private_adb, "-s", serial, "pull", "/storage/self/primary/Download/notes.txt", str(back))
    assert back.read_bytes() == src.read_bytes()


def test_sync_with_adbutils(private_adb, tmp_path):
    phone, device = private_adb.phone, private_adb.device()
    device.sync.push(b"hello", "/data/local/tmp/hello.txt")
    assert phone.files["/data/local/tmp/hello.txt"] == b"hello"
    info = device.sync.stat("/data/local/tmp/hello.txt")
    assert (info.mode, info.size) == (0o100644, 5)
    assert device.sync.stat("/data/local/tmp").mode == 0o40755
    assert device.sync.stat("/no/such/file").mode == 0
    assert "hello.txt" in [entry.path for entry in device.sync.list("/data/local/tmp")]
    with pytest.raises(AdbError):  # FAIL (adbutils drops the message: "Not a directory")
        device.sync.push(b"x", "/data/local/tmp/hello.txt/inside")
    assert "/data/local/tmp/hello.txt/inside" not in phone.files

    phone.files["/sdcard/big.bin"] = blob(SCREEN_BYTES, 2)  # several MB: many DATA chunks and packets
    device.sync.pull("/sdcard/big.bin", tmp_path / "big.bin")
    assert (tmp_path / "big.bin").read_bytes() == phone.files["/sdcard/big.bin"]
    with pytest.raises(AdbError, match="No such file"):
        device.sync.read_bytes("/sdcard/nothing.bin")


def test_concurrent_streams(private_adb):
    device = private_adb.device()
    results: dict[int, object] = {}

    def job(i: int) -> None:
        if i % 6 == 0:
            results[i] = device.shell(f"blob 3000000 {i}", encoding=None) == blob(3000000, i)
        else:
            results[i] = device.shell(f"echo stream {i}")

    threads = [threading.Thread(target=job, args=(i,)) for i in range(18)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert results == {i: True if i % 6 == 0 else f"stream {i}" for i in range(18)}


def test_closing_a_stream_cancels_its_command(private_adb):
    ProbeShell.ticks_ended.clear()
    conn = private_adb.device().shell("ticks", stream=True)
    assert conn.conn.recv(7) == b"tick 0\n"
    conn.close()
    assert ProbeShell.ticks_ended.wait(5)

    ProbeShell.ticks_ended.clear()  # the same when the adb client goes away
    proc = subprocess.Popen([private_adb.adb_path, "-P", str(private_adb.adb_port), "-s", private_adb.serial, "shell",
                             "ticks"], env=private_adb.env, stdout=subprocess.PIPE)
    try:
        assert proc.stdout.readline() == b"tick 0\n"
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()
    assert ProbeShell.ticks_ended.wait(5)


def test_closing_a_stream_ends_a_streaming_logcat(private_adb):
    device = private_adb.device()
    conn = device.shell("logcat", stream=True)
    conn.conn.settimeout(10)
    try:
        device.shell("log -t VluiTest while logcat streams")
        received = b""
        while b"while logcat streams" not in received:
            received += conn.conn.recv(1 << 16)
        assert any(t.name == "adbd-stream:shell:logcat" for t in threading.enumerate())
    finally:
        conn.close()
    deadline = time.monotonic() + 5
    while any(t.name == "adbd-stream:shell:logcat" for t in threading.enumerate()) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not any(t.name == "adbd-stream:shell:logcat" for t in threading.enumerate())


def test_close_stops_the_server_and_frees_everything():
    pa = PrivateAdb("000", noise=False)
    server, home, ports = pa.server, pa.home, (pa.console_port, pa.device_port)
    pa.close()
    assert server.poll() is not None and not home.exists()
    for port in ports:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", port))  # free again
    pa.close()  # twice is fine


# ---------------------------------------------------------------------------------------------- python -m vlui.served
def test_serve_subprocess(tmp_path):
    with PrivateAdb("030", mode="process", home=tmp_path) as pa:
        assert pa.phone is None and pa.serial == f"emulator-{pa.console_port}"
        assert adb_ok(pa, "-s", pa.serial, "shell", "echo", "from a process").stdout == "from a process\n"
        target = f"127.0.0.1:{pa.device_port}"
        assert "connected to" in adb_ok(pa, "connect", target).stdout
        assert adb_ok(pa, "-s", target, "shell", "echo", "hi").stdout == "hi\n"
        proc = pa.process
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
        assert (tmp_path / "serve.log").read_text() == ""  # no traceback
        deadline = time.monotonic() + 5
        while pa.serial in adb_ok(pa, "devices").stdout and time.monotonic() < deadline:
            time.sleep(0.05)
        assert pa.serial not in adb_ok(pa, "devices").stdout


def test_serve_errors():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        out = run_python("-m", "vlui.served", "--port", str(port), "--console-port", str(free_port()),
                         timeout=60)
    assert out.returncode == 2
    assert out.stderr.startswith(f"error: cannot listen on 127.0.0.1:{port}") and len(out.stderr.splitlines()) == 1
    out = run_python("-m", "vlui.served", "--snapshot", "nope", "--port", str(free_port()), timeout=60)
    assert out.returncode == 2 and out.stderr.startswith("error: unknown snapshot 'nope'")
