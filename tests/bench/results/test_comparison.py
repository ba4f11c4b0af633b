"""``rankuq compare`` (and ``rankuq.compare``): the paired t-test's p-values equal ranx's ``compare``
on real WikiQA runs, worked values on four queries, the marks, and one-line refusals."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from ranx import Qrels, Run
from ranx import compare as ranx_compare

import rankuq
from rankuq.bench import api
from rankuq.bench.cli.main import main
from rankuq.bench.results.comparison import compare
from rankuq.bench.results.leaderboard import WORSE
from rankuq.errors import RankuqError


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(f"{line}\n" for line in lines))
    return path


@pytest.fixture(scope="module")
def wikiqa_runs(wikiqa: pa.Table, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """The real WikiQA test split (633 questions, 390 without a correct sentence) as TREC files: the
    stand-in ranker's mean over its 10 draws, and its first draw alone (a noisier ranker)."""
    folder = tmp_path_factory.mktemp("runs")
    qid, cid = wikiqa["qid"].to_pylist(), wikiqa["cid"].to_pylist()
    draws = wikiqa["samples"].combine_chunks().flatten().to_numpy().reshape(len(qid), -1)
    runs = {"mean.run": wikiqa["prob_mean"].to_numpy(), "draw.run": draws[:, 0]}
    for name, scores in runs.items():
        write(
            folder / name,
            [f"{q} Q0 {c} 0 {float(s)!r} {name}" for q, c, s in zip(qid, cid, scores, strict=True)],
        )
    labels = wikiqa["label"].to_pylist()
    qrels = write(
        folder / "qrels", [f"{q} 0 {c} {label}" for q, c, label in zip(qid, cid, labels, strict=True)]
    )
    return folder / "mean.run", folder / "draw.run", qrels


@pytest.mark.slow  # ranx's numba compile (31 s); the t-test equals scipy's in test_paired_tests
def test_t_test_p_values_equal_ranx_compare(wikiqa_runs: tuple[Path, Path, Path]) -> None:
    mean_run, draw_run, qrels = wikiqa_runs
    runs = [Run.from_file(str(path), kind="trec") for path in (mean_run, draw_run)]
    for run, name in zip(runs, ("mean", "draw"), strict=True):
        run.name = name
    report = ranx_compare(
        Qrels.from_file(str(qrels), kind="trec"), runs, ["map", "ndcg@10", "mrr@10"], stat_test="student"
    )
    expected = report.comparisons[frozenset(["mean", "draw"])]
    ours = compare([mean_run, draw_run], qrels, names=["AP", "nDCG@10", "RR@10"])
    assert ours.queries == 633 and ours.baseline == "mean.run"
    row = ours.table.set_index("run").loc["draw.run"]
    for name, theirs in (("AP", "map"), ("nDCG@10", "ndcg@10"), ("RR@10", "mrr@10")):
        assert row[f"{name} t-test p"] == pytest.approx(expected[theirs]["p_value"], abs=1e-6)
        assert row[name] == pytest.approx(report.results["draw"][theirs], abs=1e-12)
        assert 0 < row[f"{name} t-test p"] < 0.05  # a real difference, so the parity is not of p = 1
    assert (row[[f"{name} mark" for name in ours.metrics]] == WORSE).all()  # one draw ranks worse


def test_worked_values_on_four_queries(tmp_path: Path) -> None:
    """AP per query: the baseline ranks the relevant document first only on q1 (1, 1/2, 1/2, 1/2), the
    run on q1 to q3 (1, 1, 1, 1/2). Differences 0 ½ ½ 0: t = 0.25 / (√(1/12) / 2) = √3, df 3,
    p = 0.1817; the randomisation test flips 16 ways, 8 with |mean| = 0.25: p = 0.5. Holm over the
    two metrics (AP and RR are equal here) doubles the smaller p."""
    qrels = write(tmp_path / "qrels", [f"q{q} 0 rel 1" for q in range(1, 5)])
    base = write(tmp_path / "base", [f"q{q} Q0 rel 0 {0.9 if q == 1 else 0.1} b" for q in range(1, 5)]
                 + [f"q{q} Q0 other 0 0.5 b" for q in range(1, 5)])  # fmt: skip
    run = write(tmp_path / "run", [f"q{q} Q0 rel 0 {0.9 if q < 4 else 0.1} r" for q in range(1, 5)]
                + [f"q{q} Q0 other 0 0.5 r" for q in range(1, 5)])  # fmt: skip
    table = compare([base, run], qrels, names=["AP", "RR"], correction="holm", test="randomisation").table
    row = table.iloc[1]
    assert (row["AP"], table.iloc[0]["AP"]) == (pytest.approx(7 / 8), pytest.approx(5 / 8))
    assert row["AP randomisation p"] == pytest.approx(0.5)
    assert row["AP randomisation p holm"] == pytest.approx(1.0)  # 2 × 0.5
    assert "AP t-test p" not in table  # only the test asked for runs
    assert row["AP mark"] == "" and table.iloc[0]["AP mark"] == ""
    table = compare([base, run], qrels, names=["AP", "RR"], correction="holm").table
    row = table.iloc[1]
    assert row["AP t-test p"] == pytest.approx(0.18169, abs=1e-5)
    assert row["AP t-test p holm"] == pytest.approx(2 * 0.18169, abs=1e-5)
    assert np.isnan(table.iloc[0]["AP t-test p"])  # the baseline is not tested against itself


def test_the_t_test_never_runs_the_randomisation_test(
    wikiqa_runs: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the randomisation test ran under --test t")

    monkeypatch.setattr("rankuq.bench.results.comparison.randomisation_ps", refuse)
    mean_run, draw_run, qrels = wikiqa_runs
    table = compare([mean_run, draw_run], qrels, names=["AP"], test="t").table
    assert [c for c in table.columns.astype(str) if "randomisation" in c] == []


def test_json_holds_the_p_values_of_the_test_asked(
    wikiqa_runs: tuple[Path, Path, Path], capsys: pytest.CaptureFixture
) -> None:
    mean_run, draw_run, qrels = wikiqa_runs
    argv = ["compare", str(mean_run), str(draw_run), "--qrels", str(qrels), "--metrics", "AP,RR@10"]
    assert main([*argv, "--json", "--correction", "holm", "--test", "randomisation"]) == 0
    found = json.loads(capsys.readouterr().out)
    table = compare(
        [mean_run, draw_run], qrels, names=["AP", "RR@10"], correction="holm", test="randomisation"
    ).table
    assert (found["test"], found["correction"], found["queries"]) == ("randomisation", "holm", 633)
    base, run = found["runs"]
    assert base["baseline"] and base["metrics"]["AP"]["p"] is None
    ap = run["metrics"]["AP"]
    assert ap["p"] == table["AP randomisation p"].iloc[1] and 0 < ap["p"] < 0.05
    assert ap["p_corrected"] == table["AP randomisation p holm"].iloc[1] and ap["mark"] == WORSE


def test_one_query_is_refused_naming_the_test_asked(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    qrels = write(tmp_path / "qrels", ["q1 0 rel 1"])
    base = write(tmp_path / "base", ["q1 Q0 rel 0 0.9 b", "q1 Q0 other 0 0.5 b"])
    run = write(tmp_path / "run", ["q1 Q0 rel 0 0.1 r", "q1 Q0 other 0 0.5 r"])
    for test, name in (("randomisation", "randomisation test"), ("t", "t-test")):  # not "t-test test"
        assert main(["compare", str(base), str(run), "--qrels", str(qrels), "--test", test]) == 2
        error = capsys.readouterr().err.strip()
        assert f"--test {test}: a paired {name} needs 2 or more queries" in error and "\n" not in error


def test_the_api_and_the_command_give_the_table(
    wikiqa_runs: tuple[Path, Path, Path], capsys: pytest.CaptureFixture
) -> None:
    mean_run, draw_run, qrels = wikiqa_runs
    assert rankuq.compare is api.compare  # the lazy attribute of the package
    frame = api.compare([draw_run], qrels=qrels, baseline=mean_run, metrics=["AP"])
    pd.testing.assert_frame_equal(frame, compare([mean_run, draw_run], qrels, names=["AP"]).table)
    assert (
        main(["compare", str(mean_run), str(draw_run), "--qrels", str(qrels), "--metrics", "AP,RR@10"]) == 0
    )
    out = capsys.readouterr().out
    assert "mean.run (baseline)" in out and f"{WORSE}" in out and "Benjamini–Hochberg" in out
    p = compare([mean_run, draw_run], qrels, names=["AP", "RR@10"]).table["AP t-test p bh"].iloc[1]
    assert f"{p:.4g}" in out
    assert "p-values: paired t-test, Benjamini–Hochberg-corrected (raw in brackets)" in out
    assert "over the 633 queries of the qrels" in out


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--metrics", "ECE"], "--metrics ECE: pooled over every candidate"),
        (["--metrics", "MAPS"], "unknown metric 'MAPS'"),
        (["--baseline", "missing.run"], "missing.run"),
    ],
)
def test_bad_input_exits_2_with_one_line(
    wikiqa_runs: tuple[Path, Path, Path], capsys: pytest.CaptureFixture, extra: list[str], message: str
) -> None:
    mean_run, draw_run, qrels = wikiqa_runs
    assert main(["compare", str(mean_run), str(draw_run), "--qrels", str(qrels), *extra]) == 2
    error = capsys.readouterr().err.strip()
    assert message in error and "\n" not in error


def test_one_run_is_refused(wikiqa_runs: tuple[Path, Path, Path]) -> None:
    mean_run, _, qrels = wikiqa_runs
    with pytest.raises(RankuqError, match="at least two runs"):
        compare([mean_run], qrels, baseline=mean_run)
