"""A private adb server with the simulated phone attached: what the tests and ``python -m vlui.bench adb`` drive the
phone through, with the real ``adb`` binary (adbutils' bundled one) and adbutils.

Nothing is shared with a user's adb: the server listens on a free port of its own (never 5037), with its own
``HOME`` (where adb keeps ``.android/adbkey`` and the emulator console its auth token) and with the emulator port scan,
USB and mDNS turned off, so it neither sees nor disturbs other devices.
"""

from __future__ import annotations

import importlib.resources
import os
import random
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import adbutils

from vlui.errors import VluiError
from vlui.served.adbd import AdbDaemon
from vlui.served.console import TOKEN_FILE, EmulatorConsole
from vlui.served.phone import ServedPhone, ServeLimits

# Even console ports come from here: far from adb's 5037, the emulators' 5554-5585 and the kernel's ephemeral ports.
PORT_RANGE = (20000, 32000)
# Variables that would point adb somewhere else than our private server and home.
FOREIGN_ENV = ("ANDROID_ADB_SERVER_PORT", "ANDROID_ADB_SERVER_ADDRESS", "ADB_SERVER_SOCKET", "ANDROID_SERIAL",
               "ANDROID_USER_HOME", "ANDROID_SDK_HOME", "ANDROID_EMULATOR_HOME", "ADB_VENDOR_KEYS")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def bundled_adb() -> str:
    """The adb binary PrivateAdb runs unless told another: ``ADBUTILS_ADB_PATH`` when set, else the one bundled in the
    adbutils wheel (adb 36), whatever ``adb`` is on ``PATH`` (Debian's package is adb 29), so that installing a system
    package does not change which client the tests drive. A wheel without a bundled binary (not x86-64 Linux) leaves
    adbutils' own choice, the ``adb`` on ``PATH``."""
    named = os.environ.get("ADBUTILS_ADB_PATH")
    if named:
        return named
    bundled = importlib.resources.files("adbutils.binaries") / "adb"
    return str(bundled) if bundled.is_file() else adbutils.adb_path()


def _port_free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _random_console_port() -> int:
    return random.randrange(PORT_RANGE[0], PORT_RANGE[1], 2)


class PrivateAdb:
    """A private adb server and a served simulated phone registered with it.

    ``mode="thread"`` serves the phone from threads of this process (:attr:`phone` is the :class:`ServedPhone`);
    ``mode="process"`` runs ``python -m vlui.served`` (:attr:`process`). ``register="emulator"`` makes the phone
    ``emulator-P`` (the server is asked to connect, as an emulator asks at boot), ``register="connect"`` makes it
    ``127.0.0.1:P+1`` (``adb connect``). P is the console port; the adb transport listens on P + 1.
    ``home`` is the ``HOME`` of the adb processes (a temporary directory, removed at :meth:`close`, by default).
    ``adb_path`` is the adb binary that runs the server and :meth:`adb` (default :func:`bundled_adb`).
    """

    def __init__(self, snapshot: str = "000", *, mode: str = "thread", register: str = "emulator",
                 home: str | Path | None = None, envs_dir: str | Path | None = None, noise: bool = True,
                 timeout: float = 20.0, limits: ServeLimits = ServeLimits(), adb_path: str | None = None) -> None:
        if mode not in ("thread", "process"):
            raise VluiError(f"unknown PrivateAdb mode {mode!r}; choose from: thread, process")
        if register not in ("emulator", "connect"):
            raise VluiError(f"unknown PrivateAdb register {register!r}; choose from: emulator, connect")
        self.mode, self.timeout, self.limits = mode, timeout, limits
        self._own_home = home is None
        self.home = Path(tempfile.mkdtemp(prefix="vlui-adb-") if home is None else home)
        self.adb_path = adb_path or bundled_adb()
        self.env = {k: v for k, v in os.environ.items() if k not in FOREIGN_ENV}
        self.env.update(HOME=str(self.home), TMPDIR=str(self.home), ANDROID_ADB_LOG_PATH=str(self.home / "adb.log"),
                        ADB_EMU="0", ADB_MDNS="0", ADB_USB="0")
        self.phone: ServedPhone | None = None
        self.daemon: AdbDaemon | None = None
        self.console: EmulatorConsole | None = None
        self.process: subprocess.Popen | None = None
        self.server: subprocess.Popen | None = None
        self.adb_port = self.console_port = self.device_port = 0
        self.serial = ""
        self._closed = False
        try:
            self.home.mkdir(parents=True, exist_ok=True)
            self._start_server()
            if mode == "thread":
                self._serve_in_thread(snapshot, envs_dir, noise, register)
            else:
                self._serve_in_process(snapshot, envs_dir, noise, register)
            if register == "connect":
                self.serial = f"127.0.0.1:{self.device_port}"
                out = self.adb("connect", self.serial)
                if "connected to" not in out.stdout:
                    raise VluiError(f"adb connect {self.serial} failed: {(out.stdout + out.stderr).strip()}")
            else:
                self.serial = f"emulator-{self.console_port}"
            self._wait_for_device()
        except BaseException:
            self.close()
            raise

    # ------------------------------------------------------------------------------------------ start-up
    def _start_server(self) -> None:
        """``adb server nodaemon`` in the foreground, as our child, so that close() can always stop it."""
        for _ in range(3):
            port = free_port()
            log = open(self.home / "adb-server.log", "ab")
            self.server = subprocess.Popen([self.adb_path, "-P", str(port), "server", "nodaemon"], env=self.env,
                                           stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
            log.close()
            deadline = time.monotonic() + self.timeout
            while time.monotonic() < deadline and self.server.poll() is None:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    self.adb_port = port
                    return
                except OSError:
                    time.sleep(0.02)
            self._stop_server()
        raise VluiError(f"the private adb server did not start: {self._log_tail('adb-server.log')}")

    def _serve_in_thread(self, snapshot: str, envs_dir: str | Path | None, noise: bool, register: str) -> None:
        self.phone = ServedPhone(snapshot, envs_dir, noise=noise, limits=self.limits)
        for _ in range(50):
            port = _random_console_port()
            try:
                console = EmulatorConsole(self.phone, port, token_path=self.home / TOKEN_FILE, on_kill=self._killed)
            except VluiError:
                continue
            try:
                self.daemon = AdbDaemon(self.phone, port + 1)
            except VluiError:
                console.close()
                continue
            self.console, self.console_port, self.device_port = console, port, port + 1
            break
        else:
            raise VluiError(f"found no free pair of ports in {PORT_RANGE} for the simulated phone")
        if register == "emulator":
            self.daemon.register(self.adb_port)

    def _killed(self) -> None:
        """The console's ``kill``: the emulator is gone, so is its adb transport."""
        if self.daemon is not None:
            self.daemon.close()
        if self.phone is not None:
            self.phone.closed.set()
            self.phone.changed()

    def _serve_in_process(self, snapshot: str, envs_dir: str | Path | None, noise: bool, register: str) -> None:
        for _ in range(5):
            port = _random_console_port()
            if not (_port_free(port) and _port_free(port + 1)):
                continue
            cmd = [sys.executable, "-m", "vlui.served", "--snapshot", str(snapshot), "--port", str(port + 1),
                   "--console-port", str(port)]
            cmd += ["--adb-server-port", str(self.adb_port)] if register == "emulator" else []
            cmd += ["--envs", str(envs_dir)] if envs_dir else []
            cmd += [] if noise else ["--no-noise"]
            lim = self.limits
            cmd += ["--storage-mib", str(lim.storage_bytes >> 20), "--sql-timeout", str(lim.sql_timeout_s),
                    "--max-connections", str(lim.max_connections), "--max-streams", str(lim.max_streams),
                    "--client-streams", str(lim.client_streams)]
            cmd += [] if lim.idle_timeout_s is None else ["--idle-timeout", str(lim.idle_timeout_s)]
            with open(self.home / "serve.log", "w") as log:  # its stderr: read when it fails
                self.process = subprocess.Popen(cmd, env=self.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                                stderr=log, text=True)
            line = self._first_line(self.process)
            if line.startswith("serving"):
                self.console_port, self.device_port = port, port + 1
                return
            err = self._stop_process()
            if "in use" not in err:
                raise VluiError(f"python -m vlui.served failed: {err.strip() or line.strip() or 'no output'}")
        raise VluiError(f"found no free pair of ports in {PORT_RANGE} for the simulated phone")

    def _first_line(self, proc: subprocess.Popen) -> str:
        """The first line the server prints ('' if it exits or says nothing within the timeout)."""
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdout, selectors.EVENT_READ)
            if not sel.select(self.timeout):
                return ""
        return proc.stdout.readline()

    def _wait_for_device(self) -> None:
        deadline = time.monotonic() + self.timeout
        client = self.client()
        state = "absent"
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                raise VluiError(f"python -m vlui.served exited: {self._stop_process().strip()}")
            states = {d.serial: d.state for d in client.list()}
            state = states.get(self.serial, "absent")
            if state == "device":
                return
            time.sleep(0.02)
        raise VluiError(f"the simulated phone {self.serial} did not come online in {self.timeout:g} s "
                        f"(state: {state}); adb server log: {self._log_tail('adb-server.log')}")

    def _log_tail(self, name: str, lines: int = 5) -> str:
        try:
            return " | ".join((self.home / name).read_text(errors="replace").strip().splitlines()[-lines:])
        except OSError:
            return "(no log)"

    # ------------------------------------------------------------------------------------------ use
    def adb(self, *args: str, timeout: float = 60.0, text: bool = True, input: str | bytes | None = None,
            env_extra: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        """Run ``adb -P <our port> ARGS`` with our environment (plus ``env_extra``); output captured (bytes if
        ``text=False``)."""
        return subprocess.run([self.adb_path, "-P", str(self.adb_port), *args], env={**self.env, **(env_extra or {})},
                              capture_output=True, text=text, timeout=timeout, input=input)

    def client(self) -> adbutils.AdbClient:
        return adbutils.AdbClient(host="127.0.0.1", port=self.adb_port)

    def device(self) -> adbutils.AdbDevice:
        """The phone as an adbutils device."""
        return self.client().device(self.serial)

    # ------------------------------------------------------------------------------------------ shutdown
    def _stop_server(self) -> None:
        if self.server is None:
            return
        if self.server.poll() is None and self.adb_port:
            try:
                self.adb("kill-server", timeout=10)
            except (OSError, subprocess.SubprocessError):
                pass
        try:
            self.server.wait(5)
        except subprocess.TimeoutExpired:
            self.server.kill()
            self.server.wait()
        self.server = None

    def _stop_process(self) -> str:
        """Stop the serving subprocess (SIGTERM, then SIGKILL); return what it wrote on stderr."""
        proc, self.process = self.process, None
        if proc is None:
            return ""
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        try:
            proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
        try:
            return (self.home / "serve.log").read_text(errors="replace")
        except OSError:
            return ""

    def close(self) -> None:
        """Stop the adb server and the phone and remove the temporary home. Safe to call twice, or after a failed
        start."""
        if self._closed:
            return
        self._closed = True
        try:
            self._stop_server()
        finally:
            if self.console is not None:
                self.console.close()
            self._killed()
            self._stop_process()
            if self._own_home:
                shutil.rmtree(self.home, ignore_errors=True)

    def __enter__(self) -> PrivateAdb:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:  # a forgotten close() must not leave an adb server running
        if not getattr(self, "_closed", True):
            try:
                self.close()
            except Exception:  # at interpreter exit modules may already be gone
                pass
