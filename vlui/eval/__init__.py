"""Evaluation: rollouts on held-out snapshots, statistics, reports."""
