"""Evaluation metrics over the predictions table, registered by name (``bench.metrics.get("ece")``)."""
