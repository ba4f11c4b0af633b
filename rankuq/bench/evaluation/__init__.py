"""Evaluation of predictions: the probes' cache (``probe_cache``), paired tests between methods
(``paired_tests``), writing TREC runs (``trec``; reading them is tasks.trec_format) and black-box
evaluation of TREC run files (``blackbox``). The metrics and probes themselves are ``bench.metrics`` and
``bench.probes``."""
