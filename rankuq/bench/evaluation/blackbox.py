"""Black-box evaluation: a TREC run and qrels, or a predictions Parquet file → metric values.

Values equal ir-measures' defaults (``ir_measures.calc_aggregate`` with pytrec_eval) on the same
files: the mean is over every query of the qrels (one missing from the TREC run scores 0 on every
metric, as ir-measures fills it in), its queries without judgments are ignored, unjudged
documents count as non-relevant, relevant documents it missed still count in R@k, AP and
the nDCG ideal, and ties are broken as trec_eval does (``bench.metrics.matrix``).
"""

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from rankuq.bench import metrics
from rankuq.bench.predictions import (
    PROBABILISTIC_KEY,
    is_probabilistic,
    predictions_table,
    validate_predictions,
)
from rankuq.errors import RankuqError
from rankuq.tasks.trec_format import read_trec_qrels, read_trec_run

DEV_PROBES = ("risk", "abstention")  # the probes that fit on a dev split (bench.probes)


def trec_run_to_predictions(
    trec_run: pa.Table, qrels: pa.Table, probabilities: bool = False, source: str = "the TREC run"
) -> pa.Table:
    """A contract-2 table of the TREC run's documents for the queries the qrels judge.

    label is the qrels relevance, 0 for unjudged documents; samples = [score] (float32, the
    contract's type) while prob_mean keeps the exact float64 score so rankings match trec_eval.
    The table is probabilistic only when ``probabilities`` says the scores are P(relevant), which
    every score in [0, 1] must then be. Queries only in the qrels cannot appear here (they have no
    candidates): pass the qrels to ``metrics.compute`` to count them.
    """
    judged = trec_run.filter(pc.is_in(trec_run["qid"], value_set=pc.unique(qrels["qid"])))
    if judged.num_rows == 0:
        raise RankuqError("the run and the qrels share no query id; check that they are for the same topics")
    scores = judged["score"].to_numpy()
    table = predictions_table(
        judged["qid"].to_pylist(),
        judged["cid"].to_pylist(),
        _judgements(judged, qrels),
        scores[:, None],
        probabilistic=probabilities,
        mean=scores,
    )
    if probabilities:
        check_probabilities(table, source)
    return table


def check_probabilities(table: pa.Table, source: str) -> None:
    """Refuse --probabilities for scores outside [0, 1], naming the first such candidate."""
    scores = table["prob_mean"].to_numpy()
    outside = np.flatnonzero((scores < 0) | (scores > 1))
    if outside.size:
        row = int(outside[0])
        raise RankuqError(
            f"{source}: --probabilities, but qid {table['qid'][row]} docno {table['cid'][row]} scores "
            f"{float(scores[row])!r}, outside [0, 1] ({outside.size} such scores); drop --probabilities for "
            "ranking scores that are not P(relevant)"
        )


def _judgements(trec_run: pa.Table, qrels: pa.Table) -> np.ndarray:
    """Each TREC run row's qrels label, 0 when unjudged: (qid, cid) pairs of both tables coded
    together, which keeps the TREC run's row order (a join would not) and is several times faster."""
    codes = [
        pc.dictionary_encode(
            pa.concat_arrays([trec_run[name].combine_chunks(), qrels[name].combine_chunks()])
        )
        for name in ("qid", "cid")
    ]
    pairs = codes[0].indices.to_numpy().astype(np.int64) * len(codes[1].dictionary)
    _, pair = np.unique(pairs + codes[1].indices.to_numpy(), return_inverse=True)
    label_of = np.zeros(pair.max() + 1, dtype=np.int8)
    label_of[pair[trec_run.num_rows :]] = qrels["label"].to_numpy()
    return label_of[pair[: trec_run.num_rows]]


@dataclass(frozen=True)
class Evaluated:
    """What ``rankuq evaluate`` scores: a contract-2 table, the qrels behind it (None for a
    predictions file, its own qrels) and the file it came from (for messages)."""

    table: pa.Table
    qrels: pa.Table | None
    source: str


def read_inputs(
    *,
    trec_run: Path | None = None,
    qrels: Path | pa.Table | None = None,
    predictions: Path | pa.Table | None = None,
    strict: bool = False,
    probabilities: bool | None = None,
    flags: tuple[str, str, str] = ("--run", "--qrels", "--predictions"),
) -> Evaluated:
    """A TREC run with its qrels (a file, or the table ``read_trec_qrels`` read: a pipe is read once),
    or a predictions Parquet file (or a table in memory), as a contract-2 table.

    ``probabilities`` says whether the scores are P(relevant): a TREC run's are not unless it
    is True; a predictions file's follow its own flag unless it is given (an unflagged table's:
    every prob_mean in [0, 1]). ``flags`` name the options in messages (the dev split has its own)."""
    if predictions is not None and trec_run is None and qrels is None:
        if isinstance(predictions, pa.Table):
            found, source = predictions, f"the {flags[2].removeprefix('--')} table"
        else:
            found, source = _read_parquet(predictions), str(predictions)
        table = validate_predictions(found, source)
        if probabilities is not None:
            flag = b"true" if probabilities else b"false"
            table = table.replace_schema_metadata({**(table.schema.metadata or {}), PROBABILISTIC_KEY: flag})
            if probabilities:
                check_probabilities(table, source)
        return Evaluated(table, None, source)
    if predictions is None and trec_run is not None and qrels is not None:
        judged = qrels if isinstance(qrels, pa.Table) else read_trec_qrels(qrels, strict)
        table = trec_run_to_predictions(
            read_trec_run(trec_run, strict), judged, bool(probabilities), str(trec_run)
        )
        return Evaluated(table, judged, str(trec_run))
    trec_run_flag, qrels_flag, predictions_flag = flags
    raise RankuqError(
        f"evaluate either a TREC run with its qrels ({trec_run_flag} RUN {qrels_flag} QRELS) or a "
        f"predictions file ({predictions_flag} FILE.parquet), not both or neither"
    )


def metric_names(evaluated: Evaluated, names: Sequence[str] | None) -> list[str]:
    """``names`` checked (ir-measures spelling), or the defaults: ``DEFAULT_METRICS`` and, for
    probabilities, ``ECE`` and ``ECE.all``."""
    if names is not None:
        for name in names:
            metrics.get(name)  # unknown names: one line listing the valid families
        return list(dict.fromkeys(names))
    extra = ("ECE", "ECE.all") if is_probabilistic(evaluated.table) else ()
    return [*metrics.DEFAULT_METRICS, *extra]


def evaluate_inputs(
    evaluated: Evaluated,
    names: Sequence[str] | None = None,
    probes: Sequence[str] = (),
    dev: Evaluated | None = None,
    seed: int = 0,
    confidences: Sequence[str] | None = None,
) -> dict[str, float]:
    """Metric means (keys spelled as the metrics are, ``nDCG@10``) and the ``probes``' metrics."""
    if confidences and "abstention" not in probes:
        raise RankuqError(
            "--confidences choose the abstention probe's confidence functions; add --abstention"
        )
    table, source = evaluated.table, evaluated.source
    values = metrics.compute(table, metric_names(evaluated, names), qrels=evaluated.qrels, source=source)
    if probes:
        from rankuq.bench import probes as probing  # matplotlib and scikit-learn load only when asked for

        result = probing.probe(
            probing.scored_lists(table, source),
            probes,
            dev=None if dev is None else dev.table,
            seed=seed,
            confidences=confidences,
        )
        for note in result.notes:
            logging.getLogger(__name__).warning("%s", note)
        values |= result.metrics
    return values


def per_query_values(evaluated: Evaluated, names: Sequence[str] | None = None) -> dict[str, dict[str, float]]:
    """Each query's value of every per-query metric (``ir_measures.iter_calc``'s), by qid; queries
    of the qrels that the TREC run missed score 0, as in the means. Pooled metrics (ECE) have none."""
    ranking = [name for name in metric_names(evaluated, names) if not metrics.get(name).family.pooled]
    qids, values = metrics.per_query(evaluated.table, ranking, qrels=evaluated.qrels, source=evaluated.source)
    return {str(qid): {name: float(values[name][i]) for name in ranking} for i, qid in enumerate(qids)}


def evaluate_file(
    *,
    trec_run: Path | None = None,
    qrels: Path | None = None,
    predictions: Path | pa.Table | None = None,
    names: Sequence[str] | None = None,
    probes: Sequence[str] = (),
    dev: Path | pa.Table | None = None,
    dev_trec_run: Path | None = None,
    dev_qrels: Path | None = None,
    seed: int = 0,
    strict: bool = False,
    probabilities: bool | None = None,
    confidences: Sequence[str] | None = None,
) -> dict[str, float]:
    """Metric means for a TREC run + qrels pair, or for a predictions Parquet file, plus ``probes``.

    ``names`` are ir-measures names (default ``R@1 R@5 P@1 AP RR nDCG@10``, and ``ECE``, Penha &
    Hauff, 2021's balanced one, and ``ECE.all``, every candidate pooled, for probabilities). A TREC
    run's scores are probabilities only with ``probabilities`` (checked to lie in [0, 1]); a
    predictions file carries its own flag, which ``probabilities`` overrides. A predictions file
    is its own qrels: every query in it counts, including those with no relevant candidate (as in
    ir-measures).

    ``probes`` (``bench.probes``) score the same queries; the dev split (``dev``, a predictions
    file, or ``dev_trec_run`` with ``dev_qrels``) is the same ranker on a development split: RA's b is
    chosen there and the abstention learners are fitted there (without it: no RA choice, and 80/20
    splits of the file for the learners). ``confidences`` are the abstention probe's functions;
    reference-free ones alone (u_max, u_std, u_1-2) are scored on the whole table. Notes on what a
    probe left out go to the ``bench.evaluation.blackbox`` logger (stderr). ``strict`` refuses a TREC file
    that lists a (qid, docno) twice instead of keeping its last line. Every key spells a metric as
    ir-measures does (``nAUC.nDCG@10.u_max``; MLflow's spelling is made in ``bench.results.tracking``):

    ==============  ============================================================================
    option          keys (m: a metric, u: a confidence function)
    ==============  ============================================================================
    (always)        the metrics' names: ``R@1 R@5 P@1 AP RR nDCG@10`` (and ``ECE``, ``ECE.all``)
    --calibration   ``ECE``, ``ECE.all``, ``ECE.adaptive``, ``ERCE``, ``ECE.nonrel_<k>`` (k = 1, 2, 5, 9),
                    and for probabilities ``Brier``, ``NLL``
    --risk          ``CVaR.optimistic.<m>``, ``CVaR.pessimistic.<m>`` (m: R@1 AP RR nDCG@10) and
                    ``<…>.p_value``; with a dev split also ``RA.b``, ``RA.<m>``, ``RA.neg.b``, ``RA.neg.<m>``
    --abstention    ``nAUC.<m>.<u>``, ``AUC.<m>.<u>``, ``AUC.<m>.oracle``, ``AUC.<m>.random``
                    (m: AP nDCG@10 RR; u: u_max u_std u_1-2 u_lin u_log u_mah u_rf u_mlp,
                    and u_mean_var u_top_var for S > 1 draws), ``threshold.rate_MAE.<r>.<u>``,
                    ``threshold.AP_MAE.<r>.<u>`` (r: 10 50 90), ``break_even.AP``,
                    ``break_even.AP.largest``, ``nAUC.AP.u_lin@<n>`` (n: 100 500)
    --nota          ``NOTA.F1.mean``, ``NOTA.F1.mean.std`` and, for S > 1 draws,
                    ``NOTA.F1.mean_var``, ``NOTA.F1.mean_var.std``, ``NOTA.p_value``
    --cutoff        ``cutoff.F1.oracle``, ``cutoff.F1_ratio.scores`` and, for S > 1 draws,
                    ``cutoff.F1_ratio.uncertainty``, ``cutoff.p_value``
    --moments       for S > 1 draws, ``moments.rho.variance``, ``moments.rho.skew``
    ==============  ============================================================================
    """
    evaluated = read_inputs(
        trec_run=trec_run, qrels=qrels, predictions=predictions, strict=strict, probabilities=probabilities
    )
    reference = read_dev(dev, dev_trec_run, dev_qrels, strict, probabilities, probes)
    return evaluate_inputs(evaluated, names, probes, reference, seed, confidences)


def read_dev(
    dev: Path | pa.Table | None,
    dev_trec_run: Path | None,
    dev_qrels: Path | None,
    strict: bool,
    probabilities: bool | None,
    probes: Sequence[str],
) -> Evaluated | None:
    """The dev split: a predictions file (``--dev``) or a TREC run with its qrels; refused unread
    where none of ``probes`` reads it."""
    given = [
        "the dev table" if isinstance(path, pa.Table) else str(path)
        for path in (dev, dev_trec_run, dev_qrels)
        if path is not None
    ]
    if not given:
        return None
    if not set(probes) & set(DEV_PROBES):  # only the probes that tune on a dev split read one
        raise RankuqError(
            f"the dev split ({', '.join(given)}): only the {' and '.join(DEV_PROBES)} probes read one; "
            f"add --{' or --'.join(DEV_PROBES)}, or drop the dev files"
        )
    return read_inputs(
        trec_run=dev_trec_run,
        qrels=dev_qrels,
        predictions=dev,
        strict=strict,
        probabilities=probabilities,
        flags=("--dev-run", "--dev-qrels", "--dev"),
    )


def _read_parquet(path: Path) -> pa.Table:
    try:
        return pq.read_table(path)
    except (OSError, pa.ArrowInvalid) as error:
        raise RankuqError(
            f"{path}: cannot read as Parquet ({error}); pass a predictions table written by rankuq"
        ) from error
