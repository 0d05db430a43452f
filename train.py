#!/usr/bin/env python
"""Train (Hydra entry point). `python train.py --help` lists the config groups and options."""

from vlui.cli import entry_point

if __name__ == "__main__":
    entry_point("train", "vlui.jobs.train:run")
