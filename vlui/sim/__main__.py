"""``python -m vlui.sim``: look at the simulated phone from the command line.

  screenshot  SNAPSHOT [--out F.png] [--size HxW]    the home screen of a snapshot (id or file)
  xml         SNAPSHOT                               its uiautomator XML
  sheet       [SNAPSHOTS...] [--split all] --out F   a contact sheet of home screens (B-MoCA's Figure 2)
  make-envs   CSV [--envs DIR]                       write the B-MoCA snapshot files from their table
  serve       [--snapshot 000] [--port 5555]         the phone over ADB and its emulator console, on loopback
"""

from __future__ import annotations

import argparse
import logging
import sys

from vlui.errors import VluiError
from vlui.sim.served import ServeLimits


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vlui.sim", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("screenshot", help="save a snapshot's home screen as PNG")
    p.add_argument("snapshot")
    p.add_argument("--out", default="screen.png")
    p.add_argument("--size", help="HxW observation size instead of full resolution, e.g. 256x128")
    p = sub.add_parser("xml", help="print a snapshot's home-screen uiautomator XML")
    p.add_argument("snapshot")
    p = sub.add_parser("sheet", help="contact sheet of home screens")
    p.add_argument("snapshots", nargs="*", help="ids or files (default: every snapshot of --split)")
    p.add_argument("--split", default="all", help="train | test | all")
    p.add_argument("--columns", type=int, default=9)
    p.add_argument("--out", default="contact_sheet.png")
    p = sub.add_parser("make-envs", help="write envs/*.yaml from the B-MoCA environment table (CSV)")
    p.add_argument("csv")
    p.add_argument("--envs", default=None)
    p = sub.add_parser("serve", help="serve a simulated phone over ADB and its emulator console on loopback")
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
    p.add_argument("--idle-timeout", type=float, default=None,
                   help="drop a connection silent this many seconds with nothing running (default: never, as adbd)")
    args = parser.parse_args(argv)
    try:
        return run(args)
    except VluiError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2


def run(args: argparse.Namespace) -> int:
    if args.cmd == "serve":
        return serve(args)

    from PIL import Image

    from vlui.sim import contact_sheet
    from vlui.sim.phone import SimDevice
    from vlui.sim.snapshot import ENVS_DIR, bmoca_snapshots, snapshot_ids, write_snapshots

    if args.cmd == "screenshot":
        dev = SimDevice(args.snapshot)
        if args.size:
            h, w = (int(v) for v in args.size.lower().split("x"))
            arr = dev.observation(h, w)
        else:
            arr = dev.screenshot()
        Image.fromarray(arr).save(args.out)
        print(args.out)
    elif args.cmd == "xml":
        print(SimDevice(args.snapshot).ui_xml())
    elif args.cmd == "sheet":
        ids = args.snapshots or snapshot_ids(args.split)
        contact_sheet.home_screens(ids, columns=args.columns).save(args.out)
        print(f"{args.out}: {len(ids)} snapshots")
    elif args.cmd == "make-envs":
        paths = write_snapshots(bmoca_snapshots(args.csv), args.envs or ENVS_DIR)
        print(f"wrote {len(paths)} snapshot files to {paths[0].parent}")
    return 0


def serve(args: argparse.Namespace) -> int:
    """Serve until Ctrl-C, SIGTERM or the console's ``kill``; then close every connection and exit 0."""
    import signal
    import threading

    from vlui.sim.adbd import AdbDaemon, register_emulator
    from vlui.sim.console import EmulatorConsole
    from vlui.sim.served import ServedPhone

    console_port = args.port - 1 if args.console_port is None else args.console_port
    for name, port in (("--port", args.port), ("--console-port", console_port)):
        if not 0 < port < 65536:
            raise VluiError(f"{name} {port} is not a TCP port (1-65535)")
    if console_port == args.port:
        raise VluiError(f"--console-port and --port are both {args.port}; give them different ports")
    limits = ServeLimits(storage_bytes=args.storage_mib << 20 if args.storage_mib >= 0 else args.storage_mib,
                         sql_timeout_s=args.sql_timeout, max_connections=args.max_connections,
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
            register_emulator(args.port, args.adb_server_port)
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


if __name__ == "__main__":
    sys.exit(main())
