#!/usr/bin/env python
"""Collect (Hydra entry point). `python collect.py --help` lists the config groups and options."""

from vlui.cli import entry_point

if __name__ == "__main__":
    entry_point("collect", "vlui.jobs.collect:run")
