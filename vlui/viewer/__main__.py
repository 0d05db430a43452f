"""``python -m vlui.viewer PATH [--port N] [--episode ID] [--no-browser]``: look at any episode, step by step.

PATH is a collected dataset (``data/<dataset>``), an evaluation's folder (``outputs/evaluate/<name>``) or an LLM or
MLLM agent's evaluation. The viewer serves a local page on 127.0.0.1 listing the episodes (filter by task and
outcome) and showing one at a time: each step's screen with the gesture drawn, the instruction, the action, the
outcome, the log line that decided success, and for an LLM agent its prompt, the image it was sent and its raw
answer. Ctrl-C stops it. docs/viewer.md says what each kind of folder holds.
"""

from __future__ import annotations

import argparse
import sys
import webbrowser
from urllib.parse import quote

from vlui.errors import tool_status
from vlui.viewer.episodes import open_folder
from vlui.viewer.server import make_server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vlui.viewer", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", help="a dataset folder, an evaluation folder, or its episodes.jsonl")
    parser.add_argument("--port", type=int, default=8765, help="the port on 127.0.0.1 (0: a free one; default 8765)")
    parser.add_argument("--episode", help="open this episode (a dataset's episode id, an evaluation's key)")
    parser.add_argument("--no-browser", action="store_true", help="print the address, open no browser")
    args = parser.parse_args(argv)

    def serve() -> int:
        folder = open_folder(args.path)
        if args.episode is not None:
            folder.require(args.episode)
        server = make_server(folder, args.port)
        url = f"http://127.0.0.1:{server.server_address[1]}/"
        if args.episode is not None:
            url += f"#episode={quote(args.episode, safe='')}&step=0"
        print(f"viewing {folder.path} at {url} (Ctrl-C to stop)", flush=True)
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
