"""The method registry (``rankuq.methods``): every method listed, parameters checked by name, papers
cited by author and year (each method's own behaviour: test_<method>.py)."""

import re
import sys

import pytest

from rankuq import methods
from rankuq.errors import RankuqError


def test_registry_lists_every_method_and_rejects_unknown_names():
    assert {"bert", "mc_dropout", "ensemble", "bm25"} <= set(methods.names())
    with pytest.raises(RankuqError, match="unknown method 'sngpp'; valid methods: bert, bm25"):
        methods.get("sngpp")


@pytest.mark.parametrize(
    ("name", "raw", "match"),
    [
        ("mc_dropout", {"T": 0}, r"methods.mc_dropout.T: Input should be greater than 0"),
        ("mc_dropout", {"T": -3}, r"methods.mc_dropout.T: Input should be greater than 0"),
        ("ensemble", {"M": 1}, r"methods.ensemble.M: Input should be greater than or equal to 2"),
        ("bert", {"T": 3}, r"methods.bert.T: Extra inputs are not permitted"),
    ],
)
def test_bad_parameters_are_one_clear_error(name, raw, match):
    with pytest.raises(RankuqError, match=match):
        methods.create(name, raw, "grid.yaml: methods." + name)


def test_method_descriptions_and_docstrings_cite_by_author_and_year():
    """Papers are cited as "Penha & Hauff, 2021", never by the project's internal file numbers."""
    internal = re.compile(r"\[0\d\d\b|\bpapers? 0\d\d\b|\b0\d\d §")
    for name in methods.names():
        method = methods.get(name)
        module = sys.modules[method.__module__]
        for text in (method.description, method.__doc__ or "", module.__doc__ or ""):
            assert not internal.search(text), (name, text)
    assert "[Penha & Hauff, 2021]" in methods.get("mc_dropout").description
