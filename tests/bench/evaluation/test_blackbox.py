"""Black-box evaluation of TREC runs and predictions files equals ir-measures on the same files."""

import gzip
import re
from pathlib import Path
from typing import Any

import ir_measures
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from rankuq.bench import metrics
from rankuq.bench.evaluation.blackbox import evaluate_file, trec_run_to_predictions
from rankuq.bench.metrics.ece import balanced_weights, expected_calibration_error
from rankuq.bench.predictions import PROBABILISTIC_KEY, predictions_table
from rankuq.errors import RankuqError
from rankuq.tasks.trec_format import read_trec_qrels, read_trec_run

DEFAULT = list(metrics.DEFAULT_METRICS)


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(f"{line}\n" for line in lines))
    return path


def trec_files(tmp_path: Path, seed: int, probabilities: bool) -> tuple[Path, Path]:
    """Qrels for q0..q39 (graded, some relevant documents never retrieved, q0 with nothing
    relevant); a run for q0..q34 plus unjudged q90..q92, with unjudged documents and ties."""
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    for q in range(40):
        docs = [f"d{j}" for j in range(rng.integers(1, 25))]
        labels = rng.choice(4, len(docs), p=[0.6, 0.2, 0.1, 0.1]) * (q > 0)
        qrels += [f"q{q} 0 {d} {label}" for d, label in zip(docs, labels, strict=True)]
        qrels.append(f"q{q} 0 never-retrieved {int(q % 3 == 0)}")
    for q in [*range(35), 90, 91, 92]:
        docs = [f"d{j}" for j in range(rng.integers(1, 30))]  # beyond the judged ones: unjudged
        scores = rng.integers(0, 8, len(docs)) / 7 if probabilities else rng.normal(0, 5, len(docs))
        run += [
            f"q{q}\tQ0\t{d}\t{r}\t{float(s)!r}\ttag"
            for r, (d, s) in enumerate(zip(docs, scores, strict=True))
        ]
    rng.shuffle(run)
    return write(tmp_path / "run.txt", run), write(tmp_path / "qrels.txt", qrels)


def ir_measures_means(run: Path, qrels: Path, names: list[str]) -> dict[str, float]:
    measures = [ir_measures.parse_measure(name) for name in names]
    values = ir_measures.calc_aggregate(
        measures, ir_measures.read_trec_qrels(str(qrels)), ir_measures.read_trec_run(str(run))
    )
    return {str(measure): value for measure, value in values.items()}


@pytest.mark.parametrize("seed", range(3))
def test_trec_run_matches_ir_measures(tmp_path: Path, seed: int) -> None:
    run, qrels = trec_files(tmp_path, seed, probabilities=False)
    ours = evaluate_file(trec_run=run, qrels=qrels)
    assert list(ours) == DEFAULT  # scores are not probabilities: no ECE
    expected = ir_measures_means(run, qrels, DEFAULT)
    for name in DEFAULT:
        assert ours[name] == pytest.approx(expected[name], abs=1e-9), name


def test_probability_run_adds_ece_over_judged_queries(tmp_path: Path) -> None:
    run, qrels = trec_files(tmp_path, 3, probabilities=True)
    ours = evaluate_file(
        trec_run=run, qrels=qrels, names=["AP", "nDCG", "P@10", "ECE", "ECE.all"], probabilities=True
    )
    expected = ir_measures_means(run, qrels, ["AP", "nDCG", "P@10"])
    for name, value in expected.items():
        assert ours[name] == pytest.approx(value, abs=1e-9), name
    judged = {(q, d): int(rel) for q, _, d, rel in map(str.split, qrels.read_text().splitlines())}
    rows = [(q, d, float(s)) for q, _, d, _, s, _ in map(str.split, run.read_text().splitlines())]
    rows = [row for row in rows if row[0] in {q for q, _ in judged}]
    relevant = np.array([judged.get((q, d), 0) > 0 for q, d, _ in rows])
    scores = np.array([s for *_, s in rows])
    assert ours["ECE.all"] == pytest.approx(expected_calibration_error(scores, relevant), abs=1e-12)
    query = np.unique([q for q, *_ in rows], return_inverse=True)[1]
    weights = balanced_weights(query, relevant)
    assert ours["ECE"] == pytest.approx(
        expected_calibration_error(scores, relevant, weights=weights), abs=1e-12
    )


def test_trec_run_to_predictions_follows_the_contract(tmp_path: Path) -> None:
    run = read_trec_run(
        write(
            tmp_path / "run",
            ["q1 Q0 a 1 0.123456789012345 t", "q1 Q0 b 2 0.1 t", "q9 Q0 a 1 0.5 t"],
        )
    )
    qrels = read_trec_qrels(write(tmp_path / "qrels", ["q1 0 b 2", "q1 0 c 1", "q2 0 a 1"]))
    table = trec_run_to_predictions(run, qrels, probabilities=True)
    assert table.to_pydict() | {"samples": None} == {
        "qid": ["q1", "q1"],  # q9 is not judged
        "cid": ["a", "b"],
        "label": [0, 2],  # a is unjudged
        "samples": None,
        "prob_mean": [0.123456789012345, 0.1],  # exact, not the float32 sample
    }
    assert table["samples"].type == pa.list_(pa.float32())
    assert table.schema.metadata[PROBABILISTIC_KEY] == b"true"
    assert trec_run_to_predictions(run, qrels).schema.metadata[PROBABILISTIC_KEY] == b"false"  # no guessing
    loud = run.set_column(2, "score", pa.array([3.0, 0.1, 0.5]))
    with pytest.raises(
        RankuqError, match=r"--probabilities, but qid q1 docno a scores 3.0, outside \[0, 1\]"
    ):
        trec_run_to_predictions(loud, qrels, probabilities=True)


def test_predictions_file_keeps_queries_without_relevant(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    qid = [f"q{i // 6}" for i in range(60)]
    labels = (rng.random(60) < 0.3) * np.array([i >= 6 for i in range(60)])  # q0: none relevant
    table = predictions_table(qid, [f"c{i}" for i in range(60)], labels, rng.random((60, 3)))
    pq.write_table(table, tmp_path / "p.parquet")
    ours = evaluate_file(predictions=tmp_path / "p.parquet")
    assert list(ours) == [*DEFAULT, "ECE", "ECE.all"]
    assert ours == metrics.compute(table, [*DEFAULT, "ECE", "ECE.all"])
    qrels = [ir_measures.Qrel(q, f"c{i}", int(x)) for i, (q, x) in enumerate(zip(qid, labels, strict=True))]
    run = [
        ir_measures.ScoredDoc(q, c, s)
        for q, c, s in zip(qid, table["cid"].to_pylist(), table["prob_mean"].to_pylist(), strict=True)
    ]
    expected = ir_measures.calc_aggregate(map(ir_measures.parse_measure, DEFAULT), qrels, run)
    for measure, value in expected.items():
        assert ours[str(measure)] == pytest.approx(value, abs=1e-9)


def test_gzip_crlf_blank_lines_and_no_final_newline_are_read(tmp_path: Path) -> None:
    run = tmp_path / "run.gz"
    with gzip.open(run, "wb") as f:
        f.write(b"q1 Q0 a 1 2.0 t\r\n\r\n  q1\tQ0  b 2 1.0 t")
    qrels = write(tmp_path / "qrels", ["", "q1 0 b 1"])
    assert evaluate_file(trec_run=run, qrels=qrels, names=["RR"]) == {"RR": 0.5}


@pytest.mark.parametrize(
    ("run_lines", "qrels_lines", "message"),
    [
        (["q1 Q0 a 1 1.0 t", "", "q1 Q0 b 2 0.5"], ["q1 0 a 1"],
         "run, line 3: expected 6 whitespace-separated fields 'qid Q0 docno rank score tag'"),
        (["q1 Q0 a 1 1.0 t", "q1 Q0 b 2 high t"], ["q1 0 a 1"],
         "run, line 2: score 'high' is not a number"),
        (["q1 Q0 a 1 nan t"], ["q1 0 a 1"], "run, line 1: score nan is not finite"),
        (["q1 Q0 a 1 1 t", "q1 Q0 b 2 1 t", "q1 Q0 a 3 1 t"], ["q1 0 a 1"],
         "run, line 3: docno a appears again for qid q1 (first on line 1)"),
        (["q1 Q0 a 1 1.0 t"], ["q1 0 a 1", "q1 0 b"],
         "qrels, line 2: expected 4 whitespace-separated fields 'qid 0 docno relevance', got 3"),
        (["q1 Q0 a 1 1.0 t"], ["q1 0 a 1.5"], "qrels, line 1: relevance '1.5' is not an integer"),
        (["q1 Q0 a 1 1.0 t"], ["q1 0 b 0", "q1 0 a -1"], "qrels, line 2: relevance -1 is outside"),
        (["q1 Q0 a 1 1.0 t"], [], "qrels: no lines to read"),
        (["q1 Q0 a 1 1.0 t"], ["q2 0 a 1"], "the run and the qrels share no query id"),
    ],
)  # fmt: skip
def test_malformed_files_are_refused_by_line(
    tmp_path: Path, run_lines: list[str], qrels_lines: list[str], message: str
) -> None:
    run, qrels = write(tmp_path / "run", run_lines), write(tmp_path / "qrels", qrels_lines)
    with pytest.raises(RankuqError, match=re.escape(message)):
        evaluate_file(trec_run=run, qrels=qrels, strict=True)  # strict: a repeated docno is refused too


def test_wrong_inputs_are_refused(tmp_path: Path) -> None:
    run = write(tmp_path / "run", ["q1 Q0 a 1 1.0 t"])
    given: list[dict[str, Any]] = [{"trec_run": run}, {}, {"trec_run": run, "qrels": run, "predictions": run}]
    for kwargs in given:
        with pytest.raises(RankuqError, match="either a TREC run with its qrels"):
            evaluate_file(**kwargs)
    (tmp_path / "latin1").write_bytes(b"q1 Q0 a 1 1.0 t\nq1 Q0 caf\xe9 2 0.5 t\n")
    qrels = write(tmp_path / "qrels", ["q1 0 a 1"])  # the qrels are read first: valid ones
    with pytest.raises(RankuqError, match="latin1, line 2: not UTF-8 text"):
        evaluate_file(trec_run=tmp_path / "latin1", qrels=qrels)
    with pytest.raises(RankuqError, match=r"missing\.txt: cannot read"):
        evaluate_file(trec_run=tmp_path / "missing.txt", qrels=qrels)
    with pytest.raises(RankuqError, match="run: cannot read as Parquet"):
        evaluate_file(predictions=run)
    pq.write_table(pa.table({"qid": ["q"], "cid": ["a"]}), tmp_path / "p.parquet")
    with pytest.raises(RankuqError, match=r"p.parquet: missing prediction columns \['label'"):
        evaluate_file(predictions=tmp_path / "p.parquet")


def stochastic_file(path: Path, n_queries: int, seed: int = 0) -> Path:
    """A stochastic ranker's predictions (S = 4) for q00…: every other query has a relevant
    candidate among 6, the rest none (NOTA)."""
    rng = np.random.default_rng(seed)
    qid = np.repeat([f"q{i:02d}" for i in range(n_queries)], 6)
    labels = np.zeros(qid.size, dtype=int)
    labels[np.arange(0, n_queries, 2) * 6 + rng.integers(0, 6, (n_queries + 1) // 2)] = 1
    draws = np.clip(
        0.3 + 0.3 * labels[:, None] + rng.normal(0, 0.2, (qid.size, 1)) + rng.normal(0, 0.05, (qid.size, 4)),
        0,
        1,
    )
    pq.write_table(
        predictions_table(qid.tolist(), [f"c{i % 6}" for i in range(qid.size)], labels, draws), path
    )
    return path


def test_probes_add_their_keys_to_the_metrics(tmp_path: Path) -> None:
    from rankuq.bench.probes import PROBES

    path = stochastic_file(tmp_path / "p.parquet", 30)
    values = evaluate_file(
        predictions=path, probes=["calibration", "risk", "nota", "cutoff"], dev=path, seed=3
    )
    table = pq.read_table(path)
    assert {k: values[k] for k in DEFAULT} == metrics.compute(table, DEFAULT)
    for name in ("calibration", "risk", "nota", "cutoff"):
        expected = PROBES.get(name)(table, dev=table, seed=3).metrics
        assert {k: values[k] for k in expected} == expected, name
    assert values["ECE"] == metrics.compute(table, ["ECE"])["ECE"]  # the probe's ECE is the metric's
    assert values["ECE.all"] == metrics.compute(table, ["ECE.all"])["ECE.all"]


def test_the_cli_scores_a_black_box_run_with_probes(
    tmp_path: Path, capsys: pytest.CaptureFixture, caplog: pytest.LogCaptureFixture
) -> None:
    """Raw TREC scores: ERCE but no ECE, CVaR, reference-free and fitted abstention, cutoff;
    what a probe leaves out is logged (stderr outside pytest)."""
    import json

    from rankuq.bench.cli.main import main

    run, qrels = trec_files(tmp_path, 1, probabilities=False)
    assert (
        main(
            [
                "evaluate",
                "--run",
                str(run),
                "--qrels",
                str(qrels),
                "--calibration",
                "--risk",
                "--cutoff",
                "--json",
            ]
        )
        == 0
    )
    values = json.loads(capsys.readouterr().out)
    assert {
        "ERCE",
        "CVaR.optimistic.AP",
        "CVaR.pessimistic.nDCG@10.p_value",
        "cutoff.F1_ratio.scores",
    } <= set(values)
    assert "ECE" not in values and "RA.b" not in values
    assert "scores are not probabilities" in caplog.text and "no dev table" in caplog.text
    path = stochastic_file(tmp_path / "p.parquet", 20)
    assert main(["evaluate", "--predictions", str(path), "--abstention", "--json"]) == 0
    values = json.loads(capsys.readouterr().out)
    assert {
        "nAUC.AP.u_max",
        "nAUC.RR.u_lin",
        "nAUC.nDCG@10.u_top_var",
        "threshold.rate_MAE.50.u_std",
    } <= set(values)


def test_probe_input_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from rankuq.bench.cli.main import main

    run, qrels = trec_files(tmp_path, 2, probabilities=True)
    assert main(["evaluate", "--run", str(run), "--qrels", str(qrels), "--nota"]) == 2
    assert "NOTA prediction needs at least 5 queries with and 5 without" in capsys.readouterr().err
    assert (
        main(
            [
                "evaluate",
                "--run",
                str(run),
                "--qrels",
                str(qrels),
                "--risk",
                "--dev",
                str(tmp_path / "no.parquet"),
            ]
        )
        == 2
    )
    assert "no.parquet: cannot read as Parquet" in capsys.readouterr().err


def wikiqa_trec_files(wikiqa: pa.Table, folder: Path) -> tuple[Path, Path]:
    """A real run: the word-overlap ranker's scores of the WikiQA test split (the ``wikiqa``
    fixture) written by ``rankuq evaluate --write-run``, and its qrels from the split's labels."""
    from rankuq.bench.cli.main import main

    predictions, run, qrels = folder / "wikiqa.parquet", folder / "wikiqa.run", folder / "wikiqa.qrels"
    pq.write_table(wikiqa, predictions)
    assert main(["evaluate", "--predictions", str(predictions), "--write-run", str(run), "--json"]) == 0
    judged = zip(
        wikiqa["qid"].to_pylist(), wikiqa["cid"].to_pylist(), wikiqa["label"].to_pylist(), strict=True
    )
    write(qrels, [f"{q} 0 {d} {label}" for q, d, label in judged])
    return run, qrels


SUBSET = ["AP", "AP@5", "nDCG", "nDCG@3", "P@5", "R@10", "RR"]


def test_a_real_run_s_chosen_metrics_and_per_query_values_equal_ir_measures(
    wikiqa: pa.Table, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    import json

    from rankuq.bench.cli.main import main

    run, qrels = wikiqa_trec_files(wikiqa, tmp_path)
    capsys.readouterr()
    assert len(run.read_text().splitlines()) == wikiqa.num_rows
    command = ["evaluate", "--run", str(run), "--qrels", str(qrels), "--json", "--metrics", ",".join(SUBSET)]
    assert main(command) == 0
    ours = json.loads(capsys.readouterr().out)
    expected = ir_measures_means(run, qrels, SUBSET)
    assert list(ours) == SUBSET  # no ECE: a TREC run's scores are not probabilities unless told
    for name in SUBSET:
        assert abs(ours[name] - expected[name]) < 1e-9, name
    assert main([*command, "-q"]) == 0
    by_query = json.loads(capsys.readouterr().out)
    assert by_query["all"] == ours
    measures = [ir_measures.parse_measure(name) for name in SUBSET]
    theirs = ir_measures.iter_calc(
        measures, ir_measures.read_trec_qrels(str(qrels)), ir_measures.read_trec_run(str(run))
    )
    checked = 0
    for row in theirs:
        assert abs(by_query["per_query"][row.query_id][str(row.measure)] - row.value) < 1e-9
        checked += 1
    assert checked == len(by_query["per_query"]) * len(SUBSET)  # every query of the qrels is in the run


def test_unknown_metrics_and_confidences_exit_2_listing_the_valid_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    from rankuq.bench.cli.main import main

    run, qrels = trec_files(tmp_path, 0, probabilities=False)
    files = ["evaluate", "--run", str(run), "--qrels", str(qrels)]
    assert main([*files, "--metrics", "AP,nERR@20"]) == 2
    error = capsys.readouterr().err.strip()
    assert "unknown metric 'nERR@20'" in error and "nDCG[@k]" in error and "\n" not in error
    assert main([*files, "--abstention", "--confidences", "u_max,u_best"]) == 2
    error = capsys.readouterr().err.strip()
    assert "unknown confidence function 'u_best'" in error and "u_1-2" in error and "u_mlp" in error
    assert main([*files, "--confidences", "u_max"]) == 2
    assert "add --abstention" in capsys.readouterr().err
    assert main([*files, "--probabilities"]) == 2  # raw scores from a normal distribution
    assert "outside [0, 1]" in capsys.readouterr().err
    assert main([*files, "--risk", "--dev-run", str(run)]) == 2
    assert "(--dev-run RUN --dev-qrels QRELS)" in capsys.readouterr().err


def test_reference_free_confidences_give_whole_table_naucs_under_one_spelling(
    wikiqa: pa.Table, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """The bar: --abstention --confidences u_max,u_std,u_1-2 on a TREC run scores each confidence
    on every usable query (no 80/20 splits, no reference set), keyed nAUC.nDCG@10.u_max."""
    import json

    from rankuq.bench.cli.main import main
    from rankuq.bench.probes import scored_lists
    from rankuq.bench.probes.abstention_protocol import normalised_auc, usable
    from rankuq.bench.probes.confidence import free_confidence

    run, qrels = wikiqa_trec_files(wikiqa, tmp_path)
    capsys.readouterr()
    free = ["u_max", "u_std", "u_1-2"]
    command = ["evaluate", "--run", str(run), "--qrels", str(qrels), "--abstention", "--json"]
    assert main([*command, "--confidences", ",".join(free)]) == 0
    values = json.loads(capsys.readouterr().out)
    lists, _ = usable(scored_lists(read_inputs_table(run, qrels), str(run)))
    for metric in ("AP", "nDCG@10", "RR"):
        per_query = lists.per_query([metric])[metric]
        for u in free:
            expected = normalised_auc(per_query, free_confidence(lists, u)).value
            assert values[f"nAUC.{metric}.{u}"] == pytest.approx(expected, abs=1e-12), (metric, u)
    assert not [k for k in values if "_at_" in k or "u_lin" in k or k.startswith("threshold.")]


def read_inputs_table(run: Path, qrels: Path) -> pa.Table:
    from rankuq.bench.evaluation.blackbox import read_inputs

    return read_inputs(trec_run=run, qrels=qrels).table


def test_a_dev_split_as_trec_files_equals_the_same_dev_as_predictions(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    import json

    from rankuq.bench.cli.main import main

    run, qrels = trec_files(tmp_path, 4, probabilities=True)
    (tmp_path / "dev").mkdir()
    dev_run, dev_qrels = trec_files(tmp_path / "dev", 5, probabilities=True)
    dev = tmp_path / "dev.parquet"
    pq.write_table(read_inputs_table(dev_run, dev_qrels), dev)
    files = ["evaluate", "--run", str(run), "--qrels", str(qrels), "--risk", "--json"]
    assert main([*files, "--dev-run", str(dev_run), "--dev-qrels", str(dev_qrels)]) == 0
    from_trec = json.loads(capsys.readouterr().out)
    assert main([*files, "--dev", str(dev)]) == 0
    assert (
        from_trec == json.loads(capsys.readouterr().out) and "RA.b" in from_trec and "RA.nDCG@10" in from_trec
    )
    assert "ECE" not in from_trec  # a TREC run is not probabilities by default
    assert main([*files, "--probabilities", "--dev-run", str(dev_run), "--dev-qrels", str(dev_qrels)]) == 0
    assert "ECE" in json.loads(capsys.readouterr().out)
