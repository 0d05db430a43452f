"""``python -m vlui.viewer PATH [PATH ...] [--port N] [--episode ID] [--no-browser]``: look at any episode, step by
step, or compare agents' episodes side by side.

PATH is a collected dataset (``data/<dataset>``), an evaluation's folder (``outputs/evaluate/<name>``) or an LLM or
MLLM agent's evaluation. The viewer serves a local page on 127.0.0.1 listing the episodes (filter by task and
outcome) and showing one at a time: each step's screen with the gesture drawn, the instruction, the action, the
outcome, the log line that decided success, the actions over time, and for an LLM agent its prompt, the image it
was sent and its raw answer; a step at a time or played. Given several folders (or an evaluation of several
checkpoints), it lists the episodes of the same task and phone matched across the agents and shows them side by
side. Ctrl-C stops it. docs/viewer.md says what each kind of folder holds.
"""

from __future__ import annotations

import argparse
import sys
import webbrowser
from urllib.parse import quote

from vlui.errors import tool_status
from vlui.viewer.compare import Viewer
from vlui.viewer.server import make_server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vlui.viewer", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", nargs="+", help="a dataset folder, an evaluation folder, or its episodes.jsonl; "
                                                "several: their agents compared")
    parser.add_argument("--port", type=int, default=8765, help="the port on 127.0.0.1 (0: a free one; default 8765)")
    parser.add_argument("--episode", help="open this episode of the first PATH (a dataset's episode id, an "
                                          "evaluation's key)")
    parser.add_argument("--no-browser", action="store_true", help="print the address, open no browser")
    args = parser.parse_intermixed_args(argv)  # folders before or after the options

    def serve() -> int:
        viewer = Viewer.of(args.path)
        if args.episode is not None:
            viewer.folders[0].require(args.episode)
        server = make_server(viewer, args.port)
        url = f"http://127.0.0.1:{server.server_address[1]}/"
        if args.episode is not None:
            url += f"#episode={quote(args.episode, safe='')}&step=0"
        print(f"viewing {', '.join(str(f.path) for f in viewer.folders)} at {url} (Ctrl-C to stop)", flush=True)
        if not args.no_browser:
            webbrowser.open(url)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.server_close()
        return 0

    return tool_status(serve)


if __name__ == "__main__":
    sys.exit(main())
