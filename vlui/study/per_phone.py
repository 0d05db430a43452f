"""``python -m vlui.study.per_phone DIR [DIR ...]``: the "Per phone" section of a report, from its ``per_phone.csv``.

Every study report has had this section since generator version 5; a report written before then kept each seed's
success on each phone in ``per_phone.csv`` (columns ``arm`` or ``agent``, ``split``, ``snapshot``, ``seed``,
``success``) but printed no table of it. This writes the table the study's report writes (one row per phone: the mean
over the seeds and, in ( ), each seed's) into ``report.md``, before "The paper", "Learning curves" or "How it was
made", or at its end; run again, it replaces the section it wrote. Nothing else of the report changes.
"""

from __future__ import annotations

import argparse
import csv
import re
import sys
from pathlib import Path
from typing import Any

from vlui.errors import VluiError
from vlui.eval.report import seeds_phones_table

HEAD = "## Per phone"
BEFORE = ("## The paper", "## Learning curves", "## How it was made")
INTRO = ("Success on each phone, in %: per arm, the mean over its training seeds and, in ( ), each seed's "
         "(`per_phone.csv`).")


def groups_from_csv(path: Path) -> dict[str, dict[str, dict[str, Any]]]:
    """split -> arm -> the group :func:`~vlui.eval.report.seeds_phones_table` takes (``checkpoints``: the seeds as
    ``seed<N>``, ``per_phone``: phone -> seed -> success), in the order the file first names them."""
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
    except OSError as err:
        raise VluiError(f"cannot read {path}: {err.strerror}") from None
    if not rows:
        raise VluiError(f"{path} has no rows")
    who = "arm" if "arm" in rows[0] else "agent"
    missing = {who, "split", "snapshot", "seed", "success"} - set(rows[0])
    if missing:
        raise VluiError(f"{path} lacks the column(s) {', '.join(sorted(missing))}: is it a report's per_phone.csv?")
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for i, row in enumerate(rows, start=2):
        try:
            rate = float(row["success"]) if row["success"] not in ("", "None") else None
        except ValueError:
            raise VluiError(f"{path}, line {i}: success {row['success']!r} is not a number") from None
        group = out.setdefault(row["split"], {}).setdefault(row[who], {"checkpoints": [], "per_phone": {}})
        seed = f"seed{row['seed']}"
        if seed not in group["checkpoints"]:
            group["checkpoints"].append(seed)
        group["per_phone"].setdefault(row["snapshot"], {})[seed] = rate
    for split in out.values():  # a seed that counted no episode on a phone shows as "–"
        for group in split.values():
            for rates in group["per_phone"].values():
                for seed in group["checkpoints"]:
                    rates.setdefault(seed, None)
    return out


def section(path: Path) -> str:
    """The report's "Per phone" section, from ``path`` (a ``per_phone.csv``)."""
    lines = [HEAD, "", INTRO, ""]
    for split, groups in groups_from_csv(path).items():
        lines += [f"{split}:", "", seeds_phones_table(groups), ""]
    return "\n".join(lines)


def with_section(report: str, new: str) -> str:
    """``report`` with its "Per phone" section replaced by ``new``, or ``new`` put before the first of
    :data:`BEFORE` it has, or at its end."""
    start = report.find("\n" + HEAD + "\n")
    if start >= 0:
        nxt = re.search(r"\n## ", report[start + len(HEAD) + 2:])
        end = start + len(HEAD) + 2 + nxt.start() if nxt else len(report)
        return report[:start + 1] + new + report[end:]
    at = [i for i in (report.find("\n" + h) for h in BEFORE) if i >= 0]
    if at:
        i = min(at) + 1
        return report[:i] + new + "\n" + report[i:]
    return report.rstrip("\n") + "\n\n" + new


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vlui.study.per_phone", description=(
        "Write the Per phone section of each report folder's report.md from its per_phone.csv."))
    parser.add_argument("folders", nargs="+", type=Path, help="report folders (report.md and per_phone.csv)")
    args = parser.parse_args(argv)
    try:
        for folder in args.folders:
            report = folder / "report.md"
            if not report.is_file():
                raise VluiError(f"{folder} has no report.md")
            report.write_text(with_section(report.read_text(encoding="utf-8"), section(folder / "per_phone.csv")),
                              encoding="utf-8")
            print(f"per phone: {report}")
        return 0
    except VluiError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
