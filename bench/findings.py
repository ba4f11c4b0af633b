"""`rankuq findings RUN_DIR…`: the papers' claims (issue 15) measured in finished grid runs, one row each.

A claim is data (``CLAIMS``, one ``Claim`` per claim and method, as ir_measures declares measures): which
grid measures it, the method, the per-seed value (a column of RUN_DIR/seeds.csv), what it is compared with
(the baseline method's value of the same seed, another value of the same cell, the best of several), the
direction the paper found and the kinds of condition it is about. ``findings`` reads each run directory's
grid.yaml (the conditions' kinds), seeds.csv and leaderboard.csv, and writes docs/findings.md.

Per condition, d = value − reference per seed; ours is the method's value and d as mean ± std over seeds.
p: against the baseline on a leaderboard metric, the leaderboard's paired test over queries; where the
probe tests each seed (RA, CVaR, NOTA, cutoff), the largest p over seeds (significant in every seed);
otherwise a paired t-test over seeds (the exact sign test where d is the same in every seed). The
inference-cost claims read method_cost's CSV (``--cost``): per timed repeat, each method's time over
bert's of the same repeat, a paired t-test over the repeats, one condition per MiniLM depth.
Verdict (α = 0.05): *reproduced* when d goes the paper's way with p < α (for "within": |d| ≤ the
margin), *refuted* when it goes significantly the other way (for "within": |d| > the margin with
p < α), *not reproduced* otherwise, *not measured* when no run directory holds it. A claim over
several conditions takes the verdict most of its measured conditions share (reproduced or refuted),
else not reproduced; each condition is listed below the summary table.
"""

import math
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd
from scipy import stats

from rankuq import tasks
from rankuq.bench.files import atomic_write
from rankuq.bench.grid import GridSpec, Shift, load_grid
from rankuq.bench.layout import RunLayout
from rankuq.bench.leaderboard import markdown_text, read_leaderboard
from rankuq.bench.plan import side_lists
from rankuq.bench.provenance import PREDICTIONS_KEY, STALE, Provenance, check
from rankuq.errors import RankuqError

ALPHA = 0.05
REPRODUCED, NOT_REPRODUCED, REFUTED, NOT_MEASURED = "reproduced", "not reproduced", "refuted", "not measured"
Kind = Literal["in-domain", "cross-domain", "cross-NS"]
ALL_KINDS: tuple[Kind, ...] = ("in-domain", "cross-domain", "cross-NS")


@dataclass(frozen=True)
class Claim:
    """One claim of a paper about one method, measured in the run of grid ``grid``.

    ``reference``: None compares with method ``against`` (default: the grid's baseline; same metric,
    same seed); one column compares with that value of the same cell; several, with their best
    (largest) per seed.
    ``expect``: the paper's direction of d = value − reference ("higher", "lower", or "within"
    ``margin``), or "present": the value exists in every seed where the reference (the probe's
    evidence that it ran) does (the break-even size exists only where u_lin overtakes u_std), or
    "at least": the value reaches the floor ``margin`` in every seed (refuted: in none).
    ``condition``: measure the claim in this condition only (the model fit: one row per task).
    ``p_value``: the probe's per-seed p-value column of this comparison, if any.
    """

    id: str
    grid: str
    text: str
    paper: str  # the paper's number
    method: str
    metric: str
    reference: tuple[str, ...] | None = None
    expect: Literal["higher", "lower", "within", "present", "at least"] = "higher"
    kinds: tuple[Kind, ...] = ALL_KINDS
    variant: str | None = "standard"  # of the tested lists; None: any
    p_value: str | None = None
    margin: float = 0.0
    against: str | None = None
    condition: str | None = None

    def compared(self) -> str:
        if self.expect == "at least":
            return f"{self.margin:g}"
        if self.reference is None:
            return self.against or "the baseline"
        return self.reference[0] if len(self.reference) == 1 else f"best of {', '.join(self.reference)}"


def _per_method(methods: Sequence[str], **fields: object) -> list[Claim]:
    """One claim per method, its id suffixed with the method."""
    base = str(fields.pop("id"))
    return [Claim(id=f"{base}-{m}", method=m, **fields) for m in methods]  # type: ignore[arg-type]


STOCHASTIC_000 = ("mc_dropout", "ensemble")
GP = ("sngp", "gpf", "pg_gp")
FREE_CONFIDENCES = ("nAUC.AP.u_max", "nAUC.AP.u_std", "nAUC.AP.u_1-2")

FIT_TASKS = ("wikiqa", "clariq", "semeval", "trecqa_clean")
# Inference cost is no grid's: a run directory holds no scoring times (cached predictions would carry
# stale ones). Its claims read method_cost's CSV of timed repeats (rankuq findings --cost FILE).
COST, COST_METRIC = "method_cost", "inference time (× bert)"
COST_COLUMNS = ("layers", "pairs", "precision", "method", "label", "repeat", "seconds", "command")


def _beats_bm25(grid: str, task: str, id: str, who: str) -> tuple[Claim, ...]:
    """``who`` beats BM25 on ``task``'s condition of ``grid``, in AP and in R@1: two claims."""
    return tuple(
        Claim(
            id=f"{id}-{metric}",
            grid=grid,
            text=f"{who} beats BM25 on {task} ({metric})",
            paper="a fine-tuned cross-encoder above BM25 (every paper's premise)",
            method="bert",
            metric=metric,
            against="bm25",
            kinds=("in-domain",),
            condition=task,
        )
        for metric in ("AP", "R@1")
    )


def _wikiqa_floor(grid: str, id: str, who: str) -> Claim:
    """``who`` reaches issue 15's floor, AP 0.70 on WikiQA test, in every seed of ``grid``."""
    return Claim(
        id=id,
        grid=grid,
        text=f"{who} reaches AP 0.70 on WikiQA test (issue 15's floor)",
        paper="Yang et al., 2015: 0.652 (CNN-Cnt, the dataset's paper); BERT-base about 0.81",
        method="bert",
        metric="AP",
        expect="at least",
        margin=0.70,
        kinds=("in-domain",),
        condition="wikiqa",
    )


# The model fit (issue 15): is the fine-tuned reranker strong enough for the papers' claims to mean
# anything? On each task with a training split, `bert` against BM25 on its own lists (paper002), and
# WikiQA's and TrecQA's conditions trained to convergence (the fit grids; their epochs in LONGER).
LONGER = "bert, up to {} epochs with early stopping on dev,"
MODEL_FIT: tuple[Claim, ...] = (
    _wikiqa_floor("paper002", "fit-wikiqa-ap-floor", "bert"),
    *(claim for task in FIT_TASKS for claim in _beats_bm25("paper002", task, f"fit-{task}", "bert")),
    # paper002 trains one epoch; the fit grids train the same conditions to convergence on dev.
    _wikiqa_floor("fit_wikiqa", "fit-wikiqa-longer-ap-floor", LONGER.format(3)),
    *_beats_bm25("fit_wikiqa", "wikiqa", "fit-wikiqa-longer", LONGER.format(3)),
    # TrecQA trains on 94 questions (one epoch: 102 steps).
    *_beats_bm25("fit_trecqa", "trecqa_clean", "fit-trecqa_clean-longer", LONGER.format(6)),
)


def _paper001(grid: str, id: str, model: str) -> tuple[Claim, ...]:
    """Paper 001's claims about last-layer MC dropout against the deterministic ``model``, in ``grid``."""
    return (
        Claim(
            id=f"{id}-keeps-effectiveness",
            grid=grid,
            text=f"last-layer MC dropout keeps the deterministic {model}'s effectiveness",
            paper="nDCG within −1.3 % to +0.8 % of the deterministic model (Table 2)",
            method="last_layer_mc",
            metric="nDCG@10",
            expect="within",
            margin=0.01,
        ),
        Claim(
            id=f"{id}-erce",
            grid=grid,
            text=f"the Bayesian {model} has a lower ERCE",
            paper="about 30 % lower ERCE (Table 4)",
            method="last_layer_mc",
            metric="ERCE",
            expect="lower",
        ),
        *(
            Claim(
                id=f"{id}-cvar-{view}",
                grid=grid,
                text=f"CVaR reranking ({view}) of {model} raises nDCG@10 over the mean ranking",
                paper="+3 to 5 % nDCG (Table 3)",
                method="last_layer_mc",
                metric=f"CVaR.{view}.nDCG@10",
                reference=("nDCG@10",),
                p_value=f"CVaR.{view}.nDCG@10.p_value",
            )
            for view in ("optimistic", "pessimistic")
        ),
        Claim(
            id=f"{id}-cutoff",
            grid=grid,
            text=f"{model}'s uncertainty features improve cutoff prediction (F1 over the oracle's)",
            paper="e.g. 80.6 % against 77.3 % of the oracle, TREC DL, BERT-L2 (Table 5)",
            method="last_layer_mc",
            metric="cutoff.F1_ratio.uncertainty",
            reference=("cutoff.F1_ratio.scores",),
            p_value="cutoff.p_value",
        ),
    )


def _gp(grid: str, id: str, how: str) -> tuple[Claim, ...]:
    """Papers 003/004's claims about the GP heads against BERT (trained ``how``), in ``grid``."""
    return (
        *_per_method(
            GP,
            id=f"{id}-ece",
            grid=grid,
            text=f"a GP output layer lowers ECE against BERT{how}",
            paper="lower ECE than BERT, MC dropout and ensembles (PG-DRR Table 2, GPF-BERT Table 1)",
            metric="ECE",
            expect="lower",
        ),
        *_per_method(
            GP,
            id=f"{id}-effectiveness",
            grid=grid,
            text=f"a GP output layer keeps R@1 within 2 points of BERT{how}",
            paper="R@1 within about 2 points of BERT (PG-DRR Table 2, GPF-BERT Table 1)",
            metric="R@1",
            expect="within",
            margin=0.02,
        ),
    )


CLAIMS: tuple[Claim, ...] = (
    *MODEL_FIT,
    *_per_method(
        STOCHASTIC_000,
        id="000-ece-in-domain",
        grid="paper000",
        text="stochastic BERT lowers ECE against deterministic BERT, no shift",
        paper="S-BERT^E −14 %, S-BERT^D −10 % ECE on average (Table 2)",
        metric="ECE",
        expect="lower",
        kinds=("in-domain",),
    ),
    *_per_method(
        STOCHASTIC_000,
        id="000-ece-cross-domain",
        grid="paper000",
        text="stochastic BERT lowers ECE against deterministic BERT, cross-domain",
        paper="S-BERT^E −14 %, S-BERT^D −10 % ECE on average (Table 2)",
        metric="ECE",
        expect="lower",
        kinds=("cross-domain",),
    ),
    Claim(
        id="000-ece-nonrel",
        grid="paper000",
        text="BERT's ECE grows with the number of non-relevant candidates",
        paper="curves leave the diagonal as #non-rel goes from 1 to 2, 5 and 9 (Fig. 2)",
        method="bert",
        # k = 5, not 9: lists of 10 keep up to 5 relevant candidates, so few topics reach 9. Every kind
        # of condition: the sweep needs queries with one relevant candidate, which ClariQ's lists (the
        # in-domain condition) never hold, so paper000 measures it on WikiQA → TrecQA.
        metric="ECE.nonrel_5",
        reference=("ECE.nonrel_1",),
        expect="higher",
    ),
    *_per_method(
        STOCHASTIC_000,
        id="000-ra",
        grid="paper000",
        text="RA with b chosen on dev improves R@1 over the mean ranking",
        paper="+1.7 % (D), +2 % (E) R_10@1 on average (Table 3)",
        metric="RA.R@1",
        reference=("R@1",),
        p_value="RA.R@1.p_value",
    ),
    *_per_method(
        STOCHASTIC_000,
        id="000-ra-cross-ns",
        grid="paper000",
        text="RA improves R@1 under cross-negative-sampling shift (most of all there)",
        paper="up to +17.2 % R_10@1, cross-NS (Table 3)",
        metric="RA.R@1",
        reference=("R@1",),
        p_value="RA.R@1.p_value",
        kinds=("cross-NS",),
    ),
    *_per_method(
        STOCHASTIC_000,
        id="000-nota",
        grid="paper000",
        text="adding the variances raises NOTA F1-macro",
        paper="+33 % F1 on average; +24 % cross-domain, +46 % cross-NS with S-BERT^D (Tables 4-5)",
        metric="NOTA.F1.mean_var",
        reference=("NOTA.F1.mean",),
        p_value="NOTA.p_value",
        variant="nota",
    ),
    Claim(
        id="000-ensemble-effective",
        grid="paper000",
        text="the ensemble is more effective than BERT",
        paper="S-BERT^E above BERT for almost all conditions (Fig. 3, b = 0)",
        method="ensemble",
        metric="R@1",
    ),
    *_paper001("paper001", "001", "BERT-L2"),
    *_paper001("paper001_l4", "001-L4", "BERT-L4"),
    Claim(
        id="002-u-lin",
        grid="paper002",
        text="u_lin beats the best reference-free confidence (nAUC, AP)",
        paper="37.4 against 28.5 nAUC-mAP on average (Table 2)",
        method="bert",
        metric="nAUC.AP.u_lin",
        reference=FREE_CONFIDENCES,
    ),
    Claim(
        id="002-reference-size",
        grid="paper002",
        text="u_lin overtakes u_std from a small reference set (break-even size; lower is better)",
        paper="a few hundred reference queries or fewer (Table 5, Fig. 4)",
        method="bert",
        metric="break_even.AP",
        reference=("nAUC.AP.u_lin",),
        expect="present",
    ),
    *(
        Claim(
            id=f"002-threshold-{rate}",
            grid="paper002",
            text=f"threshold calibration: u_lin's abstention-rate error at {rate} % is below u_std's",
            paper="u_lin better calibrated than u_std (Table 3, lower part)",
            method="bert",
            metric=f"threshold.rate_MAE.{rate}.u_lin",
            reference=(f"threshold.rate_MAE.{rate}.u_std",),
            expect="lower",
        )
        for rate in (10, 50, 90)
    ),
    *_gp("gp", "gp", ""),
    *_gp("gp_fit", "gp-fit", ", trained to convergence on dev"),
    *(
        Claim(
            id=f"gp-cost-{method}-vs-{other}",
            grid=COST,
            text=f"a GP output layer costs less at inference than {other}",
            paper="GPF-BERT 1.0×, MC dropout 9.6×, ensemble 5× BERT's inference time (004 Table 2)",
            method=method,
            metric=COST_METRIC,
            against=other,
            expect="lower",
        )
        for method in GP
        for other in STOCHASTIC_000
    ),
)


@dataclass(frozen=True)
class Run:
    """What findings reads of one finished run directory."""

    folder: Path
    spec: GridSpec
    seeds: pd.DataFrame  # seeds.csv
    board: pd.DataFrame  # leaderboard.csv
    kinds: dict[str, tuple[Kind, str]]  # condition → (kind, variant of its tested lists)
    provenance: Provenance | None = None  # whether its cells are this checkout's (None: not checked)


def read_run(folder: Path) -> Run:
    layout = RunLayout(folder)
    fix = f"rerun `rankuq run {folder}/grid.yaml --run-dir {folder}` (cached: it trains nothing)"
    if not layout.grid_file.is_file():
        raise RankuqError(f"{layout.grid_file} not found: not a finished run directory; {fix}")
    spec, params = load_grid(layout.grid_file)
    board = read_leaderboard(folder)
    if not layout.seeds_csv.is_file():
        raise RankuqError(f"{layout.seeds_csv} not found (written by rankuq run since issue 15); {fix}")
    # A key is hex: read as text, or one like "12e4…" turns into a number.
    seeds = pd.read_csv(layout.seeds_csv, keep_default_na=False, na_values=[""], dtype={PREDICTIONS_KEY: str})
    missing = [c for c in ("condition", "method", "seed") if c not in seeds]
    if missing:
        raise RankuqError(f"{layout.seeds_csv}: missing columns {missing}; {fix}")
    kinds = {shift.label(): (condition_kind(spec, shift), shift.test.variant) for shift in spec.conditions()}
    return Run(folder, spec, seeds, board, kinds, check(folder, spec, params, seeds))


def condition_kind(spec: GridSpec, shift: Shift) -> Kind:
    """cross-domain when the sides read different data files (trecqa and trecqa_clean are one domain),
    cross-NS when the negative sampling of the training lists differs from the tested lists', else
    in-domain."""
    train, test = tasks.get(shift.train.task), tasks.get(shift.test.task)
    if not set(train.files) & set(test.files):
        return "cross-domain"
    trained = side_lists(spec, shift.train, "train").strategy or train().default_strategy("train")
    tested = shift.test.ns or test().default_strategy(spec.eval.split)
    return "cross-NS" if trained != tested else "in-domain"


@dataclass(frozen=True)
class Measured:
    """A claim in one condition: the method's value and d = value − reference over seeds, p, verdict."""

    condition: str
    value: tuple[float, float]  # mean, std over seeds
    delta: tuple[float, float]
    relative: float  # mean d over the reference's mean
    p: float
    seeds: int
    verdict: str
    unit: str = "seeds"  # what the samples are: seeds of a grid, or timed repeats


def measure(claim: Claim, run: Run, condition: str) -> Measured | None:
    """The claim in one condition of ``run``; None when the run lacks its method or values."""
    rows = run.seeds[(run.seeds.condition == condition) & (run.seeds.method == claim.method)]
    if claim.expect == "present":
        return _presence(claim, rows.sort_values("seed"), condition)
    if rows.empty or claim.metric not in rows or rows[claim.metric].isna().all():
        return None
    rows = rows.sort_values("seed")
    if claim.expect == "at least":
        reference = np.full(len(rows), claim.margin)
    elif claim.reference is None:
        other = claim.against or run.spec.baseline
        base = run.seeds[(run.seeds.condition == condition) & (run.seeds.method == other)]
        base = base.set_index("seed").reindex(rows.seed)
        if other is None or claim.metric not in base or base[claim.metric].isna().any():
            return None
        reference = base[claim.metric].to_numpy(dtype=float)
    else:
        if any(c not in rows or rows[c].isna().any() for c in claim.reference):
            return None
        reference = rows[list(claim.reference)].to_numpy(dtype=float).max(axis=1)
    values = rows[claim.metric].to_numpy(dtype=float)
    if np.isnan(values).any():
        return None
    delta = values - reference
    mean_reference = float(reference.mean())
    if claim.expect == "at least":
        outcome = REPRODUCED if (delta >= 0).all() else REFUTED if (delta < 0).all() else NOT_REPRODUCED
        spread = _mean_std(delta)
        return Measured(condition, _mean_std(values), spread, math.nan, math.nan, len(values), outcome)
    p = _p_value(claim, run, condition, rows, values, reference)
    return Measured(
        condition,
        _mean_std(values),
        _mean_std(delta),
        float(delta.mean() / abs(mean_reference)) if mean_reference else math.nan,
        p,
        len(values),
        verdict(claim, float(delta.mean()), p),
    )


def _presence(claim: Claim, rows: pd.DataFrame, condition: str) -> Measured | None:
    """An "present" claim: measured where the evidence column is; reproduced where every seed has
    the value (its mean ± std over those seeds is shown)."""
    (evidence,) = claim.reference or ("",)
    if rows.empty or evidence not in rows or rows[evidence].isna().any():
        return None
    values = rows[claim.metric].to_numpy(dtype=float) if claim.metric in rows else np.full(len(rows), np.nan)
    found = values[~np.isnan(values)]
    value = _mean_std(found) if found.size else (math.nan, math.nan)
    outcome = REPRODUCED if found.size == len(values) else NOT_REPRODUCED
    return Measured(condition, value, (math.nan, math.nan), math.nan, math.nan, len(values), outcome)


def _p_value(
    claim: Claim, run: Run, condition: str, rows: pd.DataFrame, values: np.ndarray, reference: np.ndarray
) -> float:
    board = run.board
    on_board = f"{claim.metric} p"
    # The leaderboard tests every method against the baseline: the baseline against another method
    # reads that method's row (the paired test is symmetric).
    baseline, other = run.spec.baseline, claim.against or run.spec.baseline
    tested = other if claim.method == baseline else claim.method if other == baseline else None
    if claim.reference is None and tested not in (None, baseline) and on_board in board:
        row = board[(board.condition == condition) & (board.method == tested)]
        if len(row) and not np.isnan(row[on_board].iloc[0]):
            return float(row[on_board].iloc[0])
    if claim.p_value is not None and claim.p_value in rows and rows[claim.p_value].notna().all():
        return float(rows[claim.p_value].max())
    return paired_p(values, reference)


def paired_p(values: np.ndarray, reference: np.ndarray) -> float:
    """Paired t-test of ``values`` against ``reference`` over their samples (seeds, repeats)."""
    if len(values) < 2 or np.allclose(values, reference):
        return math.nan if len(values) < 2 else 1.0
    delta = values - reference
    if np.allclose(delta, delta[0], rtol=0, atol=1e-12):
        # Every seed moved by the same amount (a count over few queries): the t statistic is infinite,
        # not evidence; the exact sign test over the seeds (3 seeds alike: p = 0.25).
        return float(stats.binomtest(int((delta > 0).sum()), len(delta)).pvalue)
    return float(stats.ttest_rel(values, reference).pvalue)


def verdict(claim: Claim, delta: float, p: float) -> str:
    """The verdict of one condition from the mean difference and its p-value (module docstring)."""
    significant = not math.isnan(p) and p < ALPHA
    if claim.expect == "within":
        if abs(delta) <= claim.margin:
            return REPRODUCED
        return REFUTED if significant else NOT_REPRODUCED
    way = 1 if claim.expect == "higher" else -1
    if significant and delta * way > 0:
        return REPRODUCED
    if significant and delta * way < 0:
        return REFUTED
    return NOT_REPRODUCED


def overall(verdicts: Sequence[str]) -> str:
    """A claim's verdict over its conditions: the one most of them share, reproduced or refuted."""
    if not verdicts:
        return NOT_MEASURED
    for outcome in (REPRODUCED, REFUTED):
        if sum(v == outcome for v in verdicts) * 2 > len(verdicts):
            return outcome
    return NOT_REPRODUCED


def conditions_of(claim: Claim, run: Run) -> list[str]:
    return [
        condition
        for condition, (kind, variant) in run.kinds.items()
        if kind in claim.kinds
        and (claim.variant is None or variant == claim.variant)
        and claim.condition in (None, condition)
    ]


@dataclass(frozen=True)
class Row:
    claim: Claim
    run: Run | None
    measured: tuple[Measured, ...]
    verdict: str
    note: str
    command: str = ""  # what produced the measurements, where no run directory did


def assess(claim: Claim, runs: Sequence[Run], cost: pd.DataFrame | None = None) -> Row:
    found = [run for run in runs if run.spec.name == claim.grid]
    if claim.grid == COST:
        return _assess_cost(claim, cost)
    if not found:
        return Row(claim, None, (), NOT_MEASURED, f"no run directory of grid {claim.grid} given")
    run = found[0]
    conditions = conditions_of(claim, run)
    measured = tuple(m for c in conditions if (m := measure(claim, run, c)) is not None)
    note = "" if measured else f"{run.folder.name} has no {claim.metric} of {claim.method} in {_scope(claim)}"
    return Row(claim, run, measured, overall([m.verdict for m in measured]), note)


def read_cost(path: Path) -> pd.DataFrame:
    """method_cost's CSV (``--out``): every timed repeat of every method."""
    fix = f"write it with `python -m rankuq.bench.benchmarks.method_cost --out {path}`"
    if not path.is_file():
        raise RankuqError(f"{path} not found; {fix}")
    table = pd.read_csv(path)
    missing = [column for column in COST_COLUMNS if column not in table]
    if missing:
        raise RankuqError(f"{path}: missing columns {missing}; {fix}")
    return table


def _assess_cost(claim: Claim, cost: pd.DataFrame | None) -> Row:
    if cost is None:
        note = "no cost file given: `rankuq findings RUN_DIR… --cost FILE`, FILE from method_cost --out"
        return Row(claim, None, (), NOT_MEASURED, note)
    measured = tuple(m for _, rows in cost.groupby("layers") if (m := _measure_cost(claim, rows)) is not None)
    note = "" if measured else f"the cost file has no timings of {claim.method} and {claim.against}"
    return Row(claim, None, measured, overall([m.verdict for m in measured]), note, str(cost.command.iloc[0]))


def _measure_cost(claim: Claim, rows: pd.DataFrame) -> Measured | None:
    """The claim at one MiniLM depth: per repeat, each method's time over bert's time of the same
    repeat (the methods take turns within a repeat), d = the claim's method's − ``against``'s."""

    def times(method: str) -> np.ndarray | None:
        timed = rows[rows.method == method]
        if timed.label.nunique() != 1:  # absent, or several settings of it (last_layer_mc's T)
            return None
        return timed.sort_values("repeat").seconds.to_numpy(dtype=float)

    bert, values, other = times("bert"), times(claim.method), times(str(claim.against))
    if bert is None or values is None or other is None or not len(bert) == len(values) == len(other):
        return None
    values, reference = values / bert, other / bert
    delta, p = values - reference, paired_p(values, reference)
    first, against = rows.iloc[0], rows[rows.method == claim.against].label.iloc[0]
    return Measured(
        f"MiniLM-L{first.layers}, {first.pairs} WikiQA test pairs, {first.precision}; vs {against}",
        _mean_std(values),
        _mean_std(delta),
        float(delta.mean() / reference.mean()),
        p,
        len(values),
        verdict(claim, float(delta.mean()), p),
        "repeats",
    )


def _scope(claim: Claim) -> str:
    if claim.condition is not None:
        return f"condition {claim.condition}"
    variant = f", {claim.variant} lists" if claim.variant else ""
    return f"{'/'.join(claim.kinds)} conditions{variant}"


def _mean_std(values: np.ndarray) -> tuple[float, float]:
    return float(values.mean()), float(values.std(ddof=1)) if len(values) > 1 else 0.0


def _number(value: float) -> str:
    return "—" if math.isnan(value) else f"{value:.3f}"


def _p(value: float) -> str:
    return "—" if math.isnan(value) else f"{value:.3g}"


def _ours(row: Row) -> str:
    """One condition in full; several as the mean d and the count of each verdict."""
    if len(row.measured) == 1:
        m = row.measured[0]
        relative = "" if math.isnan(m.relative) else f" ({m.relative:+.1%})"
        d = "" if math.isnan(m.delta[0]) else f"; d = {_number(m.delta[0])} ± {_number(m.delta[1])}{relative}"
        return (
            f"{_number(m.value[0])} ± {_number(m.value[1])}{d}; p = {_p(m.p)}; "
            f"{markdown_text(m.condition)}, {m.seeds} {m.unit}"
        )
    counts = {v: sum(m.verdict == v for m in row.measured) for v in (REPRODUCED, REFUTED)}
    deltas = np.array([m.delta[0] for m in row.measured])
    values = np.array([m.value[0] for m in row.measured])
    shown = f"mean d = {_number(float(deltas.mean()))}" if not np.isnan(deltas).any() else ""
    if not shown:  # a "present" claim: no difference, the value itself where it exists
        found = values[~np.isnan(values)]
        shown = f"mean value = {_number(float(found.mean())) if found.size else '—'}"
    return (
        f"{shown} over {len(row.measured)} conditions: reproduced in {counts[REPRODUCED]}, "
        f"refuted in {counts[REFUTED]} (per condition below)"
    )


def _run_command(run: Run) -> str:
    return (
        f"`rankuq run {shlex.quote(str(run.folder / 'grid.yaml'))} --run-dir {shlex.quote(str(run.folder))}`"
    )


def _cell(text: str) -> str:
    """The registry's own text in a table cell: only the pipe needs escaping."""
    return text.replace("|", "\\|")


def render(rows: Sequence[Row], command: str, runs: Sequence[Run] = ()) -> str:
    """docs/findings.md: a summary row per claim, each claim's conditions, then whether each run
    directory's cells are this checkout's."""
    text = markdown_text
    lines = [
        "# Findings: the papers' claims measured with rankuq",
        "",
        f"Generated by `{command}`; do not edit by hand (rerunning it rewrites this file).",
        "",
        "d = value − reference per seed (the reference: the grid's baseline method, or the named value "
        "of the same cell), mean ± std over seeds; p: the leaderboard's paired test over queries "
        "against the baseline, the probe's per-seed test (largest p over seeds), or a paired t-test "
        f"over seeds (the inference-cost claims: over timed repeats of method_cost, each method's time "
        f"over bert's in the same repeat); α = {ALPHA}. The verdicts are defined in `rankuq.bench.findings`.",
        "",
        "| claim | the paper | measured | ours | verdict | produced by |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        claim = row.claim
        measured = f"{claim.method}: {claim.metric} vs {claim.compared()} ({claim.expect})"
        ours = _ours(row) if row.measured else text(row.note)
        run = _run_command(row.run) if row.run is not None else f"`{row.command}`" if row.command else "—"
        if row.run is not None and _stale(row.run):
            run += " (a stale run: see the run directories below)"
        lines.append(
            f"| {claim.id}: {_cell(claim.text)} | {_cell(claim.paper)} | {_cell(measured)} | {ours} | "
            f"**{row.verdict}** | {run} |"
        )
    lines += ["", "## Per condition", ""]
    lines += [
        "| claim | condition | seeds (or repeats) | value | d | relative | p | verdict |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        for m in row.measured:
            lines.append(
                f"| {row.claim.id} | {text(m.condition)} | {m.seeds} | {_number(m.value[0])} ± "
                f"{_number(m.value[1])} | {_number(m.delta[0])} ± {_number(m.delta[1])} | "
                f"{'—' if math.isnan(m.relative) else f'{m.relative:+.1%}'} | {_p(m.p)} | {m.verdict} |"
            )
    checked = [(run, run.provenance) for run in runs if run.provenance is not None]
    if checked:
        lines += [
            "",
            "## Run directories",
            "",
            "Whether each run's cells are what this checkout makes of its grid.yaml "
            "(`rankuq.bench.provenance`: the predictions key and probes version seeds.csv records per "
            "cell against the grid's plan now).",
            "",
            "| run directory | grid | cells | made by this checkout |",
            "| --- | --- | --- | --- |",
        ]
        lines += [
            f"| {text(str(run.folder))} | {run.spec.name} | {found.cells} | {_cell(found.describe())} |"
            for run, found in checked
        ]
    return "\n".join(lines) + "\n"


def _stale(run: Run) -> bool:
    return run.provenance is not None and run.provenance.status == STALE


def findings(
    run_dirs: Sequence[Path],
    out: Path,
    claims: Sequence[Claim] = CLAIMS,
    cost: Path | None = None,
    allow_stale: bool = False,
) -> Path:
    """Measure every claim in the run directories (the cost claims in method_cost's CSV ``cost``) and
    write ``out``; returns ``out``. A run whose cells this checkout would make otherwise (stale) is
    refused unless ``allow_stale``, which writes it marked."""
    if not run_dirs:
        raise RankuqError("rankuq findings: name at least one run directory of `rankuq run`")
    runs = [read_run(Path(folder)) for folder in run_dirs]
    names = [run.spec.name for run in runs]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise RankuqError(f"rankuq findings: grid {twice[0]} is named by two run directories; give one")
    stale = [run for run in runs if _stale(run)]
    if stale and not allow_stale:
        run = stale[0]
        assert run.provenance is not None
        raise RankuqError(
            f"{run.folder}: {run.provenance.describe()}; rerun {_run_command(run)} (it redoes what changed), "
            "or pass --allow-stale to write the findings with the run marked stale"
        )
    costs = read_cost(cost) if cost is not None else None
    given = ["--cost", str(cost)] if cost is not None else []
    given += ["--allow-stale"] if allow_stale else []
    command = shlex.join(["rankuq", "findings", *map(str, run_dirs), *given, "--out", str(out)])
    text = render([assess(claim, runs, costs) for claim in claims], command, runs)
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(out, text)
    return out
