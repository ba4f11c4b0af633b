"""Speed benchmarks (scripts, not tests): ``python -m rankuq.bench.benchmarks.<name>``."""
