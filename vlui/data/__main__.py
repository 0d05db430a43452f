"""``python -m vlui.data``: share a collected dataset the way the field shares datasets (docs/sharing.md).

  card    DATASET [--license L] [--force]         write DATASET/README.md, its dataset card (load_dataset reads the
                                                  episodes with screens as images; a config per split), and check it
  check   DATASET                                 check the card: its front matter, files, features and sections
  export  --format lerobot DATASET --out DIR      write the episodes in LeRobot's dataset format (v3.0) into DIR
  push    DATASET REPO_ID [--private]             upload the dataset with its card to the Hugging Face Hub

DATASET is a folder or a name in data/. collect.py writes the card when a collection ends, and
``python -m vlui.jobs.split`` when it names a split; ``card`` writes it again (with another licence, say).
"""

from __future__ import annotations

import argparse
import sys

from vlui.data.card import CARD, check_dataset_card, refresh_dataset_card, write_dataset_card
from vlui.data.format import dataset_folder, writer_pid
from vlui.data.lerobot import export_lerobot
from vlui.errors import VluiError, tool_status
from vlui.hub import is_repo_id, upload

FORMATS = ("lerobot",)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vlui.data", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("card", help="write the dataset's card (README.md) and check it")
    p.add_argument("dataset", help="a dataset's folder, or its name in data/")
    p.add_argument("--license", help="the dataset's licence, a Hub licence id (default: apache-2.0 for the simulated "
                                     "phone's screens, unknown for a device's)")
    p.add_argument("--force", action="store_true", help="replace a README.md that vlui did not write")
    p = sub.add_parser("check", help="check the dataset's card")
    p.add_argument("dataset", help="a dataset's folder, or its name in data/")
    p = sub.add_parser("export", help="write the dataset in another format")
    p.add_argument("dataset", help="a dataset's folder, or its name in data/")
    p.add_argument("--format", required=True, choices=FORMATS, help="lerobot: LeRobot's dataset format v3.0")
    p.add_argument("--out", required=True, help="a new folder for the export")
    p = sub.add_parser("push", help="upload the dataset with its card to the Hugging Face Hub")
    p.add_argument("dataset", help="a dataset's folder, or its name in data/")
    p.add_argument("repo_id", help="the dataset repository on the Hub, owner/name")
    p.add_argument("--private", action="store_true", help="create the repository private")
    args = parser.parse_args(argv)
    return tool_status(lambda: COMMANDS[args.cmd](args))


def _dataset(name: str):
    root = dataset_folder(name)
    if not (root / "meta" / "info.json").exists():
        raise VluiError(f"no dataset at {root} (no meta/info.json): give a dataset's folder or its name in data/")
    return root


def card(args: argparse.Namespace) -> int:
    print(write_dataset_card(_dataset(args.dataset), args.license, args.force))
    return 0


def check(args: argparse.Namespace) -> int:
    root = _dataset(args.dataset)
    check_dataset_card(root)
    print(f"{root / CARD}: a valid dataset card")
    return 0


def export(args: argparse.Namespace) -> int:
    done = export_lerobot(_dataset(args.dataset), args.out)
    skipped = f"; {len(done['skipped'])} episode(s) without an action left out" if done["skipped"] else ""
    print(f"{done['out']}: {done['episodes']} episodes, {done['frames']} frames, {done['tasks']} tasks in LeRobot's "
          f"format v3.0{skipped}")
    return 0


def push(args: argparse.Namespace) -> int:
    root = _dataset(args.dataset)
    if not is_repo_id(args.repo_id):
        raise VluiError(f"{args.repo_id!r} is not a Hub repo id (owner/name)")
    pid = writer_pid(root)
    if pid is not None:
        raise VluiError(f"a collection (pid {pid}) is still writing {root}: push it once the collection is done")
    if refresh_dataset_card(root, repo_id=args.repo_id) is None:  # vlui's card: its loading code names the repository
        check_dataset_card(root)  # someone's own card, uploaded as it is
    url = upload(root, args.repo_id, "dataset", private=args.private or None,
                 ignore_patterns=["meta/.writer.lock", "features/**", ".*", "**/.*"])
    print(url)
    return 0


COMMANDS = {"card": card, "check": check, "export": export, "push": push}


if __name__ == "__main__":
    sys.exit(main())
