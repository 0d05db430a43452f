"""``python -m vlui.served``: the simulated phone over ADB and its emulator console,
on loopback, until Ctrl-C, SIGTERM or the console's ``kill``."""

from __future__ import annotations

import argparse
import logging
import signal
import threading

from vlui.errors import VluiError, tool_status
from vlui.served.adbd import AdbDaemon
from vlui.served.console import EmulatorConsole
from vlui.served.phone import ServedPhone, ServeLimits


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``serve``."""
    p.add_argument("--snapshot", default="000", help="snapshot id or file to boot (default 000)")
    p.add_argument("--port", type=int, default=5555, help="the adb transport's port (default 5555)")
    p.add_argument("--console-port", type=int, help="the emulator console's port (default: --port - 1)")
    p.add_argument("--adb-server-port", type=int,
                   help="register with the adb server on 127.0.0.1:P, which names the phone emulator-<port - 1>")
    p.add_argument("--envs", default=None, help="directory of snapshot files (default: envs/)")
    p.add_argument("--no-noise", action="store_true", help="no background log noise")
    limits = ServeLimits()
    p.add_argument("--storage-mib", type=int, default=limits.storage_bytes >> 20,
                   help=f"MiB of files the phone holds (pushes, dumps, databases; default {limits.storage_bytes >> 20})")
    p.add_argument("--sql-timeout", type=float, default=limits.sql_timeout_s,
                   help=f"seconds one sqlite3 statement may run (default {limits.sql_timeout_s:g})")
    p.add_argument("--max-connections", type=int, default=limits.max_connections,
                   help=f"clients at once on each port (default {limits.max_connections})")
    p.add_argument("--max-streams", type=int, default=limits.max_streams,
                   help=f"adb streams open at once, over every client (default {limits.max_streams})")
    p.add_argument("--client-streams", type=int, default=limits.client_streams,
                   help=f"adb streams one client (one connection) may open (default {limits.client_streams})")
    p.add_argument("--idle-timeout", type=float, default=None,
                   help="drop a connection silent this many seconds with nothing running (default: never, as adbd)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vlui.served", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser)
    args = parser.parse_args(argv)
    return tool_status(lambda: serve(args))


def serve(args: argparse.Namespace) -> int:
    """Serve until Ctrl-C, SIGTERM or the console's ``kill``; then close every connection and exit 0."""
    console_port = args.port - 1 if args.console_port is None else args.console_port
    for name, port in (("--port", args.port), ("--console-port", console_port)):
        if not 0 < port < 65536:
            raise VluiError(f"{name} {port} is not a TCP port (1-65535)")
    if console_port == args.port:
        raise VluiError(f"--console-port and --port are both {args.port}; give them different ports")
    limits = ServeLimits(storage_bytes=args.storage_mib << 20 if args.storage_mib >= 0 else args.storage_mib,
                         sql_timeout_s=args.sql_timeout, max_connections=args.max_connections,
                         max_streams=args.max_streams, client_streams=args.client_streams,
                         idle_timeout_s=args.idle_timeout)
    # one line per refused or dropped client, on stderr
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    phone = ServedPhone(args.snapshot, args.envs, noise=not args.no_noise, limits=limits)
    stop = threading.Event()
    daemon = console = None
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # SIGTERM ends it as Ctrl-C does
    try:
        daemon = AdbDaemon(phone, args.port)
        console = EmulatorConsole(phone, console_port, on_kill=stop.set)
        if args.adb_server_port:
            daemon.register(args.adb_server_port)
        serial = f" or serial emulator-{console_port}" if console_port == args.port - 1 else ""
        print(f"serving the simulated phone (snapshot {phone.device.snapshot.id}) on 127.0.0.1:{args.port}, "
              f"console on {console_port}: adb connect 127.0.0.1:{args.port}{serial}", flush=True)
        while not stop.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not interrupt the shutdown
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        phone.closed.set()
        phone.changed()
        if console is not None:
            console.close()
        if daemon is not None:
            daemon.close()
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
    return 0

