import re

import numpy as np
import pyarrow as pa
import pytest
from scipy import stats

from rankuq.bench.assess import cached_probes, headline, run_probes, significance
from rankuq.bench.predictions import predictions_table
from rankuq.bench.probes import PROBES, scored_lists
from rankuq.errors import RankuqError


def table(labels: list[list[int]], scores: list[list[float]]) -> pa.Table:
    """One query per list (q0, q1, …), a deterministic ranker's probabilities."""
    qid = [f"q{q}" for q, lab in enumerate(labels) for _ in lab]
    cid = [f"c{j}" for lab in labels for j in range(len(lab))]
    flat = np.array([[s] for query in scores for s in query])
    return predictions_table(qid, cid, np.concatenate(labels), flat, True)


def test_the_probes_see_whole_queries_with_a_relevant_candidate():
    lists = scored_lists(table([[0, 1], [0, 0], [2, 0, 0]], [[0.1, 0.9], [0.5, 0.4], [0.3, 0.2, 0.1]]))
    kept = lists.with_relevant()
    assert kept.qids.tolist() == ["q0", "q2"] and kept.length.tolist() == [2, 3]


def test_significance_is_a_paired_t_test_of_seed_averaged_per_query_values():
    labels = [[1, 0], [1, 0], [1, 0], [1, 0]]
    base = table(labels, [[0.9, 0.1], [0.1, 0.9], [0.1, 0.9], [0.1, 0.9]])  # R@1 per query: 1 0 0 0
    seed_a = table(labels, [[0.9, 0.1], [0.9, 0.1], [0.1, 0.9], [0.1, 0.9]])  # 1 1 0 0
    seed_b = table(labels, [[0.9, 0.1], [0.9, 0.1], [0.9, 0.1], [0.1, 0.9]])  # 1 1 1 0
    p = significance({"base": [base], "new": [seed_a, seed_b]}, "base", ["R@1"])
    expected = stats.ttest_rel([1, 1, 0.5, 0], [1, 0, 0, 0]).pvalue
    assert p == {"new": {"R@1": pytest.approx(expected, abs=1e-12)}}


def test_significance_refuses_methods_scored_on_different_queries():
    first = table([[1, 0], [1, 0]], [[0.9, 0.1], [0.1, 0.9]])
    other = table([[1, 0]], [[0.9, 0.1]])
    with pytest.raises(RankuqError, match="new and the baseline base scored different queries"):
        significance({"base": [first], "new": [other]}, "base", ["R@1"])


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
    values, _notes, plots = cached_probes(folder, wikiqa, None, ["calibration"], seed=0)
    assert {path.name for path in plots} >= {"reliability.png", "reliability_ERCE.png"}
    assert headline(values)["ERCE"] == values["ERCE"] and np.isnan(headline(values)["RA R@1"])
    (folder / "reliability.png").unlink()  # a cache hit reads the folder and recomputes nothing
    again = cached_probes(folder, wikiqa, None, ["calibration"], seed=0)
    assert again[0] == values and "reliability.png" not in {p.name for p in again[2]}
    assert not list(tmp_path.glob(".*tmp"))


def test_every_probe_key_is_a_valid_mlflow_metric_name(wikiqa):
    result = run_probes(wikiqa, None, sorted(PROBES.names()), seed=0)
    # MLflow: "Names may only contain alphanumerics, underscores, dashes, periods, spaces, colon and slashes".
    invalid = [key for key in result.metrics if not re.fullmatch(r"[\w\-. :/]+", key)]
    assert len(result.metrics) > 100 and invalid == []
