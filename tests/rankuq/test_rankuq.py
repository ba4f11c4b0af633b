"""The package ``rankuq`` itself: its version, and the notebook API imported only on first use."""

import importlib.metadata
import subprocess
import sys

import pytest

import rankuq


def test_the_version_is_the_installed_distribution_s():
    assert rankuq.__version__ == importlib.metadata.version("rankuq")


def test_importing_rankuq_imports_no_heavy_library_until_the_api_is_used():
    code = (
        "import sys, rankuq\n"
        "heavy = ('ray', 'torch', 'mlflow')\n"
        "print(*[name in sys.modules for name in heavy])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "False", "False"]


def test_the_api_names_are_the_only_lazy_attributes():
    assert rankuq.run_grid.__module__ == "rankuq.bench.api"
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        rankuq.nope  # noqa: B018
