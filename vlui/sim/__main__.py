"""``python -m vlui.sim``: look at the simulated phone from the command line.

  screenshot  SNAPSHOT [--out F.png] [--size HxW]    the home screen of a snapshot (id or file)
  xml         SNAPSHOT                               its uiautomator XML
  sheet       [SNAPSHOTS...] [--split all] --out F   a contact sheet of home screens (B-MoCA's Figure 2);
              [--app settings] [--locales all]       SNAPSHOTS may be random:N; --app opens an app first;
                                                     --locales: the first snapshot in every locale
  snapshots generate N [--seed S] --out DIR          write N generated configurations as snapshot files
              [--holdout AXIS=V1,V2 ...] [--heldout] (random:N's, or with --heldout heldout:N's)
  snapshots distances [--train random:5000]          how far the test snapshots and the validation phones are from
              [--seed S]                             the training screens, per axis (docs/generation.md)
  make-envs   CSV [--envs DIR]                       write the B-MoCA snapshot files from their table

The phone over ADB and its emulator console: ``python -m vlui.served``.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import sys

import yaml
from PIL import Image

from vlui.android import distances, generate
from vlui.android.apps import apps
from vlui.android.i18n import locales
from vlui.android.snapshot import ENVS_DIR, bmoca_snapshots, generator_pools, load_snapshot, snapshot_ids, snapshot_refs, write_snapshots
from vlui.errors import VluiError, tool_status
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
    p.add_argument("--app", help="open this app first (an app key: settings, clock, phone, ...)")
    p.add_argument("--locales", help="the first snapshot in each of these locales (comma-separated, or 'all', grouped "
                                     "by script) instead of the snapshots themselves")
    p.add_argument("--seed", type=int, default=0, help="the generator's seed for random:N")
    p.add_argument("--out", default="contact_sheet.png")
    p = sub.add_parser("snapshots", help="generated device configurations")
    actions = p.add_subparsers(dest="action", required=True)
    far = actions.add_parser("distances", help="how far the held-out phones are from the training screens")
    far.add_argument("--train", default="random:5000", help="the generated training phones to measure against")
    far.add_argument("--seed", type=int, default=0)
    gen = actions.add_parser(
        "generate", help="write N generated configurations as snapshot files (the same as env.snapshots=random:N)")
    gen.add_argument("n", type=int)
    gen.add_argument("--seed", type=int, default=0)
    gen.add_argument("--out", required=True, help="folder for the files (gen-<seed>-<index>.yaml)")
    gen.add_argument("--holdout", action="append", default=[], metavar="AXIS=V1,V2",
                     help="keep these values out (repeatable): --holdout locale=ja-JP,ar-AE --holdout device=tablet")
    gen.add_argument("--heldout", action="store_true", help="draw the held-out configurations instead (heldout:N)")
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
        ids = snapshot_refs(args.snapshots, args.seed) if args.snapshots else snapshot_ids(args.split)
        if args.locales:
            meta = locales()
            wanted = list(meta) if args.locales == "all" else args.locales.split(",")
            unknown = [i for i in wanted if i not in meta]
            if unknown:
                raise VluiError(f"unknown locale {unknown[0]!r}; choose from: {', '.join(meta)}")
            scripts = list(dict.fromkeys(m["script"] for m in meta.values()))
            wanted.sort(key=lambda i: scripts.index(meta[i]["script"]))
            base = load_snapshot(ids[0])
            ids = [dataclasses.replace(base, id=meta[i]["script"], locale=i) for i in wanted]
        prepare = None if not args.app else functools.partial(_open_app, app=args.app)
        contact_sheet.home_screens(ids, prepare, columns=args.columns).save(args.out)
        print(f"{args.out}: {len(ids)} snapshots")
    elif args.cmd == "snapshots" and args.action == "distances":
        print(distances.markdown(distances.rows(args.train, args.seed)))
    elif args.cmd == "snapshots":
        holdout = parse_holdout(args.holdout)
        ids = snapshot_refs(f"{'heldout' if args.heldout else 'random'}:{args.n}", args.seed, holdout)
        snaps = [load_snapshot(i) for i in ids]
        paths = write_snapshots(snaps, args.out)
        pools = generator_pools()
        inside = sum(pools.region(generate.geometry(s), "test_only") is not None for s in snaps)
        print(f"wrote {len(paths)} snapshot files to {args.out} (generator version {generate.version()}, seed "
              f"{args.seed}): {len({s.size for s in snaps})} screen sizes, {inside} in a test snapshot's held-out "
              "region")
    elif args.cmd == "make-envs":
        paths = write_snapshots(bmoca_snapshots(args.csv), args.envs or ENVS_DIR)
        print(f"wrote {len(paths)} snapshot files to {paths[0].parent}")
    return 0


def _open_app(dev: SimDevice, app: str) -> None:
    """Open ``app`` for a sheet: a third-party app is installed first (a phone has it only then)."""
    if apps()[app].third_party:
        dev.set_state({"installed": [app]})
    dev.launch(app)


def parse_holdout(items: list[str]) -> dict[str, list]:
    """``--holdout AXIS=V1,V2`` options as a holdout setting; numbers and true/false as YAML reads them."""
    holdout: dict[str, list] = {}
    for item in items:
        axis, sep, values = item.partition("=")
        if not sep or not values:
            raise VluiError(f"--holdout {item!r}: write AXIS=VALUE[,VALUE...], e.g. --holdout locale=ja-JP,ar-AE")
        holdout.setdefault(axis.strip(), []).extend(yaml.safe_load(v.strip()) for v in values.split(","))
    return holdout


if __name__ == "__main__":
    sys.exit(main())
