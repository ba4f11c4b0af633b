"""The metric-family registry and the shared ratio."""

import warnings

import numpy as np
import pytest

from rankuq.bench import metrics  # noqa: F401  (the families register)
from rankuq.bench.metrics.ap import average_precision
from rankuq.bench.metrics.base import FAMILIES, family, ratio


def test_ratio_is_0_where_nothing_is_relevant_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        values = ratio(np.array([1.0, 2.0, 3.0]), np.array([2, 0, 4]))
    assert values.tolist() == [0.5, 0.0, 0.75]


def test_the_families_and_how_each_takes_a_cutoff():
    assert FAMILIES.names() == ["AP", "Brier", "ECE", "ECE.all", "NLL", "P", "R", "RR", "nDCG"]
    cutoffs = {name: (FAMILIES.get(name).cutoff, FAMILIES.get(name).pooled) for name in FAMILIES}
    assert cutoffs == {
        "AP": ("optional", False),
        "Brier": ("none", True),
        "ECE": ("none", True),  # pooled: one value over every candidate row
        "ECE.all": ("none", True),
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
