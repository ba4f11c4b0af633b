"""``python -m rankuq.bench.cli``: the ``rankuq`` command."""

from rankuq.bench.cli.main import cli

cli()
