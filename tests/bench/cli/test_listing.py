"""`rankuq tasks` and `rankuq methods`: the registries listed."""

import json
import os
import subprocess
import sys
import time

from rankuq.bench.cli.main import main

RANKUQ = [sys.executable, "-m", "rankuq.bench.cli"]


def test_tasks_and_methods_list_the_registries(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # the methods' listing is kept there
    assert main(["tasks"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in ("wikiqa", "trecqa_clean", "semeval_graded", "beir/<name>", "run"))
    assert main(["methods"]) == 0
    out = capsys.readouterr().out
    assert "mc_dropout" in out and "T=10" in out and "M=5" in out


def test_methods_are_listed_again_in_under_two_seconds_without_importing_torch(tmp_path):
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    first = subprocess.run([*RANKUQ, "methods"], env=env, capture_output=True, text=True, check=True)
    start = time.perf_counter()
    again = subprocess.run([*RANKUQ, "methods"], env=env, capture_output=True, text=True, check=True)
    assert time.perf_counter() - start < 2 and again.stdout == first.stdout and "mc_dropout" in first.stdout
    check = (
        "from rankuq.bench.cli.main import main; import sys; main(['methods']); print('torch' in sys.modules)"
    )
    listed = subprocess.run(
        [sys.executable, "-c", check], env=env, capture_output=True, text=True, check=True
    )
    assert listed.stdout.splitlines()[-1] == "False"


def test_the_methods_listing_is_made_anew_when_rankuqs_top_level_modules_change(monkeypatch, tmp_path):
    """The methods' parameters come from rankuq's top level too (backbone's ModelConfig, registry):
    a changed file there changes the cache key, as a changed method file does."""
    import rankuq
    from rankuq.bench.cli.listing import _methods_key

    module = tmp_path / "backbone.py"
    module.write_text("MAX_LENGTH = 1\n")
    monkeypatch.setattr(rankuq, "__path__", [*rankuq.__path__, str(tmp_path)])
    before = _methods_key()
    assert _methods_key() == before
    module.write_text("MAX_LENGTH = 512\n")
    assert _methods_key() != before


def test_every_listing_prints_its_registry_as_json(capsys, monkeypatch, tmp_path):
    from rankuq import methods, tasks
    from rankuq.bench.metrics import DEFAULT_METRICS, FAMILIES
    from rankuq.bench.probes import DEFAULT_PROBES, PROBES

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    found = {}
    for command in ("tasks", "methods", "probes", "metrics"):
        assert main([command, "--json"]) == 0
        found[command] = json.loads(capsys.readouterr().out)
    assert [t["name"] for t in found["tasks"]["tasks"]] == tasks.names()
    assert found["tasks"]["families"] == tasks.family_names()
    assert [m["name"] for m in found["methods"]] == methods.names()
    ensemble = next(m for m in found["methods"] if m["name"] == "ensemble")
    assert ensemble["parameters"]["M"] == 5 and ensemble["description"] == methods.get("ensemble").description
    assert [p["name"] for p in found["probes"]] == PROBES.names()
    assert {p["name"] for p in found["probes"] if p["default"]} == set(DEFAULT_PROBES)
    calibration = next(p for p in found["probes"] if p["name"] == "calibration")
    assert calibration["description"].startswith("Calibration: ECE")  # its module's first paragraph
    assert [m["name"] for m in found["metrics"]["metrics"]] == FAMILIES.names()
    assert found["metrics"]["default"] == list(DEFAULT_METRICS)
    ndcg = next(m for m in found["metrics"]["metrics"] if m["name"] == "nDCG")
    assert (ndcg["spelling"], ndcg["pooled"], ndcg["kind"], ndcg["better"]) == (
        "nDCG[@k]",
        False,
        "ranking",
        "higher",
    )
    erce = next(m for m in found["metrics"]["metrics"] if m["name"] == "ERCE")  # issue 48: it was missing
    assert (erce["kind"], erce["better"], erce["probe"]) == ("calibration", "lower", "calibration")
    assert (
        main(["methods", "--json"]) == 0 and json.loads(capsys.readouterr().out) == found["methods"]
    )  # cached


def test_probes_and_metrics_are_listed_as_tables_with_their_text_as_written(capsys):
    assert main(["probes"]) == 0
    out = capsys.readouterr().out
    assert "abstention" in out and "add to eval.probes" in out  # nota is not a default probe
    assert main(["metrics"]) == 0
    out = capsys.readouterr().out
    assert "nDCG[@k]" in out and "mean −[y log p + (1 − y) log(1 − p)]" in out  # not read as rich markup


def test_the_metrics_footnote_wraps_between_words_at_80_and_120_columns(capsys, monkeypatch):
    """Issue 48: the line under the table was cut mid-word by the terminal."""
    for columns in (80, 120):
        monkeypatch.setenv("COLUMNS", str(columns))
        assert main(["metrics"]) == 0
        lines = capsys.readouterr().out.splitlines()
        note = lines[lines.index(next(line for line in lines if line.startswith("by default:"))) :]
        assert all(len(line) <= columns for line in note)
        assert " ".join(note) == (
            "by default: R@1, R@5, P@1, AP, RR, nDCG@10; any other ir-measures name is delegated to it"
        )
