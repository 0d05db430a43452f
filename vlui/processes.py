"""Child processes that never outlive the job that started them, and jobs that stop cleanly on SIGTERM.

A collection's pool workers and the collection that train.py starts when a dataset is missing are children of a job.
When the job dies (a kill, a crash, SIGKILL from a scheduler) they must die with it: a child left running goes on
writing a dataset that a new run is reading, and a pool worker that outlives its parent prints a BrokenPipeError
when it hands back its episode. Linux's ``PR_SET_PDEATHSIG`` asks the kernel to signal the child when its parent
dies, whatever the cause; elsewhere the children are only stopped on the clean paths.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import threading
from collections.abc import Iterator

_PR_SET_PDEATHSIG = 1


def die_with_parent(sig: int = signal.SIGKILL) -> None:
    """Called in a child: the kernel sends it ``sig`` when its parent dies (Linux; nothing elsewhere)."""
    if not sys.platform.startswith("linux"):
        return
    parent = os.getppid()
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
    if os.getppid() != parent:  # the parent died before prctl took effect
        os.kill(os.getpid(), sig)


def quiet_worker() -> None:
    """Setup for a pool worker: it dies with its parent, and Ctrl-C (sent to the whole process group) is left to
    the parent, which stops the pool; otherwise every worker prints its own KeyboardInterrupt traceback."""
    die_with_parent(signal.SIGKILL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def quiet_resource_tracker() -> None:
    """When a job is killed, multiprocessing's resource tracker still removes the pool's semaphores but warns
    about each; the children it starts inherit ``sys.warnoptions``, so this silences that warning only."""
    option = "ignore::UserWarning:multiprocessing.resource_tracker"
    if option not in sys.warnoptions:
        sys.warnoptions.append(option)


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM (``kill``, a scheduler's stop) interrupts like Ctrl-C, so the job saves what it
    has and stops its children instead of vanishing. Only in the main thread, where signal handlers live."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
