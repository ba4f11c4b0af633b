"""Paper 002's studies (rankuq.bench.probes.abstention_studies) through the abstention probe:
threshold calibration and the reference-set size."""

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from rankuq.bench.probes import abstention


def test_threshold_calibration_is_exact_when_reference_and_test_coincide(wikiqa) -> None:
    result = abstention.probe(wikiqa, dev=wikiqa, confidences=["u_max"], names=["AP"])
    for target in (10, 50, 90):
        assert result.metrics[f"threshold.AP_MAE.{target}.u_max"] == pytest.approx(0.0, abs=1e-12)
        assert result.metrics[f"threshold.rate_MAE.{target}.u_max"] < 0.01  # |r − ⌊r·N⌋/N| and ties


def test_u_lin_at_a_claimed_size_is_the_reference_size_curve(transfer) -> None:
    result, _ = transfer
    curve = result.curves["reference_size"]
    assert result.metrics["nAUC.AP.u_lin@100"] == curve["u_lin"][curve["size"] == 100][0]
    assert "nAUC.AP.u_lin@500" not in result.metrics  # only sizes below the reference set's
    assert result.metrics["break_even.AP.largest"] == curve["size"][-1] == 240  # usable dev queries
    assert "nAUC.RR.u_lin@100" not in result.metrics  # the break-even studies the first metric


def test_the_break_even_says_how_far_it_looked(wikiqa, wikiqa_deterministic) -> None:
    dev = wikiqa.filter(pc.is_in(wikiqa["qid"], pa.array(sorted(set(wikiqa["qid"].to_pylist()))[:150])))
    result = abstention.probe(wikiqa_deterministic, dev=dev, confidences=["u_std", "u_lin"], names=["AP"])
    largest = result.metrics["break_even.AP.largest"]
    assert largest == result.curves["reference_size"]["size"][-1] < 100
    assert not any("@" in name for name in result.metrics)  # no claimed size below the reference size
