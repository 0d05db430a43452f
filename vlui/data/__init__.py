"""Demonstration datasets: the on-disk format (``format.py``) and, for training, data modules."""
