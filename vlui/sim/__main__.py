"""``python -m vlui.sim``: look at the simulated phone from the command line.

  screenshot  SNAPSHOT [--out F.png] [--size HxW]    the home screen of a snapshot (id or file)
  xml         SNAPSHOT                               its uiautomator XML
  sheet       [SNAPSHOTS...] [--split all] --out F   a contact sheet of home screens (B-MoCA's Figure 2)
  make-envs   CSV [--envs DIR]                       write the B-MoCA snapshot files from their table

The phone over ADB and its emulator console: ``python -m vlui.served``.
"""

from __future__ import annotations

import argparse
import sys

from PIL import Image

from vlui.android.snapshot import ENVS_DIR, bmoca_snapshots, snapshot_ids, write_snapshots
from vlui.errors import tool_status
from vlui.sim import contact_sheet
from vlui.sim.phone import SimDevice


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
    args = parser.parse_args(argv)
    return tool_status(lambda: run(args))


def run(args: argparse.Namespace) -> int:
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


if __name__ == "__main__":
    sys.exit(main())
