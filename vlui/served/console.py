"""The emulator console of the simulated phone: the line-based TCP service an Android emulator offers on its
console port (by convention the adb port − 1), which ``adb -s emulator-PORT emu ...`` and ``telnet`` talk to.

It speaks as the emulator does: lines end in ``\\r\\n``, every answer ends in ``OK`` or ``KO: reason``, and until the
client sends ``auth <token>`` (the token in ``~/.emulator_console_auth_token``, created at random when missing; an
empty file turns authentication off) only ``help``, ``auth`` and ``quit`` work. The commands are the ones agents and
benchmarks use: ``avd name|status``, ``avd snapshot list|save|load|delete NAME``, ``ping``, ``kill``, and those
that change the phone as the emulator's hardware would: ``power``, ``geo fix``, ``sms send``, ``rotate``,
``gsm signal-profile``. No reply names a host path, but the token file's in the banner, as the emulator's does.
"""

from __future__ import annotations

import logging
import os
import re
import secrets
import socket
import threading
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path

from vlui.android.generate import parse_generated
from vlui.android.logcat import EPOCH
from vlui.android.snapshot import load_snapshot
from vlui.errors import VluiError
from vlui.served import configure
from vlui.served.adbd import LoopbackServer
from vlui.served.phone import SDK, ServedPhone

TOKEN_FILE = ".emulator_console_auth_token"
MAX_LINE = 4096  # bytes in one command line; the emulator's own commands are far shorter

log = logging.getLogger(__name__)

HELP = """Android console commands:

    help|h|?         print a list of commands
    kill             kill the emulator instance
    quit|exit        quit control session
    ping             check if the emulator is alive
    geo              Geo-location commands
    gsm              GSM related commands
    sms              SMS related commands
    power            power related commands
    avd              control virtual device execution
    rotate           rotate the screen clockwise by 90 degrees

try 'help <command>' for command-specific help"""

HELP_UNAUTHENTICATED = """Android console command help:

    help|h|?         print a list of commands
    auth             user authentication for the emulator console
    quit|exit        quit control session

try 'help <command>' for command-specific help"""

HELP_AVD = """allows you to control (e.g. start/stop) the execution of the virtual device

available sub-commands:
    avd status             query virtual device status
    avd name               query virtual device name
    avd snapshot           state snapshot commands"""

HELP_GSM = """allows you to change GSM-related settings, or to make a new inbound phone call

available sub-commands:
    gsm signal-profile     sets the signal strength profile"""

HELP_SNAPSHOT = """allows you to save and restore the virtual device state in snapshots

available sub-commands:
    avd snapshot list             list available state snapshots
    avd snapshot save             save state snapshot
    avd snapshot load             load state snapshot
    avd snapshot delete           delete state snapshot"""


HELP_POWER = """allows to change battery and AC power status

available sub-commands:
    power display          display battery and charger state
    power ac               set AC charging state
    power capacity         set battery capacity state"""

HELP_GEO = """allows you to change Geo-related settings, or to send GPS NMEA sentences

available sub-commands:
    geo fix                send a simple GPS fix"""

HELP_SMS = """allows you to simulate an inbound SMS

available sub-commands:
    sms send               send inbound SMS text message"""

HELPS = {"avd": HELP_AVD, "gsm": HELP_GSM, "power": HELP_POWER, "geo": HELP_GEO, "sms": HELP_SMS}


def signal_profile(phone: ServedPhone, args: list[str]) -> list[str]:
    """``gsm signal-profile N``: the cellular signal's strength, 0 (none) to 4 (great), as the status bar's bars."""
    if len(args) != 1 or not (args[0].isascii() and args[0].isdigit()) or not 0 <= int(args[0]) <= 4:
        return ["KO: bad signal profile, expected a value between 0 and 4"]
    with phone.lock:
        phone.device.state.signal_level = int(args[0])
        phone.device.state_changed()
    return ["OK"]


def power(phone: ServedPhone, args: list[str]) -> list[str]:
    """``power display | ac on|off | capacity N``: the emulated battery, as the emulator's console answers."""
    sub, rest = (args[0], args[1:]) if args else ("", [])
    if sub == "capacity":
        if len(rest) != 1 or not (rest[0].isascii() and rest[0].isdigit()) or not 0 <= int(rest[0]) <= 100:
            return ['KO: Usage: "capacity <percentage>"']
        configure.set_battery(phone, level=int(rest[0]))
        return ["OK"]
    if sub == "ac":
        if rest not in (["on"], ["off"]):
            return ['KO: Usage: "ac on" or "ac off"']
        configure.set_battery(phone, charging=rest[0] == "on")
        return ["OK"]
    if sub == "display":
        with phone.lock:
            st = phone.device.state
            level, charging = st.battery_level, st.charging
        status = ("Full" if level == 100 else "Charging") if charging else "Discharging"
        return [f"AC: {'online' if charging else 'offline'}", f"status: {status}", "health: Good", "present: true",
                f"capacity: {level}", "OK"]
    return ["KO: unknown command, try 'help'"]


GEO_USAGE = 'KO: Usage: "geo fix <longitude> <latitude> [<altitude> [<satellites> [<velocity>]]]"'


def geo(phone: ServedPhone, args: list[str]) -> list[str]:
    """``geo fix LONGITUDE LATITUDE [ALTITUDE [SATELLITES [VELOCITY]]]``: a GPS fix. The simulated phone has no
    location provider, so a well-formed fix is accepted and changes nothing."""
    if not 2 <= len(args) <= 5:
        return [GEO_USAGE]
    for arg in args:
        try:
            float(arg)
        except ValueError:
            return [f"KO: argument '{arg}' is not a number"]
    if len(args) >= 4 and (not (args[3].isascii() and args[3].isdigit()) or not 1 <= int(args[3]) <= 12):
        return ["KO: invalid number of satellites. Must be an integer between 1 and 12"]
    return ["OK"]


SMS_NUMBER = re.compile(r"\+?[0-9]+")


def sms(phone: ServedPhone, args: list[str]) -> list[str]:
    """``sms send NUMBER TEXT``: a text message arrives from NUMBER."""
    if len(args) < 2:
        return ["KO: missing argument, try 'sms send <phonenumber> <text message>'"]
    if not SMS_NUMBER.fullmatch(args[0]):
        return ["KO: bad phone number format, must be [+](0-9)*"]
    configure.receive_sms(phone, args[0], " ".join(args[1:]))
    return ["OK"]


def rotate(phone: ServedPhone, args: list[str]) -> list[str]:
    """``rotate``: the device turns a quarter clockwise (see :func:`vlui.served.configure.rotate`)."""
    configure.rotate(phone)
    return ["OK"]


# console commands that change the phone: command -> (its sub-command, or "" for none; what it does)
DEVICE_COMMANDS: dict[str, tuple[str, Callable[[ServedPhone, list[str]], list[str]]]] = {
    "geo": ("fix", geo), "sms": ("send", sms), "rotate": ("", rotate),
}


def ensure_token(path: str | Path) -> str:
    """The console's auth token from ``path``, created (random, mode 0600) when missing, as the emulator does.
    An empty string means authentication is off."""
    path = Path(path)
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        pass
    except OSError as err:
        raise VluiError(f"cannot read the console auth token {path}: {err.strerror}") from None
    token = secrets.token_urlsafe(12)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process made it meanwhile: use theirs
        return path.read_text().strip()
    except OSError as err:
        raise VluiError(f"cannot create the console auth token {path}: {err.strerror}") from None
    with os.fdopen(fd, "w") as f:
        f.write(token)
    return token


class EmulatorConsole(LoopbackServer):
    """Serves the emulator console for ``phone`` on ``host:port`` (port 0 picks a free one; see :attr:`port`).

    ``token_path`` defaults to ``$HOME/.emulator_console_auth_token`` of this process. ``kill`` answers, closes the
    console and calls ``on_kill`` (the owner stops the rest of the emulator there)."""

    def __init__(self, phone: ServedPhone, port: int = 0, host: str = "127.0.0.1",
                 token_path: str | Path | None = None, avd_name: str | None = None,
                 on_kill: Callable[[], None] | None = None) -> None:
        self.phone = phone
        self.token_path = Path(token_path) if token_path else Path.home() / TOKEN_FILE
        self.token = ensure_token(self.token_path)
        self.avd_name = avd_name or f"{phone.prop('ro.product.model').replace(' ', '_')}_API_{SDK}"
        self.on_kill = on_kill
        self.limits = phone.limits
        self.max_connections = phone.limits.max_connections
        self._clients: set[socket.socket] = set()
        self._threads: list[threading.Thread] = []
        super().__init__(host, port, "emulator console")

    def _accepted(self, sock: socket.socket, peer: str) -> Callable[[], None]:
        self._clients.add(sock)
        thread = threading.Thread(target=self._serve, args=(sock, peer), name="console-client", daemon=True)
        self._threads = [t for t in self._threads if t.is_alive()] + [thread]
        return thread.start

    def _client_count(self) -> int:
        return len(self._clients)

    def _refuse(self, sock: socket.socket) -> None:
        try:
            sock.sendall(b"KO: too many console connections\r\n")
        except OSError:
            pass
        sock.close()

    def close(self, timeout: float = 5.0) -> None:
        """Stop listening and disconnect every client."""
        if not self._stop():
            return
        with self._lock:
            clients, threads = list(self._clients), list(self._threads)
        for sock in clients:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        me = threading.current_thread()
        for thread in [self._thread, *threads]:
            if thread is not me:
                thread.join(timeout)

    def __enter__(self) -> EmulatorConsole:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------------------------------------ one client
    def _serve(self, sock: socket.socket, peer: str) -> None:
        killed = False
        try:
            rfile = sock.makefile("rb")

            def say(*lines: str) -> None:
                sock.sendall("".join(line + "\r\n" for line in lines).encode())

            def lines() -> Iterator[bytes]:
                """The client's lines; it is dropped (one log line) when it stalls or sends a line too long."""
                while True:
                    sock.settimeout(self.limits.idle_timeout_s if authenticated else self.limits.auth_timeout_s)
                    try:
                        raw = rfile.readline(MAX_LINE + 1)
                    except TimeoutError:
                        stalled = "authenticated" if authenticated else "not authenticated"
                        log.warning("emulator console: dropped the connection from %s: %s and silent for %g s",
                                    peer, stalled, sock.gettimeout())
                        return
                    if not raw:
                        return
                    if len(raw) > MAX_LINE:
                        say(f"KO: line longer than {MAX_LINE} bytes")
                        log.warning("emulator console: dropped the connection from %s: a line longer than %d "
                                    "bytes", peer, MAX_LINE)
                        return
                    yield raw

            authenticated = not self.token
            if authenticated:
                say("Android Console: type 'help' for a list of commands", "OK")
            else:
                say("Android Console: Authentication required",
                    "Android Console: type 'auth <auth_token>' to authenticate",
                    "Android Console: you can find your <auth_token> in ", f"'{self.token_path}'", "OK")
            for raw in lines():
                words = raw.decode("utf-8", "replace").split()
                if not words:
                    continue
                command, args = words[0], words[1:]
                if command in ("quit", "exit"):
                    return
                if command == "auth":
                    if self.token and args == [self.token]:
                        authenticated = True
                        say("Android Console: type 'help' for a list of commands", "OK")
                    else:
                        say(f"KO: authentication token does not match ~/{TOKEN_FILE}")
                elif command in ("help", "h", "?"):
                    say(*self._help(args, authenticated).split("\n"), "OK")
                elif not authenticated:
                    say("KO: unknown command, try 'help'")
                elif command == "kill":
                    say("OK: killing emulator, bye bye")
                    killed = True
                    return
                else:
                    say(*self._command(command, args))
        except OSError:
            pass
        finally:
            sock.close()
            with self._lock:
                self._clients.discard(sock)
            if killed:
                self.close()
                if self.on_kill is not None:
                    self.on_kill()

    def _help(self, args: list[str], authenticated: bool) -> str:
        if not authenticated:
            return HELP_UNAUTHENTICATED
        if args[:2] == ["avd", "snapshot"]:
            return HELP_SNAPSHOT
        return HELPS.get(args[0], HELP) if args else HELP

    def _command(self, command: str, args: list[str]) -> list[str]:
        """The answer's lines, ending in ``OK`` or ``KO: ...``."""
        if command == "ping":
            return ["I am alive!", "OK"]
        if command == "gsm" and args[:1] == ["signal-profile"]:
            return signal_profile(self.phone, args[1:])
        if command == "power":
            return power(self.phone, args)
        if command in DEVICE_COMMANDS:
            sub, run = DEVICE_COMMANDS[command]
            if not sub:
                return run(self.phone, args)
            if args[:1] == [sub]:
                return run(self.phone, args[1:])
        if command != "avd" or not args:
            return ["KO: unknown command, try 'help'"]
        sub, rest = args[0], args[1:]
        if sub == "name":
            return [self.avd_name, "OK"]
        if sub == "status":
            return ["virtual device is running", "OK"]
        if sub != "snapshot" or not rest:
            return ["KO: unknown command, try 'help'"]
        action, names = rest[0], rest[1:]
        if action == "list":
            return self._snapshot_table() + ["OK"]
        if action not in ("save", "load", "delete"):
            return ["KO: unknown command, try 'help'"]
        if len(names) != 1:
            return [f"KO: 'avd snapshot {action}' takes one snapshot name"]
        if action == "load" and not self._loadable(names[0]):
            # the snapshot code's own error names the host folder it looked in: the console names none
            return [f"KO: unknown snapshot '{names[0]}'"]
        method = {"save": self.phone.save_snapshot, "load": self.phone.load_snapshot,
                  "delete": self.phone.delete_snapshot}[action]
        try:
            method(names[0])
        except VluiError as err:
            if action != "load":
                return [f"KO: {err}"]
            # a snapshot file that does not load: why (with its host path) goes to the server's log, not the client
            log.warning("emulator console: snapshot %r does not load: %s", names[0], err)
            return [f"KO: snapshot '{names[0]}' could not be loaded"]
        return ["OK"]

    def _loadable(self, name: str) -> bool:
        """Whether ``avd snapshot load NAME`` finds a snapshot: one saved here, one of ``envs/``, or a generated one."""
        with self.phone.lock:
            names = self.phone.snapshot_names()
        return name in names or parse_generated(name) is not None

    def _snapshot_table(self) -> list[str]:
        """``avd snapshot list`` as the emulator prints it (QEMU's ``info snapshots`` layout)."""
        rows = ["List of snapshots present on all disks:",
                f"{'ID':<10}{'TAG':<20}{'VM SIZE':>7}{'DATE':>20}{'VM CLOCK':>15}"]
        phone = self.phone
        with phone.lock:
            saved = {name: EPOCH + timedelta(milliseconds=s.state.time_ms) for name, s in phone.saved.items()}
            names = phone.snapshot_names()
        for name in names:
            date = saved.get(name) or load_snapshot(name, phone.envs_dir).start_time
            rows.append(f"{'--':<10}{name:<20}{'0':>7}{f'{date:%Y-%m-%d %H:%M:%S}':>20}{'00:00:00.000':>15}")
        return rows
