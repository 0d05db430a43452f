"""The emulator console client: ``avd snapshot load|save`` over the console port (``emulator-5554`` → 5554).

The console asks for the token in ``~/.emulator_console_auth_token`` (an empty file turns authentication off). Every
read has a timeout, so a console that stops answering is an error naming the port, never a hang.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

from vlui.adb.errors import DeviceError

TOKEN_FILE = "~/.emulator_console_auth_token"


def console_port(serial: str) -> int | None:
    """The console port of an emulator serial (``emulator-5554`` → 5554), or None for other devices."""
    name, _, port = serial.partition("-")
    return int(port) if name == "emulator" and port.isdigit() else None


class EmulatorConsole:
    """A connection to an emulator console. ``command()`` returns the reply's lines before ``OK``."""

    def __init__(self, port: int, host: str = "127.0.0.1", token_file: str | Path = TOKEN_FILE,
                 timeout_s: float = 30.0) -> None:
        self.host, self.port, self.timeout_s = host, port, timeout_s
        self.token_file = Path(os.path.expanduser(str(token_file)))
        self._sock: socket.socket | None = None
        self._buf = b""

    def __enter__(self) -> EmulatorConsole:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _where(self) -> str:
        return f"emulator console {self.host}:{self.port}"

    def connect(self) -> None:
        self.close()
        try:
            self._sock = socket.create_connection((self.host, self.port), timeout=self.timeout_s)
        except OSError as err:
            raise DeviceError(f"cannot reach the {self._where()} ({err.strerror or err}); is the emulator running "
                              "with this console port?") from None
        banner = self._read_reply()
        if any("Authentication required" in line for line in banner):
            try:
                token = self.token_file.read_text().strip()
            except OSError:
                raise DeviceError(f"the {self._where()} wants the auth token from {self.token_file}, which cannot "
                                  "be read") from None
            self._send(f"auth {token}")
            self._read_reply()

    def command(self, line: str) -> list[str]:
        """Send one command; its reply lines. A ``KO:`` reply raises :class:`DeviceError` with the console's words."""
        if "\n" in line or "\r" in line:
            raise DeviceError(f"a console command is one line, not {line!r}")
        if self._sock is None:
            self.connect()
        try:
            self._send(line)
            return self._read_reply()
        except DeviceError:
            self.close()
            raise

    def close(self) -> None:
        if self._sock is not None:
            try:
                self._sock.sendall(b"quit\n")
            except OSError:
                pass
            self._sock.close()
            self._sock = None
        self._buf = b""

    # -------------------------------------------------------------------------------------------- wire
    def _send(self, line: str) -> None:
        try:
            self._sock.sendall(line.encode() + b"\n")
        except OSError as err:
            raise DeviceError(f"the {self._where()} closed the connection ({err})") from None

    def _read_reply(self) -> list[str]:
        lines: list[str] = []
        while True:
            line = self._read_line()
            if line == "OK" or line.startswith("OK:"):
                return lines
            if line.startswith("KO"):
                raise DeviceError(f"{self._where()}: {line.removeprefix('KO:').strip() or 'command failed'}")
            lines.append(line)

    def _read_line(self) -> str:
        while b"\n" not in self._buf:
            try:
                chunk = self._sock.recv(65536)
            except socket.timeout:
                raise DeviceError(f"the {self._where()} did not answer within {self.timeout_s:g} s") from None
            except OSError as err:
                raise DeviceError(f"the {self._where()} failed ({err})") from None
            if not chunk:
                raise DeviceError(f"the {self._where()} closed the connection")
            self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\n")
        return line.decode("utf-8", "replace").rstrip("\r")
