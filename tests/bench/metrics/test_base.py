"""The metric-family registry and the shared ratio."""

import warnings

import numpy as np
import pytest

from rankuq.bench import metrics
from rankuq.bench.metrics.ap import average_precision
from rankuq.bench.metrics.base import FAMILIES, family, ratio
from rankuq.errors import RankuqError


def test_ratio_is_0_where_nothing_is_relevant_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        values = ratio(np.array([1.0, 2.0, 3.0]), np.array([2, 0, 4]))
    assert values.tolist() == [0.5, 0.0, 0.75]


def test_the_families_and_how_each_takes_a_cutoff():
    assert FAMILIES.names() == ["AP", "Brier", "ECE", "ECE.all", "ERCE", "NLL", "P", "R", "RR", "nDCG"]
    cutoffs = {name: (FAMILIES.get(name).cutoff, FAMILIES.get(name).pooled) for name in FAMILIES}
    assert cutoffs == {
        "AP": ("optional", False),
        "Brier": ("none", True),
        "ECE": ("none", True),  # pooled: one value over every candidate row
        "ECE.all": ("none", True),
        "ERCE": ("none", True),
        "NLL": ("none", True),
        "P": ("required", False),
        "R": ("required", False),
        "RR": ("none", False),
        "nDCG": ("optional", False),
    }
    assert FAMILIES.get("AP").fn is average_precision  # the decorator keeps the function plain


def test_a_family_name_is_registered_once():
    with pytest.raises(ValueError, match="metric 'AP' is registered twice"):
        family("AP", cutoff="none")(lambda lists: np.zeros(0))
    assert FAMILIES.get("AP").fn is average_precision


def test_each_family_declares_its_kind_and_direction_and_every_list_derives_from_them():
    facts = {name: (FAMILIES.get(name).kind, FAMILIES.get(name).better) for name in FAMILIES}
    lower = {name for name, (_, better) in facts.items() if better == "lower"}
    assert lower == {"Brier", "ECE", "ECE.all", "ERCE", "NLL"}
    assert {facts[name][0] for name in lower} == {"calibration", "scoring rule"}
    assert all(kind == "ranking" for name, (kind, _) in facts.items() if name not in lower)
    assert metrics.CALIBRATION_ERRORS == ("ECE", "ECE.all", "ERCE", "Brier", "NLL")
    assert metrics.FROM_PROBABILITIES == ("ECE", "ECE.all", "Brier", "NLL")  # not the probe's ERCE
    assert metrics.of_kind("scoring rule") == ("Brier", "NLL")


@pytest.mark.parametrize(
    ("name", "lower"),
    [
        ("ECE", True),
        ("ECE.all", True),
        ("ECE.adaptive", True),  # the calibration probe's variants of ECE
        ("ECE.nonrel_5", True),
        ("ERCE", True),
        ("Brier", True),
        ("NLL", True),
        ("R@1", False),
        ("nDCG@10", False),
        ("RR@10", False),  # ir-measures'
        ("RA AP", False),  # a probe's column
        ("nAUC AP u_max", False),
    ],
)
def test_lower_is_better_follows_the_family_s_declaration(name, lower):
    assert metrics.lower_is_better(name) is lower


def test_erce_is_listed_but_a_predictions_table_cannot_give_it():
    assert FAMILIES.get("ERCE").probe == "calibration"
    with pytest.raises(RankuqError, match="'ERCE' is measured by the calibration probe"):
        metrics.get("ERCE")
    with pytest.raises(RankuqError, match=r"valid metric families: AP\[@k\], Brier, ECE, ECE.all, NLL, P@k"):
        metrics.get("ERCEX")
