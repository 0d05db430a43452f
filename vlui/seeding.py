"""How a run's seed becomes the seeds of its parts (an episode, a training step, an iteration, a minibatch): one rule,
the same in every process, so that a resumed or re-run job draws exactly what it drew before."""

from __future__ import annotations

WIDTH = 1_000_003  # a prime: parts 0 .. WIDTH - 1 of two different seeds never share a seed


def substream(seed: int, part: int, width: int = WIDTH) -> int:
    """The seed of part ``part`` of what ``seed`` seeds: ``seed * width + part``, distinct for every (seed, part)
    with ``0 <= part < width``. Parts of parts nest: ``substream(substream(seed, run), episode)``."""
    return seed * width + part
