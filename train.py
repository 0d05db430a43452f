#!/usr/bin/env python
"""Train (Hydra entry point). `python train.py --help` lists the config groups and options."""

from vlui.cli import train

if __name__ == "__main__":
    train()
