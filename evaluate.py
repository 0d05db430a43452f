#!/usr/bin/env python
"""Evaluate (Hydra entry point). `python evaluate.py --help` lists the config groups and options."""

from vlui.cli import evaluate

if __name__ == "__main__":
    evaluate()
