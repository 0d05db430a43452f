#!/usr/bin/env python
"""Evaluate (Hydra entry point). `python evaluate.py --help` lists the config groups and options."""

from vlui.cli import entry_point

if __name__ == "__main__":
    entry_point("evaluate", "vlui.jobs.evaluate:run")
