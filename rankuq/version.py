"""rankuq's installed version, in a module of its own: what records it (the MLflow tags, the CLI)
imports it without importing the package root, whose notebook API sits above everything."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("rankuq")
except PackageNotFoundError:  # imported from a source tree that was never installed
    __version__ = "0+unknown"
