"""The probe registry and ``bench.probes.probe``: one ranking shared by several probes."""

import pytest

from rankuq.bench import probes
from rankuq.errors import RankuqError


def test_every_probe_is_registered() -> None:
    assert probes.PROBES.names() == ["abstention", "calibration", "cutoff", "moments", "nota", "risk"]
    with pytest.raises(RankuqError, match="unknown probe 'ecee'; valid probes: abstention, calibration"):
        probes.PROBES.get("ecee")


def test_run_merges_the_probes_of_one_table(wikiqa) -> None:
    result = probes.probe(wikiqa, ["calibration", "risk"], dev=wikiqa)
    alone = probes.PROBES.get("calibration")(wikiqa)
    assert {k: result.metrics[k] for k in alone.metrics} == alone.metrics
    assert "RA.b" in result.metrics and "ERCE" in result.curves
    # one spelling of metric names (ir-measures'); MLflow's '_at_' is made only in bench.results.tracking
    assert "RA.nDCG@10" in result.metrics and not any("_at_" in k for k in result.metrics)
