"""``python -m vlui.models``: share a trained policy the way the field shares models (docs/sharing.md).

  card   CHECKPOINT [--results DIR ...] [--license L] [--dataset-id ID]   write the policy's model card (README.md
                                                                          beside config.json), with the numbers of
                                                                          its evaluations, and check it
  check  CHECKPOINT                                                       check the model card
  push   CHECKPOINT REPO_ID [--results DIR ...] [--private] ...           upload the policy with its card to the
                                                                          Hugging Face Hub

CHECKPOINT is a run's folder (checkpoints/<experiment>/<run>) or its export (.../policy). DIR is an evaluation's
folder (outputs/evaluate/<name>); give one per evaluation (the validation phones', the test phones'). train.py writes
the card when it exports; ``card --results`` writes it again with the evaluations' numbers. Load a shared policy with
``VLUIPolicy.from_pretrained("owner/name")`` (vlui.models.policy) or ``python evaluate.py checkpoint=...``.
"""

from __future__ import annotations

import argparse
import sys

from vlui.errors import VluiError, tool_status
from vlui.hub import is_repo_id, upload
from vlui.models.card import CARD, MARKER, check_model_card, write_model_card
from vlui.models.files import CONFIG, WEIGHTS, export_dir


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vlui.models", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    for name, text in (("card", "write the policy's model card and check it"),
                       ("push", "upload the policy with its model card to the Hugging Face Hub")):
        p = sub.add_parser(name, help=text)
        p.add_argument("checkpoint", help="a run's folder or its policy/ export")
        if name == "push":
            p.add_argument("repo_id", help="the model repository on the Hub, owner/name")
            p.add_argument("--private", action="store_true", help="create the repository private")
        p.add_argument("--results", action="append", default=[], metavar="DIR",
                       help="an evaluation of the policy (outputs/evaluate/<name>); repeatable")
        p.add_argument("--license", help="the policy's licence, a Hub licence id (default apache-2.0, or the one "
                                         "its card names)")
        p.add_argument("--dataset-id", help="its training data on the Hub (owner/name), linked from the card")
    p = sub.add_parser("check", help="check the policy's model card")
    p.add_argument("checkpoint", help="a run's folder, its policy/ export, or a README.md")
    args = parser.parse_args(argv)
    return tool_status(lambda: COMMANDS[args.cmd](args))


def card(args: argparse.Namespace) -> int:
    print(write_model_card(args.checkpoint, args.results, args.license, args.dataset_id))
    return 0


def check(args: argparse.Namespace) -> int:
    check_model_card(args.checkpoint)
    print(f"{args.checkpoint}: a valid model card")
    return 0


def push(args: argparse.Namespace) -> int:
    if not is_repo_id(args.repo_id):
        raise VluiError(f"{args.repo_id!r} is not a Hub repo id (owner/name)")
    folder = export_dir(args.checkpoint)
    card_path = folder / CARD
    if card_path.is_file() and MARKER not in card_path.read_text(encoding="utf-8", errors="replace") \
            and not (args.results or args.license or args.dataset_id):
        check_model_card(card_path)  # someone's own card, uploaded as it is
    else:  # vlui's card, its code loading the policy from the repository
        write_model_card(folder, args.results, args.license, args.dataset_id, load_from=args.repo_id)
    print(upload(folder, args.repo_id, "model", private=args.private or None,
                 allow_patterns=[CONFIG, WEIGHTS, CARD], message="Upload a vlui policy"))
    return 0


COMMANDS = {"card": card, "check": check, "push": push}


if __name__ == "__main__":
    sys.exit(main())
