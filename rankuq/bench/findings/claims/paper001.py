"""Paper 001, Cohen, Mitra, Lesota, Rekabsaz, Eickhoff, "Not All Relevance Scores are Equal", SIGIR
2021: grids paper001 (BERT-L2, with Conv-KNRM) and paper001_l4 (BERT-L4), and one cost claim on
method_cost's timings. Relative effects, from the tables quoted (Table 3: nDCG@200 TREC DL, nDCG@20
Robust04; B = last-layer MC dropout, D = deterministic)."""

from dataclasses import dataclass

from rankuq.bench.findings.claims.schema import ALL_KINDS, COST, Claim, Paper, claim

PAPER = Paper("Cohen et al., 2021")
P001 = "Cohen et al. 2021"  # as the sources cite it
VIEWS = ("optimistic", "pessimistic")


@dataclass(frozen=True)
class Tables:
    """One model's numbers from the paper's tables: (mean effect, the cells it is computed from)."""

    keeps: tuple[float, str]  # Table 2, nDCG of B over D
    keeps_mrr: tuple[float, str]  # Table 2, MRR of B over D
    erce: tuple[float, str]  # Table 4
    cvar: str  # Table 3's cells
    over_mean: dict[str, float]  # Table 3, CVaR's mean gain over B's mean ranking, per view
    over_deterministic: dict[str, float]  # and over D
    cutoff: tuple[float, str]  # Table 5


TABLES = {
    "BERT-L2": Tables(
        keeps=(-0.0037, "−0.8 %, −1.0 %, +0.7 % (MS MARCO, TREC DL, Robust04)"),
        keeps_mrr=(0.0033, "−1.3 %, +0.5 %, +1.8 % (MS MARCO, TREC DL, Robust04)"),
        erce=(-0.268, "0.703 → 0.465 (TREC DL), 0.493 → 0.396 (Robust04)"),
        cvar=(
            "TREC DL: D 0.582, B 0.576, CVaR+ 0.597*, CVaR− 0.598*; Robust04: D 0.398, B 0.402, "
            "CVaR+ 0.411*, CVaR− 0.412*"
        ),
        over_mean={"optimistic": 0.029, "pessimistic": 0.032},
        over_deterministic={"optimistic": 0.029, "pessimistic": 0.031},
        cutoff=(0.054, "77.3 % → 80.6 % (TREC DL), 74.1 % → 78.9 % (Robust04)"),
    ),
    "BERT-L4": Tables(
        keeps=(-0.0033, "−0.1 %, −0.2 %, −0.7 % (MS MARCO, TREC DL, Robust04)"),
        keeps_mrr=(-0.0057, "+0.1 %, +0.8 %, −2.6 % (MS MARCO, TREC DL, Robust04)"),
        erce=(-0.224, "0.700 → 0.507 (TREC DL), 0.477 → 0.395 (Robust04)"),
        cvar=(
            "TREC DL: D 0.582, B 0.581, CVaR+ 0.606*, CVaR− 0.605*; Robust04: D 0.400, B 0.395, "
            "CVaR+ 0.407*, CVaR− 0.407*"
        ),
        over_mean={"optimistic": 0.037, "pessimistic": 0.036},
        over_deterministic={"optimistic": 0.029, "pessimistic": 0.029},
        cutoff=(0.061, "73.6 % → 79.9 % (TREC DL), 75.4 % → 78.1 % (Robust04)"),
    ),
}


def _about(grid: str, id: str, model: str) -> tuple[Claim, ...]:
    """Paper 001's claims about last-layer MC dropout (B) against the deterministic ``model`` (D)."""
    t = TABLES[model]
    cutoff, cutoff_cells = t.cutoff
    cutoff_quote = (
        f"Choppy's F1 as a fraction of the oracle's, {model}^D → {model}^B with <mean, std, skew, entropy>: "
        f"{cutoff_cells}, mean {cutoff:+.1%} ('an approximate 9 % increase' on TREC DL over three models)"
    )
    return (
        *(
            claim(
                id=f"{id}-keeps-{suffix}",
                paper=PAPER,
                grid=grid,
                text=f"last-layer MC dropout (the mean of its samples) keeps the deterministic {model}'s "
                f"{name} (within ±2.6 %)",
                source=f"{P001}, Table 2",
                quote=f"{name.removesuffix('@10')} change of {model}^B over {model}^D: {cells}, "
                f"'{said}'. Margin ±2.6 %: the largest difference Table 2 calls parity (MRR −2.6 %, BERT-L4, "
                "Robust04)",
                paper_effect=effect,
                method="last_layer_mc",
                metric=metric,
                against="bert",
                scale="relative",
                expect="within",
                margin=0.026,
            )
            for suffix, (effect, cells), metric, name, said in (
                ("effectiveness", t.keeps, "nDCG@10", "nDCG@10", "parity"),
                ("mrr", t.keeps_mrr, "RR", "MRR", "par"),
            )
        ),
        claim(
            id=f"{id}-erce",
            paper=PAPER,
            grid=grid,
            text=f"the Bayesian {model} has a lower ERCE than the deterministic one",
            source=f"{P001}, Table 4",
            quote=f"ERCE {model}^D → {model}^B: {t.erce[1]}, mean {t.erce[0]:+.1%} ('~30 % more "
            "calibrated' over all models, §5.3)",
            paper_effect=t.erce[0],
            method="last_layer_mc",
            metric="ERCE",
            against="bert",
            scale="relative",
            expect="lower",
        ),
        *(
            claim(
                id=f"{id}-cvar-{view}{suffix}",
                paper=PAPER,
                grid=grid,
                text=f"CVaR reranking ({view}) of the Bayesian {model} raises nDCG@10 over {over}",
                source=f"{P001}, Table 3 and §5.2",
                quote=f"{t.cvar} (* p < 0.05); mean gain over {over}: {gains[view]:+.1%} ('3-5 %')",
                paper_effect=gains[view],
                method="last_layer_mc",
                metric=f"CVaR.{view}.nDCG@10",
                against=against,
                reference=("nDCG@10",),
                scale="relative",
            )
            for view in VIEWS
            for suffix, gains, against, over in (
                ("", t.over_mean, None, "its mean ranking"),
                ("-deterministic", t.over_deterministic, "bert", f"the deterministic {model}"),
            )
        ),
        claim(
            id=f"{id}-cutoff",
            paper=PAPER,
            grid=grid,
            text=f"the Bayesian {model}'s uncertainty features improve cutoff prediction over its scores "
            "alone (F1 over the oracle's)",
            source=f"{P001}, Table 5 and §5.4",
            quote=f"{cutoff_quote}; the paper compares B with D and credits the uncertainty features, B's "
            "mean being D's (§5.4); here the same model with and without them",
            paper_effect=cutoff,
            method="last_layer_mc",
            metric="cutoff.F1_ratio.uncertainty",
            reference=("cutoff.F1_ratio.scores",),
            scale="relative",
        ),
        *(
            claim(
                id=f"{id}-moments-{moment}",
                paper=PAPER,
                grid=grid,
                text=f"the Bayesian {model}'s {said} as its mean score rises (Spearman's ρ over a list's "
                "candidates below 0)",
                source=f"{P001}, Figure 2 and §5.2",
                quote=f"'{quote}' (Figure 2: μ against σ² and against skew δ, TREC DL 2019; scores are "
                "log-probabilities, the top documents at 0 to −0.1): no number. Here the moments of the "
                "log-probability draws, ρ per query averaged over queries (the moments probe)",
                paper_effect=None,
                method="last_layer_mc",
                metric=f"moments.rho.{moment}",
                floor=0.0,
                expect="lower",
                kinds=("in-domain",),
            )
            for moment, said, quote in (
                (
                    "variance",
                    "score variance falls",
                    "the model is most certain about highly relevant documents, and a non-linear increase "
                    "in uncertainty as documents move further away from the query",
                ),
                (
                    "skew",
                    "score skew turns negative",
                    "the top most relevant documents are highly skewed with low variance ... with the "
                    "majority of its mass on the right of the distribution",
                ),
            )
        ),
        claim(
            id=f"{id}-cutoff-deterministic",
            paper=PAPER,
            grid=grid,
            text=f"cutoff prediction with the Bayesian {model}'s uncertainty features beats the "
            f"deterministic {model}'s scores (F1 over the oracle's)",
            source=f"{P001}, Table 5 and §5.4",
            quote=cutoff_quote,
            paper_effect=cutoff,
            method="last_layer_mc",
            metric="cutoff.F1_ratio.uncertainty",
            against="bert",
            reference=("cutoff.F1_ratio.scores",),
            scale="relative",
        ),
    )


# Table 2: nDCG of BERT-L2^D over Conv-KNRM^D, which runs in paper001 (no claim of its own).
OVER_KNRM = (0.030, "0.398/0.582/0.431 against Conv-KNRM^D's 0.380/0.565/0.425: +4.7, +3.0, +1.4 %")

CLAIMS: tuple[Claim, ...] = (
    *_about("paper001", "001", "BERT-L2"),
    claim(
        id="001-over-conv_knrm",
        paper=PAPER,
        grid="paper001",
        text="the deterministic BERT-L2 ranks better than Conv-KNRM (nDCG@10)",
        source=f"{P001}, Table 2",
        quote=f"nDCG@200/20 of BERT-L2^D {OVER_KNRM[1]} (MS MARCO, TREC DL, Robust04); mean "
        f"{OVER_KNRM[0]:+.1%}",
        paper_effect=OVER_KNRM[0],
        method="bert",
        metric="nDCG@10",
        against="conv_knrm",
        scale="relative",
    ),
    *_about("paper001_l4", "001-L4", "BERT-L4"),
)

# The encoder runs once and the last layers are sampled: a cost claim on method_cost's timed repeats.
COST_CLAIMS: tuple[Claim, ...] = (
    Claim(
        id="001-cost-overhead",
        paper=PAPER,
        grid=COST,
        text="last-layer MC dropout adds a negligible cost to BERT's inference (within 0.5× of BERT's time)",
        source=f"{P001}, abstract and §3",
        quote="'while adding only negligible computational overhead' (abstract; the encoder runs once, the "
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
)
