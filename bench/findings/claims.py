"""The papers' claims as data: one ``Claim`` per claim and method, as ir_measures declares measures.

A claim says which grid measures it, in which conditions, the method and the metric, what it is
compared with, in which terms (absolute or relative, as the paper states its effect), the paper's
effect as a number, the direction (or equivalence margin, or floor) and the preconditions a condition
must meet before the claim can be judged in it. The verdict logic is ``bench.findings.verdicts``.

Reading the registry:
- Ids are stable (readers cite them); a claim whose meaning changes gets a new id.
- Sources: 000 Penha & Hauff 2021, 001 Cohen et al. 2021, 002 Gisserot-Boukhlef et al. 2024, 003 PG-DRR
  (Ye et al. 2023), 004 GPF-BERT 2023 (/work/shared/papers). ``paper`` quotes the numbers the effect is
  computed from; a table's "%" of ECE in 003/004 are ECE points, so their claims are absolute.
- Metric keys are the run's per-query metric keys (seeds.csv columns). ``RA.<m>``: RA with b chosen on dev
  in the paper's [0, 1]; ``RA.neg.<m>``: b chosen on dev among negative values only (risk-seeking); the
  chosen b is the metric's prefix + ".b" (``RA.b``, ``RA.neg.b``), what ``b_selected`` reads.
  ``nAUC.<m>.u_lin@<N>``: u_lin fitted on N reference queries. ``time (× X)`` (grid ``COST``): a method's
  seconds over X's in the same timed repeat of method_cost (same layers, pairs, threads, precision).
- ``R10``: paper 000's R_10 lists (one relevant and nine non-relevant candidates per query), the list
  variant of every paper's R@1 claim (and of papers 000/003/004's others), so R@1 has no ceiling below 1.
- Preconditions follow fixed rules (``needs``; the rules themselves: ``preconditions.RULES``): every
  paper claim is about a ranker that works where it was trained (works_in_domain: bert, and the method
  under test, above BM25 in its training domain, never under the shift); shift_hurts where its kinds
  include a shift, judged in those conditions only (an in-domain condition passes it); headroom for R@1;
  b_selected for RA. Sanity checks and cost claims have none.
- ``sanity``: this project's checks of the model fit, reported apart, not a paper's claim.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import fmean
from typing import Any, Literal

Kind = Literal["in-domain", "cross-domain", "cross-NS"]
ALL_KINDS: tuple[Kind, ...] = ("in-domain", "cross-domain", "cross-NS")
SHIFTS: tuple[Kind, ...] = ("cross-domain", "cross-NS")
Expect = Literal["higher", "lower", "within", "at least", "no worse"]
Scale = Literal["absolute", "relative"]
# What a condition must show before a claim is judged in it (bench.findings.verdicts):
# works_in_domain: bert's AP (and the method's) significantly above BM25's where it was trained;
# shift_hurts: bert's AP is significantly lower in the condition than that of bert trained on the same
#   test lists' task and negatives (the condition is a shift at all);
# headroom: the baseline's value leaves room for the paper's effect (R@1 below its ceiling);
# b_selected: RA's b on dev is not 0 in every seed (a degenerate selection is no finding);
# distinct: checked for every claim, never declared: the two sides differ on some query and seed (two
#   identical rankings, e.g. a deterministic ranker's CVaR ranking, give d = 0 with no spread: no test).
Precondition = Literal["works_in_domain", "shift_hurts", "headroom", "b_selected", "distinct"]


@dataclass(frozen=True)
class Claim:
    """One claim of a paper about one method, measured in the run of grid ``grid``.

    The effect d per seed compares ``metric`` of ``method`` with a reference on the same queries:
    ``against`` (another method's same metric; default: the grid's baseline), ``reference`` (other
    metrics of the same cell; several: their best, the largest), both (the ``reference`` metric of
    method ``against``'s cell, e.g. the Bayesian model's CVaR ranking against the deterministic
    model's nDCG@10), ``floor`` (a constant), or ``baseline_condition`` "no-shift": ``method``'s own
    ``metric`` in the grid's condition without shift on the same test data, i.e. the in-domain
    condition that trains on this condition's test task and tests on the same test queries, with the
    negative sampling of its training lists and the same list variant (for a cross-NS condition the
    candidate lists differ in their negatives only); paired by seed and query.
    ``scale``: d = value − reference ("absolute") or (value − reference) / reference ("relative").
    ``expect``: the paper's direction of d, "within" ± ``margin`` (equivalence, in the claim's
    scale), "no worse" (non-inferiority: d ≥ −``margin``, the paper's "better, or at most margin
    worse") or "at least" ``floor`` (d = value − floor ≥ 0).
    ``paper_effect``: the paper's d in the same scale and sign convention (None: the paper gives no
    number); ``source`` cites the table or figure, ``paper`` quotes what it reports.
    ``kinds``, ``variant``, ``condition``: the conditions of the grid the claim is about.
    Over several conditions the overall verdict is the pooled estimate's, or "mixed" where the
    conditions significantly disagree (Cochran's Q), whatever their own verdicts.
    ``sanity``: this project's own check (a floor a working setup must reach), not a paper's claim.
    """

    id: str
    grid: str
    text: str
    source: str
    paper: str
    paper_effect: float | None
    method: str
    metric: str
    against: str | None = None
    reference: tuple[str, ...] | None = None
    floor: float | None = None
    baseline_condition: Literal["no-shift"] | None = None
    scale: Scale = "absolute"
    expect: Expect = "higher"
    margin: float = 0.0
    kinds: tuple[Kind, ...] = ALL_KINDS
    variant: str | None = "standard"
    condition: str | None = None
    preconditions: tuple[Precondition, ...] = ()
    sanity: bool = False

    def compared(self) -> str:
        if self.floor is not None:
            return f"{self.floor:g}"
        if self.baseline_condition is not None:
            return f"{self.method} without shift"
        if self.reference is None:
            return self.against or "the baseline"
        best = self.reference[0] if len(self.reference) == 1 else f"best of {', '.join(self.reference)}"
        return f"{self.against}'s {best}" if self.against else best


def needs(metric: str, kinds: Sequence[Kind]) -> tuple[Precondition, ...]:
    """A paper claim's preconditions by the registry's rules (module docstring)."""
    rules: tuple[tuple[Precondition, bool], ...] = (
        ("works_in_domain", True),
        ("shift_hurts", any(kind in SHIFTS for kind in kinds)),
        ("headroom", "R@1" in metric),
        ("b_selected", metric.startswith("RA.")),
    )
    return tuple(name for name, holds in rules if holds)


def claim(**fields: object) -> Claim:
    """A paper's claim; its preconditions by ``needs`` unless given."""
    kinds = fields.get("kinds", ALL_KINDS)
    fields.setdefault("preconditions", needs(str(fields["metric"]), kinds))  # type: ignore[arg-type]
    return Claim(**fields)  # type: ignore[arg-type]


def per_method(
    methods: Sequence[str], paper_effects: Sequence[float | None], **fields: object
) -> list[Claim]:
    """One claim per method (its id suffixed with the method), each with its paper effect; a field
    given as a mapping keyed by method takes that method's value."""
    base = str(fields.pop("id"))
    return [
        claim(
            id=f"{base}-{m}",
            method=m,
            paper_effect=e,
            **{k: v[m] if isinstance(v, Mapping) else v for k, v in fields.items()},
        )
        for m, e in zip(methods, paper_effects, strict=True)
    ]


P000, P001, P002 = "Penha & Hauff 2021", "Cohen et al. 2021", "Gisserot-Boukhlef et al. 2024"
P003, P004 = "PG-DRR (Ye et al.) 2023", "GPF-BERT 2023"
R10 = "imbalance"  # tasks.lists variant: exactly 1 relevant and n − 1 = 9 negatives (grids: n: 10)
STOCHASTIC = ("mc_dropout", "ensemble")  # S-BERT^D, S-BERT^E: paper effects in this order
GP = ("sngp", "gpf", "pg_gp")
NAMES = {"bert": "BERT", "mc_dropout": "MC Dropout", "ensemble": "Ensemble"}
NAMES |= {"sngp": "SNGP", "gpf": "GPF-BERT", "pg_gp": "PG-DRR"}  # the papers' names of the methods

# --- this project's sanity checks: the model fit -------------------------------------------------
FIT_TASKS = ("wikiqa", "clariq", "semeval", "trecqa_clean")
SANITY = "rankuq sanity check (the model fit), not a paper's claim"
LONGER = "bert, up to {} epochs with early stopping on dev,"


def _beats_bm25(grid: str, task: str, id: str, who: str) -> tuple[Claim, ...]:
    """``who`` beats BM25 on ``task``'s condition of ``grid``, in AP and in R@1: two checks."""
    return tuple(
        Claim(
            id=f"{id}-{metric}",
            grid=grid,
            text=f"{who} beats BM25 on {task} ({metric})",
            source=SANITY,
            paper=f"rule: bert's {metric} above BM25's on the same test queries, d = bert − bm25 with its "
            "95 % CI above 0 (every paper's premise: a fine-tuned cross-encoder above BM25)",
            paper_effect=None,
            method="bert",
            metric=metric,
            against="bm25",
            kinds=("in-domain",),
            condition=task,
            sanity=True,
        )
        for metric in ("AP", "R@1")
    )


def _wikiqa_floor(grid: str, id: str, who: str) -> Claim:
    """``who`` reaches the model-fit floor, AP 0.70 on WikiQA test, in ``grid``."""
    return Claim(
        id=id,
        grid=grid,
        text=f"{who} reaches AP 0.70 on WikiQA test",
        source=SANITY,
        paper="rule: d = AP − 0.70 with its 95 % CI above 0 (the floor: Yang et al. 2015's CNN-Cnt, the "
        "dataset's paper, reaches 0.652; BERT-base about 0.81)",
        paper_effect=None,
        method="bert",
        metric="AP",
        floor=0.70,
        expect="at least",
        kinds=("in-domain",),
        condition="wikiqa",
        sanity=True,
    )


# paper002 trains one epoch per task; fit_wikiqa/fit_trecqa train the same conditions to convergence.
SANITY_CHECKS: tuple[Claim, ...] = (
    _wikiqa_floor("paper002", "fit-wikiqa-ap-floor", "bert"),
    *(check for task in FIT_TASKS for check in _beats_bm25("paper002", task, f"fit-{task}", "bert")),
    _wikiqa_floor("fit_wikiqa", "fit-wikiqa-longer-ap-floor", LONGER.format(3)),
    *_beats_bm25("fit_wikiqa", "wikiqa", "fit-wikiqa-longer", LONGER.format(3)),
    *_beats_bm25("fit_trecqa", "trecqa_clean", "fit-trecqa_clean-longer", LONGER.format(6)),
)

# --- paper 000 (Penha & Hauff 2021): grid paper000, every list R10 except NOTA's ----------------------
# Table 2: mean relative ECE change against BERT of (S-BERT^D, S-BERT^E) over its cells of each kind.
ECE_000: dict[Kind, tuple[float, float, str]] = {
    "in-domain": (-0.232, -0.178, "3 no-shift cells (D −56.1/−11.5/−1.8 %, E −35.1/−43.1/+24.8 %)"),
    "cross-domain": (-0.055, -0.069, "6 cross-domain cells (D −26.9 to +8.3 %, E −55.0 to +25.1 %)"),
    "cross-NS": (-0.080, -0.192, "6 cross-NS cells (D −18.7 to −1.3 %, E −37.7 to −4.8 %)"),
}
PAPER000: tuple[Claim, ...] = (
    *(
        c
        for kind, (d, e, cells) in ECE_000.items()
        for c in per_method(
            STOCHASTIC,
            (d, e),
            id=f"000-ece-{kind.lower()}",
            grid="paper000",
            text=f"stochastic BERT lowers ECE against deterministic BERT, {kind}",
            source=f"{P000}, Table 2",
            paper=f"relative ECE change against BERT, mean of Table 2's {cells}: S-BERT^D {d:+.1%}, "
            f"S-BERT^E {e:+.1%}; over all 15 cells −10 % and −14 % (§5.1)",
            metric="ECE",
            against="bert",
            scale="relative",
            expect="lower",
            kinds=(kind,),
            variant=R10,
        )
    ),
    *(
        claim(
            id=f"000-ece-shift-{kind.lower()}",
            grid="paper000",
            text=f"BERT's ECE is higher {kind} than without shift on the same test data",
            source=f"{P000}, §5.1 and Table 1",
            paper=f"'on average, the ECE is {times} times higher for {kind}' (§5.1): the mean of Table 1's "
            f"{cells} over the no-shift ECEs' (0.003, 0.006, 0.002; the text's 'on average 0.036': 0.0036)",
            paper_effect=round(times - 1, 3),
            method="bert",
            metric="ECE",
            baseline_condition="no-shift",
            scale="relative",
            kinds=(kind,),
            variant=R10,
        )
        for kind, times, cells in (
            ("cross-domain", 4.6, "six cross-domain ECEs (0.009 to 0.028)"),
            ("cross-NS", 7.9, "six cross-NS ECEs (0.009 to 0.050)"),
        )
    ),
    claim(
        id="000-ece-nonrel",
        grid="paper000",
        text="BERT's ECE grows with the number of non-relevant candidates per relevant one (9 against 1)",
        source=f"{P000}, Figure 2",
        paper="figure only: BERT trained on balanced pairs is near the diagonal at #non-rel = 1 and leaves "
        "it as #non-rel grows to 2, 5 and 9 (§5.1, no number)",
        paper_effect=None,
        method="bert",
        metric="ECE.nonrel_9",
        reference=("ECE.nonrel_1",),
        kinds=("in-domain",),
        variant=R10,
    ),
    *per_method(
        STOCHASTIC,
        (0.017, 0.020),
        id="000-ra",
        grid="paper000",
        text="RA with b chosen on dev in [0, 1] improves R_10@1 over the mean ranking",
        source=f"{P000}, Table 3 and §5.2",
        paper="relative R_10@1 gain over the mean of the predictive distribution, on average over Table 3's "
        "15 cells: RA-BERT^D +1.7 %, RA-BERT^E +2 % (§5.2); b = 0 chosen in 8 of the 30",
        metric="RA.R@1",
        reference=("R@1",),
        scale="relative",
        variant=R10,
    ),
    *per_method(
        STOCHASTIC,
        (0.045, 0.048),
        id="000-ra-cross-ns",
        grid="paper000",
        text="RA improves R_10@1 under cross-negative-sampling shift (most of all there)",
        source=f"{P000}, Table 3 (cross-NS columns)",
        paper="relative R_10@1 gain, mean of Table 3's 6 cross-NS cells: RA-BERT^D +4.5 %, RA-BERT^E "
        "+4.8 % (−7.6 % to +17.2 %; 'up to 17.2 %', §5.2)",
        metric="RA.R@1",
        reference=("R@1",),
        scale="relative",
        kinds=("cross-NS",),
        variant=R10,
    ),
    *per_method(
        STOCHASTIC,
        (None, None),
        id="000-ra-negative",
        grid="paper000",
        text="RA with a negative b (risk-seeking; b chosen on dev among negative values) ranks worse than "
        "the mean ranking (R_10@1)",
        source=f"{P000}, §5.2",
        paper="no number: 'when using b < 0 [...] in all conditions we found that the effectiveness was "
        "significantly worse than when b = 0' (b < 0 left out of Figure 3)",
        metric="RA.neg.R@1",
        reference=("R@1",),
        expect="lower",
        scale="relative",
        variant=R10,
    ),
    *(
        c
        for kind, suffix, (d, e), table, cells in (
            ("cross-NS", "", (0.46, 0.244), "Table 5", "Table 5's six cells give +40 %"),
            ("cross-domain", "-cross-domain", (0.24, 0.121), "Table 4", "Table 4's six cross-domain cells"),
        )
        for c in per_method(
            STOCHASTIC,
            (d, e),
            id=f"000-nota{suffix}",
            grid="paper000",
            text=f"adding the variances to the mean scores raises NOTA F1-macro, {kind}",
            source=f"{P000}, {table} and §5.3",
            paper=f"relative F1-macro gain of the mean plus the variances over the mean alone (random "
            f"forest, 5 folds), {kind}: {d:+.0%} with S-BERT^D's variances (§5.3; {cells}), {e:+.1%} with "
            "S-BERT^E's (computed from the table); the paper adds S-BERT^E's variances to S-BERT^D's mean, "
            "here each method's own",
            metric="NOTA.F1.mean_var",
            reference=("NOTA.F1.mean",),
            scale="relative",
            kinds=(kind,),
            variant="nota",
        )
    ),
    claim(
        id="000-ensemble-effective",
        grid="paper000",
        text="the ensemble's mean ranking (S-BERT^E) is more effective than BERT (R_10@1)",
        source=f"{P000}, Figure 3 (b = 0) and §5.2",
        paper="figure only: 'S-BERT^E is more effective than the baseline BERT for almost all combinations'",
        paper_effect=None,
        method="ensemble",
        metric="R@1",
        against="bert",
        scale="relative",
        variant=R10,
    ),
    claim(
        id="000-mc_dropout-keeps-effectiveness",
        grid="paper000",
        text="MC dropout's mean ranking (S-BERT^D) keeps BERT's R_10@1 (within ±2 %)",
        source=f"{P000}, Figure 3 (b = 0) and §5.2",
        paper="figure only: 'S-BERT^D is equivalent to the baseline'. Margin ±2 % (relative): the average "
        "gains the paper reports as improvements are +1.7 % and +2 % (RA, Table 3), so a difference "
        "inside ±2 % is below what the paper counts as a change",
        paper_effect=None,
        method="mc_dropout",
        metric="R@1",
        against="bert",
        scale="relative",
        expect="within",
        margin=0.02,
        variant=R10,
    ),
    *(
        claim(
            id=f"000-r1-shift-{kind.lower()}",
            grid="paper000",
            text=f"BERT's R_10@1 is lower {kind} than without shift on the same test data",
            source=f"{P000}, Table 1",
            paper=f"R_10@1 of BERT trained with NS_BM25, {cells}: mean relative change {effect:+.1%} (the "
            "no-shift cells 0.615, 0.652, 0.834). The paper's cross-NS reference is the no-shift model on "
            "BM25-negative lists; here, as for every shift, the model trained on the tested lists' own "
            "negatives on the same lists",
            paper_effect=effect,
            method="bert",
            metric="R@1",
            baseline_condition="no-shift",
            scale="relative",
            expect="lower",
            kinds=(kind,),
            variant=R10,
            # the claim is that the shift hurts: shift_hurts would presuppose it, and a drop needs no headroom
            preconditions=("works_in_domain",),
        )
        for kind, effect, cells in (
            (
                "cross-domain",
                -0.369,
                "six cross-domain cells against the test domain's no-shift cell "
                "(−35.3, −43.3, +0.2, −53.1, −49.4, −40.6 %)",
            ),
            (
                "cross-NS",
                -0.608,
                "six cross-NS cells against the same domain's no-shift cell "
                "(−57.2, −49.6, −54.3, −63.3, −61.9, −78.2 %)",
            ),
        )
    ),
    claim(
        id="000-ece-ensemble-vs-mc_dropout",
        grid="paper000",
        text="the ensemble (S-BERT^E) is better calibrated than MC dropout (S-BERT^D) (ECE)",
        source=f"{P000}, Table 2 and §5.1",
        paper="'S-BERT^E is on average 14% better (has less calibration error) than BERT, while S-BERT^D is "
        "on average 10% better' over Table 2's 15 cells: the ensemble's ECE 0.86/0.90 − 1 = −4.4 % of MC "
        "dropout's; 'we hypothesize that S-BERT^E lead to less ECE than S-BERT^D'",
        paper_effect=-0.044,
        method="ensemble",
        metric="ECE",
        against="mc_dropout",
        scale="relative",
        expect="lower",
        variant=R10,
    ),
)

# --- paper 001 (Cohen et al. 2021): grids paper001 (BERT-L2) and paper001_l4 (BERT-L4) ----------------
# Conv-KNRM runs in paper001 without a claim. Relative effects, from the tables quoted (Table 3: nDCG@200
# TREC DL, nDCG@20 Robust04; B = last-layer MC dropout, D = deterministic).
P001_TABLES: dict[str, dict[str, Any]] = {
    "BERT-L2": {
        "keeps": (-0.0037, "−0.8 %, −1.0 %, +0.7 % (MS MARCO, TREC DL, Robust04)"),
        "keeps_mrr": (0.0033, "−1.3 %, +0.5 %, +1.8 % (MS MARCO, TREC DL, Robust04)"),
        "over_knrm": (0.030, "0.398/0.582/0.431 against Conv-KNRM^D's 0.380/0.565/0.425: +4.7, +3.0, +1.4 %"),
        "erce": (-0.268, "0.703 → 0.465 (TREC DL), 0.493 → 0.396 (Robust04)"),
        "cvar": (
            "TREC DL: D 0.582, B 0.576, CVaR+ 0.597*, CVaR− 0.598*; Robust04: D 0.398, B 0.402, "
            "CVaR+ 0.411*, CVaR− 0.412*"
        ),
        "over_mean": {"optimistic": 0.029, "pessimistic": 0.032},
        "over_deterministic": {"optimistic": 0.029, "pessimistic": 0.031},
        "cutoff": (0.054, "77.3 % → 80.6 % (TREC DL), 74.1 % → 78.9 % (Robust04)"),
    },
    "BERT-L4": {
        "keeps": (-0.0033, "−0.1 %, −0.2 %, −0.7 % (MS MARCO, TREC DL, Robust04)"),
        "keeps_mrr": (-0.0057, "+0.1 %, +0.8 %, −2.6 % (MS MARCO, TREC DL, Robust04)"),
        "erce": (-0.224, "0.700 → 0.507 (TREC DL), 0.477 → 0.395 (Robust04)"),
        "cvar": (
            "TREC DL: D 0.582, B 0.581, CVaR+ 0.606*, CVaR− 0.605*; Robust04: D 0.400, B 0.395, "
            "CVaR+ 0.407*, CVaR− 0.407*"
        ),
        "over_mean": {"optimistic": 0.037, "pessimistic": 0.036},
        "over_deterministic": {"optimistic": 0.029, "pessimistic": 0.029},
        "cutoff": (0.061, "73.6 % → 79.9 % (TREC DL), 75.4 % → 78.1 % (Robust04)"),
    },
}
VIEWS = ("optimistic", "pessimistic")


def _paper001(grid: str, id: str, model: str) -> tuple[Claim, ...]:
    """Paper 001's claims about last-layer MC dropout (B) against the deterministic ``model`` (D)."""
    t = P001_TABLES[model]
    same = {"grid": grid, "method": "last_layer_mc", "scale": "relative"}
    cutoff, cutoff_cells = t["cutoff"]
    cutoff_paper = (
        f"Choppy's F1 as a fraction of the oracle's, {model}^D → {model}^B with <mean, std, skew, entropy>: "
        f"{cutoff_cells}, mean {cutoff:+.1%} ('an approximate 9 % increase' on TREC DL over three models)"
    )
    return (
        *(
            claim(
                id=f"{id}-keeps-{suffix}",
                text=f"last-layer MC dropout (the mean of its samples) keeps the deterministic {model}'s "
                f"{name} (within ±2.6 %)",
                source=f"{P001}, Table 2",
                paper=f"{name.removesuffix('@10')} change of {model}^B over {model}^D: {t[key][1]}, "
                f"'{said}'. Margin ±2.6 %: the largest difference Table 2 calls parity (MRR −2.6 %, BERT-L4, "
                "Robust04)",
                paper_effect=t[key][0],
                metric=metric,
                against="bert",
                expect="within",
                margin=0.026,
                **same,
            )
            for suffix, key, metric, name, said in (
                ("effectiveness", "keeps", "nDCG@10", "nDCG@10", "parity"),
                ("mrr", "keeps_mrr", "RR", "MRR", "par"),
            )
        ),
        claim(
            id=f"{id}-erce",
            text=f"the Bayesian {model} has a lower ERCE than the deterministic one",
            source=f"{P001}, Table 4",
            paper=f"ERCE {model}^D → {model}^B: {t['erce'][1]}, mean {t['erce'][0]:+.1%} ('~30 % more "
            "calibrated' over all models, §5.3)",
            paper_effect=t["erce"][0],
            metric="ERCE",
            against="bert",
            expect="lower",
            **same,
        ),
        *(
            claim(
                id=f"{id}-cvar-{view}{suffix}",
                text=f"CVaR reranking ({view}) of the Bayesian {model} raises nDCG@10 over {over}",
                source=f"{P001}, Table 3 and §5.2",
                paper=f"{t['cvar']} (* p < 0.05); mean gain over {over}: {t[key][view]:+.1%} ('3-5 %')",
                paper_effect=t[key][view],
                metric=f"CVaR.{view}.nDCG@10",
                against=against,
                reference=("nDCG@10",),
                **same,
            )
            for view in VIEWS
            for suffix, key, against, over in (
                ("", "over_mean", None, "its mean ranking"),
                ("-deterministic", "over_deterministic", "bert", f"the deterministic {model}"),
            )
        ),
        claim(
            id=f"{id}-cutoff",
            text=f"the Bayesian {model}'s uncertainty features improve cutoff prediction over its scores "
            "alone (F1 over the oracle's)",
            source=f"{P001}, Table 5 and §5.4",
            paper=f"{cutoff_paper}; the paper compares B with D and credits the uncertainty features, B's "
            "mean being D's (§5.4); here the same model with and without them",
            paper_effect=cutoff,
            metric="cutoff.F1_ratio.uncertainty",
            reference=("cutoff.F1_ratio.scores",),
            **same,
        ),
        claim(
            id=f"{id}-cutoff-deterministic",
            text=f"cutoff prediction with the Bayesian {model}'s uncertainty features beats the "
            f"deterministic {model}'s scores (F1 over the oracle's)",
            source=f"{P001}, Table 5 and §5.4",
            paper=cutoff_paper,
            paper_effect=cutoff,
            metric="cutoff.F1_ratio.uncertainty",
            against="bert",
            reference=("cutoff.F1_ratio.scores",),
            **same,
        ),
    )


def _over_conv_knrm(grid: str, id: str, model: str) -> tuple[Claim, ...]:
    """The deterministic BERT against Conv-KNRM, where the grid runs Conv-KNRM (paper001's BERT-L2)."""
    t = P001_TABLES[model]
    return (
        claim(
            id=f"{id}-over-conv_knrm",
            grid=grid,
            text=f"the deterministic {model} ranks better than Conv-KNRM (nDCG@10)",
            source=f"{P001}, Table 2",
            paper=f"nDCG@200/20 of {model}^D {t['over_knrm'][1]} (MS MARCO, TREC DL, Robust04); mean "
            f"{t['over_knrm'][0]:+.1%}",
            paper_effect=t["over_knrm"][0],
            method="bert",
            metric="nDCG@10",
            against="conv_knrm",
            scale="relative",
        ),
    )


# --- paper 002 (Gisserot-Boukhlef et al. 2024): grid paper002, bert's scores, in-domain tasks --------
# Table 1, nAUC-mAP in %: the average over the six datasets and the range over them.
TABLE1_002 = {
    "u_max": (27.5, 16.6, 49.2),
    "u_std": (28.5, 16.2, 58.7),
    "u_1-2": (21.5, 4.7, 39.4),
    "u_lin": (37.4, 22.0, 65.4),
}
ON_BERT = {"grid": "paper002", "method": "bert", "kinds": ("in-domain",)}
PAPER002: tuple[Claim, ...] = (
    claim(
        id="002-u-lin",
        text="u_lin abstains better than u_std on average over the tasks (nAUC of AP)",
        source=f"{P002}, Table 1 (average, mAP)",
        paper="nAUC-mAP (%) on average over six datasets and the models: u_lin 37.4 against u_std 28.5, "
        "d = +8.9 points (u_max 27.5, u_1-2 21.5); 'edging out the best baseline strategy (u_std) by "
        "almost 10 points' (§5.1)",
        paper_effect=0.089,
        metric="nAUC.AP.u_lin",
        reference=("nAUC.AP.u_std",),
        **ON_BERT,
    ),
    *(
        claim(
            id=f"002-u-lin-{name}",
            text=f"u_lin abstains better than u_std on average over the tasks (nAUC of {metric})",
            source=f"{P002}, Table 1 (average, {paper_metric})",
            paper=f"nAUC-{paper_metric} (%) on average over six datasets and the models: u_lin {lin} against "
            f"u_std {std}, d = {lin - std:+.1f} points",
            paper_effect=round((lin - std) / 100, 3),
            metric=f"nAUC.{metric}.u_lin",
            reference=(f"nAUC.{metric}.u_std",),
            **ON_BERT,
        )
        for name, metric, paper_metric, lin, std in (
            ("ndcg", "nDCG@10", "mNDCG", 38.0, 29.1),
            ("rr", "RR", "mRR", 40.7, 32.3),
        )
    ),
    *(
        claim(
            id=f"002-nauc-positive-{u}",
            text=f"abstaining with {u} improves AP (nAUC above 0)",
            source=f"{P002}, Table 1 and §5.1",
            paper=f"'all evaluated abstention-based methods improve downstream evaluation metrics (nAUCs "
            f"greater than 0)': {u}'s nAUC-mAP {mean} % on average, {low} to {high} % over the datasets",
            paper_effect=mean / 100,
            metric=f"nAUC.AP.{u}",
            floor=0.0,
            expect="at least",
            **ON_BERT,
        )
        for u, (mean, low, high) in TABLE1_002.items()
    ),
    *(
        claim(
            id="002-reference-size" + ("" if size == 500 else f"-{size}"),
            text=f"u_lin fitted on {size} reference queries abstains better than u_std (nAUC of AP)",
            source=f"{P002}, Table 5 and Figure 4",
            paper="no number at this size: u_lin overtakes u_std from 9 to 80 reference queries (break-even "
            "per dataset; 38 on average, Table 5) and stays ahead in Figure 4's curves",
            paper_effect=None,
            metric=f"nAUC.AP.u_lin@{size}",
            reference=("nAUC.AP.u_std",),
            **ON_BERT,
        )
        for size in (500, 100)
    ),
    *(
        claim(
            id=f"002-threshold-{rate}",
            text=f"threshold calibration: at a target abstention rate of {rate} %, u_lin's error on the "
            "achieved AP is below u_std's",
            source=f"{P002}, Table 3 (lower part, mAP)",
            paper=f"MAE between target and achieved mAP (%, StackOverflow, ember-v1, 1000 seeds): u_lin "
            f"{lin} against u_std {std}, {lin / std - 1:+.1%}; 'u_std having a MAE twice as high at 90 %' "
            "(§5.3)",
            paper_effect=round(lin / std - 1, 3),
            metric=f"threshold.AP_MAE.{rate}.u_lin",
            reference=(f"threshold.AP_MAE.{rate}.u_std",),
            scale="relative",
            expect="lower",
            **ON_BERT,
        )
        for rate, lin, std in ((10, 1.22, 1.24), (50, 1.33, 1.52), (90, 1.51, 3.09))
    ),
)

# --- papers 003/004 (PG-DRR, GPF-BERT): grids gp (every method) and gp_fit (trained to convergence) ---
# ECE and R_10@1 as the papers tabulate them, one value per dataset or train → test pair; a claim's
# effect is the mean difference over the first table holding both methods.
T004_1 = f"{P004}, Table 1 (MSDialog, MANtIS, UDC)"
T004_2 = f"{P004}, Table 2 (six train → test pairs of MSDialog, MANtIS, UDC)"
T003_3 = f"{P003}, Table 3 (MS Dialog → MANtIS, MANtIS → MS Dialog)"
Table = tuple[str, dict[str, tuple[float, ...]]]
ECE_TABLES: dict[Kind, tuple[Table, ...]] = {
    "in-domain": (
        (
            T004_1,
            {
                "bert": (0.125, 0.169, 0.037),
                "mc_dropout": (0.110, 0.152, 0.033),
                "ensemble": (0.115, 0.157, 0.034),
                "sngp": (0.110, 0.147, 0.033),
                "gpf": (0.025, 0.025, 0.016),
            },
        ),
    ),
    "cross-domain": (
        (
            T004_2,
            {
                "bert": (0.343, 0.109, 0.514, 0.071, 0.616, 0.510),
                "mc_dropout": (0.328, 0.092, 0.497, 0.061, 0.622, 0.537),
                "ensemble": (0.331, 0.097, 0.503, 0.064, 0.610, 0.508),
                "sngp": (0.307, 0.085, 0.485, 0.059, 0.607, 0.494),
                "gpf": (0.206, 0.026, 0.364, 0.025, 0.528, 0.400),
            },
        ),
        (
            T003_3,
            {
                "bert": (0.343, 0.514),
                "mc_dropout": (0.328, 0.497),
                "ensemble": (0.331, 0.503),
                "sngp": (0.307, 0.485),
                "pg_gp": (0.101, 0.091),
            },
        ),
    ),
}
R1_TABLES: tuple[Table, ...] = (
    (T004_1, {"bert": (0.682, 0.590, 0.810), "gpf": (0.681, 0.614, 0.818)}),
    (f"{P003}, Table 1 (MS Dialog, MANtIS)", {"bert": (0.658, 0.556), "pg_gp": (0.656, 0.606)}),
)
# Across domains only GPF-BERT's paper tabulates R_10@1 (004 Table 2; its text says GPF-BERT's R10@1 "is
# lower in distribution shift tasks", its table has it 2.8 points above BERT's on average).
R1_SHIFT_TABLE: Table = (
    T004_2,
    {
        "bert": (0.378, 0.609, 0.430, 0.662, 0.324, 0.250),
        "gpf": (0.381, 0.612, 0.452, 0.659, 0.431, 0.283),
    },
)
KEEPS = "'R10@1 and MAP are better or less than 1 % decrease' (both papers, in-domain)"
SHIFT_KEEPS = (
    "the text: 'the R10@1 and MAP of GPF-BERT is lower in distribution shift tasks' (§4), not what its "
    "table shows"
)
PG_FIGURE = (
    f"{P003}, Figure 2",
    "figure only (reliability diagrams, MS Dialog and MANtIS); the text: PG-DRR's ECE 'is almost lowest, "
    "reduced by almost 6 % and 16 %' against the prior methods (§5.1)",
)


def _cells(values: Sequence[float]) -> str:
    return "/".join(f"{v:.3f}" for v in values)


def _tabled(tables: Sequence[Table], method: str, reference: str) -> tuple[float | None, str, str]:
    """The mean difference method − reference in the first table holding both, its source and quote."""
    for source, table in tables:
        if method in table and reference in table:
            d = round(fmean(a - b for a, b in zip(table[method], table[reference], strict=True)), 4)
            cells = f"{_cells(table[method])} against {NAMES[reference]} {_cells(table[reference])}"
            return d, source, f"{NAMES[method]} {cells}: mean d = {d:+.3f}"
    return None, *PG_FIGURE


def _gp_ece(grid: str, prefix: str, reference: str, kind: Kind, methods: Sequence[str]) -> list[Claim]:
    """GP heads' ECE against ``reference`` in ``kind`` conditions, with the papers' effects (and the
    papers' own baselines, MC dropout and the ensemble, against BERT)."""
    found = {m: _tabled(ECE_TABLES[kind], m, reference) for m in methods}
    text: str | dict[str, str] = f"a GP output layer lowers ECE against {NAMES[reference]}, {kind}"
    if set(methods) <= set(STOCHASTIC):
        text = f"the papers' baselines (MC dropout, ensemble) lower ECE against {NAMES[reference]}, {kind}"
    if reference == "sngp":  # GPF-BERT = SNGP + focal loss; PG-DRR = a GP layer with Pólya-Gamma inference
        text = {
            "gpf": f"the focal loss lowers SNGP's ECE (GPF-BERT against SNGP), {kind}",
            "pg_gp": f"Pólya-Gamma inference lowers ECE against SNGP's Laplace (PG-DRR), {kind}",
        }
    versus = "" if reference == "bert" else f"-vs-{reference}"
    return per_method(
        methods,
        [found[m][0] for m in methods],
        id=f"{prefix}-ece{versus}{'' if kind == 'in-domain' else '-' + kind}",
        grid=grid,
        text=text,
        source={m: found[m][1] for m in methods},
        paper={m: found[m][2] for m in methods},
        metric="ECE",
        against=reference,
        expect="lower",
        kinds=(kind,),
        variant=R10,
    )


def _gp_keeps(grid: str, prefix: str, kind: Kind = "in-domain") -> list[Claim]:
    """GPF-BERT and PG-DRR keep BERT's R_10@1 in-domain (GPF-BERT alone across domains, the one paper
    that tabulates it there): better, or less than 1 point worse."""
    methods = ("gpf", "pg_gp") if kind == "in-domain" else ("gpf",)
    tables = R1_TABLES if kind == "in-domain" else (R1_SHIFT_TABLE,)
    found = {m: _tabled(tables, m, "bert") for m in methods}
    return per_method(
        methods,
        [found[m][0] for m in methods],
        id=f"{prefix}-effectiveness{'' if kind == 'in-domain' else '-' + kind}",
        grid=grid,
        text=f"a GP output layer keeps BERT's R_10@1 {kind}: better, or at most 1 point worse",
        source={m: found[m][1] for m in methods},
        paper={
            m: f"R_10@1 {quote}; {KEEPS if kind == 'in-domain' else SHIFT_KEEPS}"
            for m, (_, _, quote) in found.items()
        },
        metric="R@1",
        against="bert",
        expect="no worse",
        margin=0.01,
        kinds=(kind,),
        variant=R10,
    )


# Against MC dropout and the ensemble in-domain only the papers' own methods: neither paper claims SNGP
# below them there (004 Table 1: 0.110 against 0.110 on MSDialog). SNGP's R@1 is no claim (the papers'
# tables disagree: 004 −0.7 points on average, 003 −3.5).
GP_FAMILY: tuple[Claim, ...] = (
    *(
        c
        for kind in ("in-domain", "cross-domain")
        for reference, methods in (
            ("bert", GP),
            ("bert", STOCHASTIC),
            ("mc_dropout", GP if kind != "in-domain" else ("gpf", "pg_gp")),
            ("ensemble", GP if kind != "in-domain" else ("gpf", "pg_gp")),
            ("sngp", ("gpf", "pg_gp")),
        )
        for c in _gp_ece("gp", "gp", reference, kind, methods)
    ),
    *_gp_keeps("gp", "gp"),
    *_gp_keeps("gp", "gp", "cross-domain"),
    # gp_fit: gp's in-domain condition with every member trained to convergence on dev (no MC dropout
    # or ensemble there): the claims against BERT.
    *_gp_ece("gp_fit", "gp-fit", "bert", "in-domain", GP),
    *_gp_keeps("gp_fit", "gp-fit"),
)

# --- inference cost: method_cost's timed repeats, not a grid's run ----------------------------------
# Inference cost is no grid's: a run directory holds no scoring times (cached predictions would carry
# stale ones). These claims read method_cost's CSVs of timed repeats (rankuq findings --cost FILE, once
# per file): a GPU's timings are judged, a CPU's are shown as what they are (``bench.findings.cost``).
COST = "method_cost"
COST_COLUMNS = ("layers", "pairs", "threads", "precision", "method", "label", "repeat", "seconds", "command")
# A CPU condition's label: on one CPU thread in fp32 a method's time is its forward passes times bert's.
CPU = "forward-pass count on a CPU (not a GPU timing)"
# Inference time over MS Dialog's test set, per paper: (unit, times).
TIMES = {
    f"{P003}, Table 2": (
        "ms",
        {"bert": 11.48, "mc_dropout": 111.28, "ensemble": 57.39, "sngp": 12.82, "pg_gp": 17.09},
    ),
    f"{P004}, Table 3": ("min", {"bert": 6.80, "mc_dropout": 65.00, "ensemble": 71.80, "gpf": 7.87}),
}


def _timed(method: str) -> tuple[str, str, dict[str, float]]:
    """Source, unit and times of the paper that times ``method`` (GPF-BERT: 004; SNGP, PG-DRR: 003)."""
    return next((source, unit, t) for source, (unit, t) in TIMES.items() if method in t)


def _ratio(gp: str, method: str, over: str) -> float:
    """``method``'s inference time over ``over``'s in the paper that times the GP head ``gp``."""
    times = _timed(gp)[2]
    return times[method] / times[over]


def _cost_claim(id: str, gp: str, text: str, paper: str, effect: float, **fields: object) -> Claim:
    source, unit, t = _timed(gp)
    quoted = ", ".join(f"{NAMES[m]} {v:.2f}" for m, v in t.items())
    return Claim(
        id=id,
        grid=COST,
        text=text,
        source=source,
        paper=f"{paper} (inference times in {unit}: {quoted})",
        paper_effect=round(effect, 3),
        kinds=ALL_KINDS,
        variant=None,
        **fields,  # type: ignore[arg-type]
    )


COST_CLAIMS: tuple[Claim, ...] = (
    Claim(
        id="001-cost-overhead",
        grid=COST,
        text="last-layer MC dropout adds a negligible cost to BERT's inference (within 0.5× of BERT's time)",
        source=f"{P001}, abstract and §3",
        paper="'while adding only negligible computational overhead' (abstract; the encoder runs once, the "
        "last layers are sampled): no number. Margin 0.5×, as for the GP heads (PG-DRR's 1.49× is the "
        "largest overhead a paper here calls negligible)",
        paper_effect=None,
        method="last_layer_mc",
        metric="time (× bert)",
        against="bert",
        expect="within",
        margin=0.5,
        kinds=ALL_KINDS,
        variant=None,
    ),
    # d = the GP head's time over bert's − the other method's, in the same repeat.
    *(
        _cost_claim(
            f"gp-cost-{gp}-vs-{other}",
            gp,
            f"{NAMES[gp]} costs less at inference than {NAMES[other]}",
            f"time over BERT's: {NAMES[gp]} {_ratio(gp, gp, 'bert'):.2f}×, "
            f"{NAMES[other]} {_ratio(gp, other, 'bert'):.2f}×",
            _ratio(gp, gp, "bert") - _ratio(gp, other, "bert"),
            method=gp,
            metric="time (× bert)",
            against=other,
            expect="lower",
        )
        for gp in GP
        for other in STOCHASTIC
    ),
    # The papers' own methods; margin 0.5: PG-DRR's 1.49× is the largest overhead called negligible.
    *(
        _cost_claim(
            f"gp-cost-{gp}-overhead",
            gp,
            f"{NAMES[gp]} adds a negligible cost to BERT's inference (within 0.5× of BERT's time)",
            f"'only adds negligible computational cost to BERT': {_ratio(gp, gp, 'bert'):.2f}× BERT's time",
            _ratio(gp, gp, "bert") - 1,
            method=gp,
            metric="time (× bert)",
            against="bert",
            expect="within",
            margin=0.5,
        )
        for gp in ("gpf", "pg_gp")
    ),
    # "time (× gp)": the other method's time over the GP head's in the same repeat; d = that ratio − 8.
    *(
        _cost_claim(
            f"gp-cost-{gp}-8x-{other}",
            gp,
            f"{NAMES[gp]} is at least 8× faster at inference than {NAMES[other]}",
            f"'compared to MC Dropout and Ensemble, {NAMES[gp]} has a significant decrease (at least 8 "
            f"times) [in] inference time'; its table: {NAMES[other]} {_ratio(gp, other, gp):.2f}× "
            f"{NAMES[gp]}'s time",
            _ratio(gp, other, gp) - 8,
            method=other,
            metric=f"time (× {gp})",
            floor=8.0,
            expect="at least",
        )
        for gp in ("gpf", "pg_gp")
        for other in STOCHASTIC
    ),
)

CLAIMS: tuple[Claim, ...] = (
    *SANITY_CHECKS,
    *PAPER000,
    *_paper001("paper001", "001", "BERT-L2"),
    *_over_conv_knrm("paper001", "001", "BERT-L2"),
    *_paper001("paper001_l4", "001-L4", "BERT-L4"),
    *PAPER002,
    *GP_FAMILY,
    *COST_CLAIMS,
)
