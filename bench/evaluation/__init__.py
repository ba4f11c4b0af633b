"""Evaluation of predictions: the probes' cache (``probe_cache``), paired tests between methods
(``paired_tests``), TREC files (``trec``) and black-box evaluation of run files
(``blackbox``). The metrics and probes themselves are ``bench.metrics`` and ``bench.probes``."""
