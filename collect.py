#!/usr/bin/env python
"""Collect (Hydra entry point). `python collect.py --help` lists the config groups and options."""

from vlui.cli import hydra_main
from vlui.jobs import collect

if __name__ == "__main__":
    hydra_main("collect", collect.run)()
