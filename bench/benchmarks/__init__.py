"""Speed benchmarks (scripts, not tests): ``python -m bench.benchmarks.<name>``."""
