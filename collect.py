#!/usr/bin/env python
"""Collect (Hydra entry point). `python collect.py --help` lists the config groups and options."""

from vlui.cli import collect

if __name__ == "__main__":
    collect()
