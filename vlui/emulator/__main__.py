"""``python -m vlui.emulator``: work with real Android emulators.

  build-snapshots [IDS...] [--split train|test|all]   give a running Android 10 emulator each snapshot's
                  --serial SERIAL [--adb-port 5037]   configuration and save it as an emulator snapshot named
                  [--console-port N]                  by its id (see docs/adb.md, "Building snapshots on an
                                                      emulator")
  build-snapshots [IDS...] --print [--files DIR]      print the adb commands instead, without a device; --files
                                                      writes the files they push into DIR

IDS are snapshot ids of envs/, generated ids (gen-0-17), snapshot files, or random:N (N generated configurations of
--seed, as env.snapshots=random:N draws them). Without IDS, and for random:N, every snapshot whose device has the
emulator's screen size is built; the others are skipped with a note. What a device cannot be given (a generated
configuration's Wi-Fi bars and notifications, a rectangle clock dial) is listed and left out.
"""

from __future__ import annotations

import argparse
import sys

from vlui.adb.device import AdbDevice
from vlui.android import generate
from vlui.android.snapshot import load_snapshot, snapshot_ids, snapshot_refs
from vlui.emulator.build import build_steps, not_built, run_steps, transcript, write_files
from vlui.errors import VluiError, tool_status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vlui.emulator", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("build-snapshots", help="build snapshots of envs/ on a running Android 10 emulator")
    p.add_argument("ids", nargs="*", metavar="IDS", help="snapshot ids or files (default: every one of --split)")
    p.add_argument("--split", choices=("train", "test", "all"), help="which snapshots, without IDS (default all)")
    p.add_argument("--serial", help="the emulator's adb serial, e.g. emulator-5554 (required unless --print)")
    p.add_argument("--adb-port", type=int, default=5037, help="the adb server's port (default 5037)")
    p.add_argument("--console-port", type=int, help="the emulator console's port (default: from the serial)")
    p.add_argument("--print", action="store_true", help="print the adb commands; no device is used")
    p.add_argument("--files", help="with --print: write the files the commands push into this directory")
    p.add_argument("--envs", help="directory of snapshot files (default: envs/)")
    p.add_argument("--seed", type=int, default=0, help="the generator's seed for random:N (default 0)")
    args = parser.parse_args(argv)
    return tool_status(lambda: build_snapshots(args))


def build_snapshots(args: argparse.Namespace) -> int:
    if args.ids and args.split:
        raise VluiError("give snapshot ids or --split, not both")
    if args.files and not args.print:
        raise VluiError("--files goes with --print (a build pushes its files itself)")
    if not args.print and not args.serial:
        raise VluiError("--serial is required to build on a device (or --print the commands without one)")
    sampled = any(generate.SAMPLE.fullmatch(i) for i in args.ids)
    refs = snapshot_refs(args.ids, args.seed, envs_dir=args.envs) if args.ids else snapshot_ids(args.split or "all",
                                                                                                 args.envs)
    snaps = [load_snapshot(ref, args.envs) for ref in refs]
    for snap in snaps:
        for what in not_built(snap):
            print(f"note: {snap.id}: not built: {what}", file=sys.stderr)

    if args.print:
        for snap in snaps:
            steps = build_steps(snap)
            print(f"# ---- snapshot {snap.id} ({snap.device_name}, {snap.size[0]}x{snap.size[1]}) -> emulator snapshot "
                  f"{snap.id}")
            print(transcript(steps, args.serial or "emulator-5554"))
            if args.files:
                write_files(steps, args.files)
        if not args.files:
            print("note: the pushed wallpaper files are not written; add --files DIR to write them", file=sys.stderr)
        return 0

    device = AdbDevice(args.serial, adb_host="127.0.0.1", adb_port=args.adb_port, console_port=args.console_port)
    try:
        if not args.ids or sampled:  # a whole split or a sample: build those made for this emulator's screen
            fits = [s for s in snaps if s.size == device.size]
            for snap in snaps:
                if snap not in fits:
                    print(f"skip {snap.id}: its {snap.device_name} screen is {snap.size[0]}x{snap.size[1]}, the "
                          f"emulator's {device.size[0]}x{device.size[1]}", file=sys.stderr)
            if not fits:
                raise VluiError(f"no snapshot of split {args.split or 'all'} has the emulator's screen size "
                                f"{device.size[0]}x{device.size[1]}")
            snaps = fits
        for snap in snaps:
            def progress(number, total, step, sid=snap.id):
                print(f"{sid} [{number}/{total}] {step.why}: {step.command.splitlines()[0]}", flush=True)

            run_steps(build_steps(snap), device, progress)
            print(f"saved emulator snapshot {snap.id}", flush=True)
    finally:
        device.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
