"""Papers 003 and 004, read together: Ye et al., "On the Calibration and Uncertainty with Pólya-Gamma
Augmentation for Dialog Retrieval Models" (PG-DRR), AAAI 2023, and "Efficient Uncertainty Estimation
with Gaussian Process for Reliable Dialog Response Retrieval" (GPF-BERT), ICASSP 2023: grids gp (every
method) and gp_fit (trained to convergence), and the inference cost claims on method_cost's timings."""

from collections.abc import Sequence
from statistics import fmean

from rankuq.bench.findings.claims.schema import (
    ALL_KINDS,
    COST,
    GP,
    NAMES,
    R10,
    STOCHASTIC,
    Claim,
    ClaimExpect,
    Kind,
    Paper,
    claim,
)

PAPER = Paper("Ye et al., 2023 / GPF-BERT, 2023 (003, 004)")
P003, P004 = "PG-DRR (Ye et al.) 2023", "GPF-BERT 2023"  # as the sources cite them

# ECE and R_10@1 as the papers tabulate them, one value per dataset or train → test pair; a claim's
# effect is the mean difference over the first table holding both methods.
T004_1 = f"{P004}, Table 1 (MSDialog, MANtIS, UDC)"
T004_2 = f"{P004}, Table 2 (six train → test pairs of MSDialog, MANtIS, UDC)"
T003_3 = f"{P003}, Table 3 (MS Dialog → MANtIS, MANtIS → MS Dialog)"
T003_1 = f"{P003}, Table 1 (MS Dialog, MANtIS)"
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
    (T003_1, {"bert": (0.658, 0.556), "pg_gp": (0.656, 0.606)}),
)
MAP_TABLES: tuple[Table, ...] = (
    (T004_1, {"bert": (0.800, 0.713, 0.880), "gpf": (0.799, 0.729, 0.885)}),
    (T003_1, {"bert": (0.782, 0.683), "pg_gp": (0.784, 0.731)}),
)
# Across domains: 004 Table 2 (GPF-BERT) and 003 Table 3 (PG-DRR). GPF-BERT's text says its R10@1 "is
# lower in distribution shift tasks", its table has it 2.8 points above BERT's on average.
R1_SHIFT_TABLES: tuple[Table, ...] = (
    (
        T004_2,
        {
            "bert": (0.378, 0.609, 0.430, 0.662, 0.324, 0.250),
            "gpf": (0.381, 0.612, 0.452, 0.659, 0.431, 0.283),
        },
    ),
    (T003_3, {"bert": (0.378, 0.424), "pg_gp": (0.530, 0.330)}),
)
MAP_SHIFT_TABLES: tuple[Table, ...] = (
    (
        T004_2,
        {
            "bert": (0.538, 0.736, 0.598, 0.769, 0.513, 0.418),
            "gpf": (0.540, 0.737, 0.619, 0.768, 0.603, 0.447),
        },
    ),
    (T003_3, {"bert": (0.537, 0.599), "pg_gp": (0.673, 0.553)}),
)
KEEPS = "'R10@1 and MAP are better or less than 1 % decrease' (both papers, in-domain)"
SHIFT_KEEPS = {
    "gpf": "the text: 'the R10@1 and MAP of GPF-BERT is lower in distribution shift tasks' (004 §4), "
    "not what its table shows",
    "pg_gp": "the text: PG-DRR's 'R10@1 and MAP are significantly higher or competitive in distribution "
    "shift tasks' (003 §5.2)",
}
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


def _ece_text(method: str, reference: str, kind: Kind, methods: Sequence[str]) -> str:
    if reference == "sngp":  # GPF-BERT = SNGP + focal loss; PG-DRR = a GP layer with Pólya-Gamma inference
        return {
            "gpf": f"the focal loss lowers SNGP's ECE (GPF-BERT against SNGP), {kind}",
            "pg_gp": f"Pólya-Gamma inference lowers ECE against SNGP's Laplace (PG-DRR), {kind}",
        }[method]
    if set(methods) <= set(STOCHASTIC):
        return f"the papers' baselines (MC dropout, ensemble) lower ECE against {NAMES[reference]}, {kind}"
    return f"a GP output layer lowers ECE against {NAMES[reference]}, {kind}"


def _gp_ece(grid: str, prefix: str, reference: str, kind: Kind, methods: Sequence[str]) -> list[Claim]:
    """GP heads' ECE against ``reference`` in ``kind`` conditions, with the papers' effects (and the
    papers' own baselines, MC dropout and the ensemble, against BERT)."""
    versus = "" if reference == "bert" else f"-vs-{reference}"
    where = "" if kind == "in-domain" else f"-{kind}"
    return [
        claim(
            id=f"{prefix}-ece{versus}{where}-{method}",
            paper=PAPER,
            grid=grid,
            text=_ece_text(method, reference, kind, methods),
            source=source,
            quote=quote,
            paper_effect=effect,
            method=method,
            metric="ECE",
            against=reference,
            expect="lower",
            kinds=(kind,),
            variant=R10,
        )
        for method in methods
        for effect, source, quote in [_tabled(ECE_TABLES[kind], method, reference)]
    ]


def _gp_keeps(grid: str, prefix: str, kind: Kind = "in-domain", metric: str = "R@1") -> list[Claim]:
    """GPF-BERT and PG-DRR keep BERT's R_10@1 (``metric`` R@1) or MAP (AP, the mean over queries) in
    each kind of condition: better, or less than 1 point worse."""
    tables = {
        ("in-domain", "R@1"): R1_TABLES,
        ("in-domain", "AP"): MAP_TABLES,
        ("cross-domain", "R@1"): R1_SHIFT_TABLES,
        ("cross-domain", "AP"): MAP_SHIFT_TABLES,
    }[kind, metric]
    name = "R_10@1" if metric == "R@1" else "MAP"
    what = "" if metric == "R@1" else "-map"
    return [
        claim(
            id=f"{prefix}-effectiveness{what}{'' if kind == 'in-domain' else '-' + kind}-{method}",
            paper=PAPER,
            grid=grid,
            text=f"a GP output layer keeps BERT's {name} {kind}: better, or at most 1 point worse",
            source=source,
            quote=f"{name} {quote}; {KEEPS if kind == 'in-domain' else SHIFT_KEEPS[method]}",
            paper_effect=effect,
            method=method,
            metric=metric,
            against="bert",
            expect="no worse",
            margin=0.01,
            kinds=(kind,),
            variant=R10,
        )
        for method in ("gpf", "pg_gp")
        for effect, source, quote in [_tabled(tables, method, "bert")]
    ]


# Against MC dropout and the ensemble in-domain only the papers' own methods: neither paper claims SNGP
# below them there (004 Table 1: 0.110 against 0.110 on MSDialog). SNGP's R@1 is no claim (the papers'
# tables disagree: 004 −0.7 points on average, 003 −3.5).
CLAIMS: tuple[Claim, ...] = (
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
    *(
        c
        for kind in ("in-domain", "cross-domain")
        for m in ("R@1", "AP")
        for c in _gp_keeps("gp", "gp", kind, m)
    ),
    # gp_fit: gp's in-domain condition with every member trained to convergence on dev (no MC dropout
    # or ensemble there): the claims against BERT.
    *_gp_ece("gp_fit", "gp-fit", "bert", "in-domain", GP),
    *_gp_keeps("gp_fit", "gp-fit"),
)


# --- inference cost: method_cost's timed repeats, not a grid's run (``schema.COST``) ----------------
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


def _cost_claim(
    id: str,
    gp: str,
    text: str,
    quote: str,
    effect: float,
    *,
    method: str,
    metric: str,
    expect: ClaimExpect,
    against: str | None = None,
    floor: float | None = None,
    margin: float = 0.0,
) -> Claim:
    """A claim on the GP head ``gp``'s inference cost, quoting the times of the paper that times it."""
    source, unit, t = _timed(gp)
    quoted = ", ".join(f"{NAMES[m]} {v:.2f}" for m, v in t.items())
    return Claim(
        id=id,
        paper=PAPER,
        grid=COST,
        text=text,
        source=source,
        quote=f"{quote} (inference times in {unit}: {quoted})",
        paper_effect=round(effect, 3),
        method=method,
        metric=metric,
        against=against,
        floor=floor,
        expect=expect,
        margin=margin,
        kinds=ALL_KINDS,
        variant=None,
    )


COST_CLAIMS: tuple[Claim, ...] = (
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
