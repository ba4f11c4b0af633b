"""The measurement records: every file has the keys a record needs and figures with a value, a unit and
what they are; a figure is read by name and its source names the record; a wrong name fails on one
line naming the file and what it holds."""

import json

import pytest

from rankuq.measurements import KEYS, RECORDS, figure, names, record, source


def test_every_record_has_its_keys_and_numeric_figures():
    found = sorted(RECORDS.glob("*.json"))
    assert len(found) >= 10 and sorted(names()) == sorted(path.stem for path in found)
    for path in found:
        data = json.loads(path.read_text())
        assert set(KEYS) <= data.keys(), path
        assert data["commit"] and data["date"][:4] == "2026", path
        assert (data["machine"] is None) == (data["command"] is None), path  # assumptions: neither
        for key, fig in data["figures"].items():
            assert isinstance(fig["value"], int | float) and fig["unit"] and fig["what"], (path, key)


def test_a_figure_and_its_source():
    assert figure("2026-11-21-method-cost-cpu", "bert_ms_per_pair_l2") == 5.52
    said = source("2026-11-21-method-cost-cpu", "bert_ms_per_pair_l2")
    assert "rankuq/records/2026-11-21-method-cost-cpu.json" in said
    assert "05aa42e" in said and "AMD EPYC" in said
    assert "not measured" in source("planning-assumptions", "utilisation")


def test_measurements_come_first_newest_first():
    order = names()
    dated = [record(name)["date"] for name in order if record(name)["machine"] is not None]
    assert dated == sorted(dated, reverse=True) and order[-1] == "planning-assumptions"


def test_a_wrong_name_fails_naming_the_file():
    with pytest.raises(FileNotFoundError, match=r"no-such\.json: no such measurement record; the records: "):
        record("no-such")
    with pytest.raises(KeyError, match=r"rankuq/records/planning-assumptions\.json has no figure 'nope'"):
        figure("planning-assumptions", "nope")
