"""Where the jobs' messages go. The jobs log through :mod:`logging` (``log.info``); a job run from the command line
has one console handler (:func:`console_handler`, set up by ``configs/hydra/default.yaml``) and its run folder's
``<job>.log`` file. Only a job's final table is printed."""

from __future__ import annotations

import logging
import sys

from rich.console import Console
from rich.logging import RichHandler


def console_handler() -> logging.Handler:
    """rich's handler on a terminal (time, level, message, wrapped to the window); elsewhere (a pipe, a file, CI) one
    plain ``name: message`` line per record on stdout, which tools can grep."""
    if sys.stdout.isatty():
        return RichHandler(console=Console(), show_path=False, markup=False, rich_tracebacks=False,
                           log_time_format="[%X]")
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
    return handler
