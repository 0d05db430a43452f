"""``python -m vlui.agents``: watch the expert work.

  task-sheet  SNAPSHOT [TASKS...] --out F [--serial S]   every screen of the expert's episodes (default: the six
              representative tasks), on the simulated phone or, with --serial, on an emulator or phone over ADB

This lives with the agents, not in ``python -m vlui.sim``: the simulator is a lower layer that knows no agent, and
the screens shown are the expert's episodes (its plans are the one recipe per task).
"""

from __future__ import annotations

import argparse
import sys

from vlui.agents.walkthrough import task_sheet
from vlui.backends import make_device
from vlui.env.settings import EnvConfig
from vlui.errors import tool_status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vlui.agents", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("task-sheet", help="every screen of the expert's episodes on one snapshot")
    p.add_argument("snapshot", help="snapshot id or file")
    p.add_argument("tasks", nargs="*", help="task ids (default: the six representative tasks)")
    p.add_argument("--columns", type=int, default=7)
    p.add_argument("--out", default="tasks.png")
    p.add_argument("--serial", help="an emulator or phone over ADB (its snapshot loaded first), not the simulated one")
    args = parser.parse_args(argv)

    def sheet() -> int:
        env = EnvConfig(backend="adb", serial=args.serial) if args.serial else EnvConfig()
        device = make_device(env, args.snapshot)
        task_sheet(device, args.snapshot, args.tasks or None, columns=args.columns).save(args.out)
        print(args.out)
        return 0

    return tool_status(sheet)


if __name__ == "__main__":
    sys.exit(main())
