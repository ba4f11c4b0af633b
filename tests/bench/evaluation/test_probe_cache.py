"""The probes of one predictions table: a probe the data cannot support becomes a note, the study is cached
in its folder, its keys are valid MLflow names."""

import re
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
from matplotlib.figure import Figure

from rankuq.bench.evaluation.probe_cache import cached_probes, headline, run_probes
from rankuq.bench.predictions import predictions_table
from rankuq.bench.probes import PROBES


def table(labels: list[list[int]], scores: list[list[float]]) -> pa.Table:
    """One query per list (q0, q1, …), a deterministic ranker's probabilities."""
    qid = [f"q{q}" for q, lab in enumerate(labels) for _ in lab]
    cid = [f"c{j}" for lab in labels for j in range(len(lab))]
    flat = np.array([[s] for query in scores for s in query])
    return predictions_table(qid, cid, np.concatenate(labels), flat, True)


def test_a_probe_the_data_cannot_support_becomes_a_note(wikiqa):
    result = run_probes(wikiqa, None, ["calibration", "nota"], seed=0)
    assert result.metrics["ERCE"] >= 0
    # with_relevant() leaves NOTA out of the other probes; the NOTA probe sees the real NOTA questions.
    assert any(key.startswith("NOTA.F1") for key in result.metrics)
    one_list = table([[1, 0, 0]], [[0.9, 0.2, 0.1]])
    noted = run_probes(one_list, None, ["nota"], seed=0)
    assert noted.metrics == {} and noted.notes[0].startswith("nota left out: ")


def test_probes_are_computed_once_into_their_folder(wikiqa, tmp_path):
    folder = tmp_path / "seed-0-abc"
    values, _notes, plots, _parts = cached_probes(folder, wikiqa, None, ["calibration"], seed=0)
    assert {path.name for path in plots} >= {"reliability.png", "reliability_ERCE.png"}
    assert headline(values)["ERCE"] == values["ERCE"] and np.isnan(headline(values)["RA R@1"])
    (folder / "reliability.png").unlink()  # a cache hit reads the folder and recomputes nothing
    again = cached_probes(folder, wikiqa, None, ["calibration"], seed=0)
    assert again[0] == values and "reliability.png" not in {p.name for p in again[2]}
    assert not list(tmp_path.glob(".*tmp"))


def test_every_plot_of_a_study_says_whose_it_is_in_its_title(wikiqa, tmp_path, monkeypatch):
    """Each figure a study saves is titled by the cell (method × condition) on its first line, so a
    PNG opened alone (plots/, MLflow) says what it shows."""
    titles: dict[str, list[str]] = {}
    save = Figure.savefig

    def spy(figure: Figure, path: Path, **kwargs: Any) -> None:
        titles[Path(path).name] = [axis.get_title() for axis in figure.axes if axis.get_title()]
        save(figure, path, **kwargs)

    monkeypatch.setattr(Figure, "savefig", spy)
    subject = "ensemble × wikiqa → trecqa seed 0"
    names = ["abstention", "calibration", "risk"]
    _values, _notes, plots, _parts = cached_probes(tmp_path / "s", wikiqa, None, names, 0, subject=subject)
    assert {".risk_aversion.tmp.png", ".reliability_ERCE.tmp.png", ".abstention_AP.tmp.png"} <= set(titles)
    assert len(titles) == len(plots) >= 8  # every PNG kept was drawn here, each with its title
    assert all(len(found) == 1 and found[0].split("\n")[0] == subject for found in titles.values())
    assert titles[".risk_aversion.tmp.png"] == [f"{subject}\nRA ranking"]
    assert titles[".abstention_AP.tmp.png"] == [subject]  # a plot with no title of its own


def test_every_probe_key_is_a_valid_mlflow_metric_name_at_the_mlflow_boundary(wikiqa):
    from rankuq.bench.results.mlflow_names import mlflow_name

    result = run_probes(wikiqa, None, sorted(PROBES.names()), seed=0)
    assert "nAUC.nDCG@10.u_max" in result.metrics  # the probes spell metrics as ir-measures does
    # MLflow: "Names may only contain alphanumerics, underscores, dashes, periods, spaces, colon and slashes".
    invalid = [key for key in map(mlflow_name, result.metrics) if not re.fullmatch(r"[\w\-. :/]+", key)]
    assert len(result.metrics) > 100 and invalid == []
