"""The simulated phone's emulator console: the emulator's wording and auth flow on a raw socket, and
``adb -s emulator-P emu ...`` with the real adb client."""

from __future__ import annotations

import socket
import stat
import threading
import time

import pytest

from vlui.served.console import EmulatorConsole
from vlui.served.phone import ServedPhone
from vlui.served.private_adb import PrivateAdb

WELCOME = ["Android Console: type 'help' for a list of commands", "OK"]


class ConsoleClient:
    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.rfile = self.sock.makefile("rb")

    def answer(self) -> list[str]:
        """Lines up to and including the one that ends an answer (OK or KO: ...)."""
        lines = []
        while True:
            raw = self.rfile.readline()
            assert raw.endswith(b"\r\n"), (lines, raw)
            lines.append(raw[:-2].decode())
            if lines[-1] == "OK" or lines[-1].startswith(("KO:", "OK:")):
                return lines

    def ask(self, line: str) -> list[str]:
        self.sock.sendall(line.encode() + b"\r\n")
        return self.answer()

    def close(self) -> None:
        self.rfile.close()
        self.sock.close()


@pytest.fixture
def phone():
    return ServedPhone("000", noise=False)


def test_authentication(phone, tmp_path):
    token_path = tmp_path / ".emulator_console_auth_token"
    with EmulatorConsole(phone, token_path=token_path) as console:
        token = token_path.read_text()
        assert token and stat.S_IMODE(token_path.stat().st_mode) == 0o600  # made as the emulator makes it
        client = ConsoleClient(console.port)
        try:
            assert client.answer() == ["Android Console: Authentication required",
                                       "Android Console: type 'auth <auth_token>' to authenticate",
                                       "Android Console: you can find your <auth_token> in ", f"'{token_path}'", "OK"]
            assert client.ask("avd name") == ["KO: unknown command, try 'help'"]
            assert "    auth             user authentication for the emulator console" in client.ask("help")
            assert client.ask("auth wrong") == ["KO: authentication token does not match ~/.emulator_console_auth_token"]
            assert client.ask(f"auth {token}") == WELCOME
            assert client.ask("avd name") == ["Pixel_3_API_29", "OK"]
            assert client.ask("avd status") == ["virtual device is running", "OK"]
            assert client.ask("frobnicate") == ["KO: unknown command, try 'help'"]
            client.sock.sendall(b"quit\r\n")
            assert client.rfile.read() == b""  # closed
        finally:
            client.close()


def test_an_empty_token_file_turns_authentication_off(phone, tmp_path):
    token_path = tmp_path / "token"
    token_path.write_text("")
    with EmulatorConsole(phone, token_path=token_path) as console:
        client = ConsoleClient(console.port)
        try:
            assert client.answer() == WELCOME
            assert client.ask("ping") == ["I am alive!", "OK"]
        finally:
            client.close()


def test_gsm_signal_profile_sets_the_bars_the_status_bar_shows(phone, tmp_path):
    (tmp_path / "token").write_text("")
    with EmulatorConsole(phone, token_path=tmp_path / "token") as console:
        client = ConsoleClient(console.port)
        try:
            client.answer()
            assert client.ask("gsm signal-profile 1") == ["OK"] and phone.device.state.signal_level == 1
            assert any(n.icon == "glyph:signal_1" for n in phone.device.frame().walk())
            assert client.ask("gsm signal-profile 7") == ["KO: bad signal profile, expected a value between 0 and 4"]
            assert phone.device.state.signal_level == 1
        finally:
            client.close()


def test_snapshot_commands(phone, tmp_path):
    (tmp_path / "token").write_text("")
    with EmulatorConsole(phone, token_path=tmp_path / "token") as console:
        client = ConsoleClient(console.port)
        try:
            client.answer()
            phone.files["/sdcard/Download/a.txt"] = b"kept"
            assert client.ask("avd snapshot save mine") == ["OK"]
            table = client.ask("avd snapshot list")
            assert table[:2] == ["List of snapshots present on all disks:",
                                 "ID        TAG                 VM SIZE                DATE       VM CLOCK"]
            assert table[-1] == "OK"
            tags = [row.split()[1] for row in table[2:-1]]
            assert tags[0] == "mine" and {"000", "030", "109"} <= set(tags)

            assert client.ask("avd snapshot load 100") == ["OK"]
            assert phone.device.snapshot.id == "100" and "/sdcard/Download/a.txt" not in phone.files
            assert client.ask("avd snapshot load mine") == ["OK"]
            assert phone.device.snapshot.id == "000" and phone.files["/sdcard/Download/a.txt"] == b"kept"
            assert client.ask("avd snapshot delete mine") == ["OK"]
            assert client.ask("avd snapshot load mine")[0].startswith("KO: unknown snapshot 'mine'")
            assert client.ask("avd snapshot delete mine") == ["KO: snapshot 'mine' not found"]
            assert client.ask("avd snapshot load") == ["KO: 'avd snapshot load' takes one snapshot name"]
        finally:
            client.close()


# ---------------------------------------------------------------------------------------------- adb emu
def test_adb_emu_loads_a_snapshot(private_adb):
    phone, serial = private_adb.phone, private_adb.serial
    assert phone.device.snapshot.id == "000"
    ready, woke = threading.Event(), threading.Event()

    def log_reader() -> None:  # as a streaming logcat waits for new lines
        with phone.log_changed:
            ready.set()
            if phone.log_changed.wait(10):
                woke.set()

    reader = threading.Thread(target=log_reader)
    reader.start()
    ready.wait(5)
    try:
        out = private_adb.adb("-s", serial, "emu", "avd", "snapshot", "load", "100")
        assert (out.returncode, out.stdout) == (0, "OK\n")
        assert phone.device.snapshot.id == "100"
        reader.join(10)
        assert woke.is_set()
        assert private_adb.adb("-s", serial, "emu", "avd", "name").stdout == "Pixel_3_API_29\nOK\n"
        out = private_adb.adb("-s", serial, "emu", "avd", "snapshot", "load", "nope").stdout
        assert out.startswith("KO: unknown snapshot 'nope'")
        assert phone.device.snapshot.id == "100"
    finally:
        phone.load_snapshot("000")


def test_adb_emu_kill_takes_the_phone_away():
    with PrivateAdb("000", noise=False) as pa:
        assert pa.adb("-s", pa.serial, "emu", "kill").stdout == "OK: killing emulator, bye bye\n"
        deadline = time.monotonic() + 5
        while pa.serial in pa.adb("devices").stdout and time.monotonic() < deadline:
            time.sleep(0.05)
        assert pa.serial not in pa.adb("devices").stdout


def test_adb_emu_kill_ends_the_serving_process():
    with PrivateAdb("000", mode="process", noise=False) as pa:
        assert pa.adb("-s", pa.serial, "emu", "kill").stdout == "OK: killing emulator, bye bye\n"
        assert pa.process.wait(10) == 0
        assert (pa.home / "serve.log").read_text() == ""
