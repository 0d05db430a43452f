"""``python -m vlui.bench [NAME ...] [--list] [--quick] [--out FILE]``: run benchmarks, print JSON lines."""

from __future__ import annotations

import argparse
import json
import platform
import sys

import torch

from vlui.bench import BenchOptions, registry


def main(argv: list[str] | None = None) -> int:
    benches = registry()
    parser = argparse.ArgumentParser(prog="python -m vlui.bench", description=__doc__)
    parser.add_argument("names", nargs="*", help=f"benchmarks to run (default: all): {', '.join(benches)}")
    parser.add_argument("--list", action="store_true", help="list the benchmarks and exit")
    parser.add_argument("--quick", action="store_true", help="small inputs and few repeats (a smoke test)")
    parser.add_argument("--repeats", type=int, default=5, help="timed repeats per measurement (median is reported)")
    parser.add_argument("--out", help="also append the JSON lines to this file")
    args = parser.parse_args(argv)

    if args.list:
        for name, fn in benches.items():
            print(f"{name}: {(fn.__doc__ or sys.modules[fn.__module__].__doc__ or '').strip().splitlines()[0]}")
        return 0
    unknown = [n for n in args.names if n not in benches]
    if unknown:
        print(f"error: unknown benchmark(s) {', '.join(unknown)}; choose from: {', '.join(benches)}", file=sys.stderr)
        return 2

    opts = BenchOptions(quick=args.quick, repeats=2 if args.quick else args.repeats)
    machine = {
        "cpu": platform.processor() or platform.machine(),
        "threads": torch.get_num_threads(),
        "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
    }
    out = open(args.out, "a") if args.out else None
    try:
        for name in args.names or list(benches):
            for rec in benches[name](opts):
                line = json.dumps({**rec, "machine": machine})
                print(line, flush=True)
                if out:
                    out.write(line + "\n")
    finally:
        if out:
            out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
