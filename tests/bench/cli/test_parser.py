"""The `rankuq` argument parser."""

import importlib.metadata

import pytest

import rankuq
from rankuq.bench.cli.main import main


def test_version_prints_the_package_version(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"rankuq {rankuq.__version__}"
    assert rankuq.__version__ == importlib.metadata.version("rankuq")
