"""Child processes that never outlive the job that started them, and jobs that stop cleanly on SIGTERM.

A collection's pool workers, the collection that train.py starts when a dataset is missing and a study's trainings and
evaluations are children of a job. When the job dies (a kill, a crash, SIGKILL from a scheduler) they must die with
it: a child left running goes on writing a dataset that a new run is reading (or training beside the resumed study),
and a pool worker that outlives its parent prints a BrokenPipeError when it hands back its episode. Linux's
``PR_SET_PDEATHSIG`` asks the kernel to signal the child when its parent dies, whatever the cause; elsewhere the
children are only stopped on the clean paths.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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


def call_child(cmd: list[str], **popen: Any) -> int:
    """``subprocess.call`` for a child that must not outlive this process: when this one dies (a kill, a crash),
    the kernel sends the child SIGTERM, the stop a scheduler sends (a collection keeps the episodes it wrote, a
    training resumes from its last checkpoint). A study killed mid-step otherwise leaves its training running on,
    holding the cores while the resumed study trains the same run again."""
    return subprocess.call(cmd, preexec_fn=functools.partial(die_with_parent, signal.SIGTERM), **popen)


def quiet_worker() -> None:
    """Setup for a pool worker: it dies with its parent, and Ctrl-C (sent to the whole process group) is left to
    the parent, which stops the pool; otherwise every worker prints its own KeyboardInterrupt traceback. What it
    writes to stderr while its parent is dying is dropped (:class:`OrphanQuietStderr`)."""
    die_with_parent(signal.SIGKILL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux") and not isinstance(sys.stderr, OrphanQuietStderr):
        sys.stderr = OrphanQuietStderr(sys.stderr, os.getppid())


_PF_EXITING = 0x4  # the kernel's flag of a task in do_exit (/proc/<pid>/stat, field 9)


def exiting(pid: int) -> bool:
    """Whether process ``pid`` is dying or dead (Linux's /proc): gone, a zombie, or in the middle of its exit."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    state, *rest = stat.rsplit(")", 1)[1].split()  # after the command name, which may hold spaces
    return state in ("Z", "X", "x") or bool(int(rest[5]) & _PF_EXITING)


class OrphanQuietStderr:
    """A pool worker's stderr that drops what is written once the job that started it is dying.

    A killed job's exit closes its end of the pool's pipes before the kernel signals its workers (the death signal
    comes last), so a worker that was handing back an episode finds the pipe broken and starts printing
    ``Process SpawnPoolWorker-1:`` and a BrokenPipeError traceback in between: noise under the job's last line,
    about a death that was not the worker's doing. While the job is alive everything is written."""

    def __init__(self, stream: Any, parent: int) -> None:
        self.stream, self.parent = stream, parent

    def write(self, text: str) -> int:
        if os.getppid() != self.parent or exiting(self.parent):
            return len(text)
        return self.stream.write(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


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


def cores() -> int:
    """The cores this process may run on (its CPU affinity where the platform has one: a container's or a
    scheduler's share, not the whole machine's)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def threads_per_job(jobs: int, available: int | None = None) -> int:
    """Torch threads for each of ``jobs`` processes that run side by side on ``available`` cores (this process's by
    default): the cores shared out, at least one each. More threads than cores do not merely share them: torch's
    threads wait for each other spinning, so two processes of two threads each on two cores each run several times
    slower than with one thread each (``python -m vlui.bench side_by_side``)."""
    return max(1, (available or cores()) // max(1, jobs))


def child_env(threads: int) -> dict[str, str]:
    """The environment for a child process limited to ``threads`` torch threads (``OMP_NUM_THREADS``, which torch
    reads at start), or this one's when ``threads`` is 0 or the user has set ``OMP_NUM_THREADS`` (theirs is kept)."""
    env = dict(os.environ)
    if threads > 0 and "OMP_NUM_THREADS" not in env:
        env["OMP_NUM_THREADS"] = str(threads)
    return env
