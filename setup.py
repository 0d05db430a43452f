"""The wheel carries the checkout's configs/ and envs/ inside the package (vlui/_data/), so an installed vlui finds
them through importlib.resources (vlui/resources.py). Everything else is in pyproject.toml."""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent


class BuildPy(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):  # an editable install reads the checkout's folders directly
            return
        for name in ("configs", "envs"):
            target = Path(self.build_lib) / "vlui" / "_data" / name
            shutil.rmtree(target, ignore_errors=True)  # a file deleted since the last build must not ship
            shutil.copytree(ROOT / name, target)


setup(cmdclass={"build_py": BuildPy})
