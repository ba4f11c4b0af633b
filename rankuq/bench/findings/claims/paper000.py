"""Paper 000, Penha & Hauff, "On the Calibration and Uncertainty of Neural Learning to Rank Models",
EACL 2021: grid paper000, every list R10 (paper 000's R_10 lists) except NOTA's."""

from rankuq.bench.findings.claims.schema import R10, STOCHASTIC, Claim, Kind, Paper, claim

PAPER = Paper("Penha & Hauff, 2021")
P000 = "Penha & Hauff 2021"  # as the sources cite it
# Table 2: mean relative ECE change against BERT of (S-BERT^D, S-BERT^E) over its cells of each kind.
ECE_000: dict[Kind, tuple[float, float, str]] = {
    "in-domain": (-0.232, -0.178, "3 no-shift cells (D −56.1/−11.5/−1.8 %, E −35.1/−43.1/+24.8 %)"),
    "cross-domain": (-0.055, -0.069, "6 cross-domain cells (D −26.9 to +8.3 %, E −55.0 to +25.1 %)"),
    "cross-NS": (-0.080, -0.192, "6 cross-NS cells (D −18.7 to −1.3 %, E −37.7 to −4.8 %)"),
}
# §5.1 and Table 1: BERT's ECE under each shift, times the no-shift ECE on the same test data.
ECE_SHIFT: tuple[tuple[Kind, float, str], ...] = (
    ("cross-domain", 4.6, "six cross-domain ECEs (0.009 to 0.028)"),
    ("cross-NS", 7.9, "six cross-NS ECEs (0.009 to 0.050)"),
)
# Tables 5 and 4: NOTA F1-macro gain of (S-BERT^D, S-BERT^E) per kind: id suffix, table, its cells.
NOTA: tuple[tuple[Kind, str, tuple[float, float], str, str], ...] = (
    ("cross-NS", "", (0.46, 0.244), "Table 5", "Table 5's six cells give +40 %"),
    ("cross-domain", "-cross-domain", (0.24, 0.121), "Table 4", "Table 4's six cross-domain cells"),
)
# Table 1: BERT's relative R_10@1 change under each shift against the no-shift cell.
R1_SHIFT: tuple[tuple[Kind, float, str], ...] = (
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

CLAIMS: tuple[Claim, ...] = (
    *(
        claim(
            id=f"000-ece-{kind.lower()}-{method}",
            paper=PAPER,
            grid="paper000",
            text=f"stochastic BERT lowers ECE against deterministic BERT, {kind}",
            source=f"{P000}, Table 2",
            quote=f"relative ECE change against BERT, mean of Table 2's {cells}: S-BERT^D {d:+.1%}, "
            f"S-BERT^E {e:+.1%}; over all 15 cells −10 % and −14 % (§5.1)",
            metric="ECE",
            against="bert",
            scale="relative",
            expect="lower",
            kinds=(kind,),
            variant=R10,
            paper_effect=effect,
            method=method,
        )
        for kind, (d, e, cells) in ECE_000.items()
        for method, effect in zip(STOCHASTIC, (d, e), strict=True)
    ),
    *(
        claim(
            id=f"000-ece-shift-{kind.lower()}",
            paper=PAPER,
            grid="paper000",
            text=f"BERT's ECE is higher {kind} than without shift on the same test data",
            source=f"{P000}, §5.1 and Table 1",
            quote=f"'on average, the ECE is {times} times higher for {kind}' (§5.1): the mean of Table 1's "
            f"{cells} over the no-shift ECEs' (0.003, 0.006, 0.002; the text's 'on average 0.036': 0.0036)",
            paper_effect=round(times - 1, 3),
            method="bert",
            metric="ECE",
            baseline_condition="no-shift",
            scale="relative",
            kinds=(kind,),
            variant=R10,
        )
        for kind, times, cells in ECE_SHIFT
    ),
    claim(
        id="000-ece-level-in-domain",
        paper=PAPER,
        grid="paper000",
        text="BERT is calibrated without shift: its ECE is at most the paper's in-domain average, 0.036",
        source=f"{P000}, §5.1 and Table 1",
        quote="'BERT is both effective and calibrated under no distributional shift conditions ... the "
        "lowest calibration error (on average 0.036 ECE)' (§5.1); Table 1's underlined no-shift cells give "
        "0.003, 0.006 and 0.002 (mean 0.0037), so the text's 0.036 is the lenient ceiling; ECE on balanced "
        "lists",
        paper_effect=None,
        method="bert",
        metric="ECE",
        floor=0.036,
        expect="at most",
        kinds=("in-domain",),
        variant=R10,
    ),
    claim(
        id="000-ece-nonrel",
        paper=PAPER,
        grid="paper000",
        text="BERT's ECE grows with the number of non-relevant candidates per relevant one (9 against 1)",
        source=f"{P000}, Figure 2",
        quote="figure only: BERT trained on balanced pairs is near the diagonal at #non-rel = 1 and leaves "
        "it as #non-rel grows to 2, 5 and 9 (§5.1, no number)",
        paper_effect=None,
        method="bert",
        metric="ECE.nonrel_9",
        reference=("ECE.nonrel_1",),
        kinds=("in-domain",),
        variant=R10,
    ),
    *(
        claim(
            id=f"000-ra-{method}",
            paper=PAPER,
            grid="paper000",
            text="RA with b chosen on dev in [0, 1] improves R_10@1 over the mean ranking",
            source=f"{P000}, Table 3 and §5.2",
            quote="relative R_10@1 gain over the mean of the predictive distribution, on average over "
            "Table 3's 15 cells: RA-BERT^D +1.7 %, RA-BERT^E +2 % (§5.2); b = 0 chosen in 8 of the 30",
            metric="RA.R@1",
            reference=("R@1",),
            scale="relative",
            variant=R10,
            paper_effect=effect,
            method=method,
        )
        for method, effect in zip(STOCHASTIC, (0.017, 0.020), strict=True)
    ),
    *(
        claim(
            id=f"000-ra-cross-ns-{method}",
            paper=PAPER,
            grid="paper000",
            text="RA improves R_10@1 under cross-negative-sampling shift (most of all there)",
            source=f"{P000}, Table 3 (cross-NS columns)",
            quote="relative R_10@1 gain, mean of Table 3's 6 cross-NS cells: RA-BERT^D +4.5 %, RA-BERT^E "
            "+4.8 % (−7.6 % to +17.2 %; 'up to 17.2 %', §5.2)",
            metric="RA.R@1",
            reference=("R@1",),
            scale="relative",
            kinds=("cross-NS",),
            variant=R10,
            paper_effect=effect,
            method=method,
        )
        for method, effect in zip(STOCHASTIC, (0.045, 0.048), strict=True)
    ),
    *(
        claim(
            id=f"000-ra-negative-{method}",
            paper=PAPER,
            grid="paper000",
            text="RA with a negative b (risk-seeking; b chosen on dev among negative values) ranks worse "
            "than the mean ranking (R_10@1)",
            source=f"{P000}, §5.2",
            quote="no number: 'when using b < 0 [...] in all conditions we found that the effectiveness was "
            "significantly worse than when b = 0' (b < 0 left out of Figure 3)",
            metric="RA.neg.R@1",
            reference=("R@1",),
            expect="lower",
            scale="relative",
            variant=R10,
            paper_effect=None,
            method=method,
        )
        for method in STOCHASTIC
    ),
    *(
        claim(
            id=f"000-nota{suffix}-{method}",
            paper=PAPER,
            grid="paper000",
            text=f"adding the variances to the mean scores raises NOTA F1-macro, {kind}",
            source=f"{P000}, {table} and §5.3",
            quote=f"relative F1-macro gain of the mean plus the variances over the mean alone (random "
            f"forest, 5 folds), {kind}: {d:+.0%} with S-BERT^D's variances (§5.3; {cells}), {e:+.1%} with "
            "S-BERT^E's (computed from the table); the paper adds S-BERT^E's variances to S-BERT^D's mean, "
            "here each method's own",
            metric="NOTA.F1.mean_var",
            reference=("NOTA.F1.mean",),
            scale="relative",
            kinds=(kind,),
            variant="nota",
            paper_effect=effect,
            method=method,
        )
        for kind, suffix, (d, e), table, cells in NOTA
        for method, effect in zip(STOCHASTIC, (d, e), strict=True)
    ),
    claim(
        id="000-ensemble-effective",
        paper=PAPER,
        grid="paper000",
        text="the ensemble's mean ranking (S-BERT^E) is more effective than BERT (R_10@1)",
        source=f"{P000}, Figure 3 (b = 0) and §5.2",
        quote="figure only: 'S-BERT^E is more effective than the baseline BERT for almost all combinations'",
        paper_effect=None,
        method="ensemble",
        metric="R@1",
        against="bert",
        scale="relative",
        variant=R10,
    ),
    claim(
        id="000-mc_dropout-keeps-effectiveness",
        paper=PAPER,
        grid="paper000",
        text="MC dropout's mean ranking (S-BERT^D) keeps BERT's R_10@1 (within ±2 %)",
        source=f"{P000}, Figure 3 (b = 0) and §5.2",
        quote="figure only: 'S-BERT^D is equivalent to the baseline'. Margin ±2 % (relative): the average "
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
            paper=PAPER,
            grid="paper000",
            text=f"BERT's R_10@1 is lower {kind} than without shift on the same test data",
            source=f"{P000}, Table 1",
            quote=f"R_10@1 of BERT trained with NS_BM25, {cells}: mean relative change {effect:+.1%} (the "
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
        for kind, effect, cells in R1_SHIFT
    ),
    claim(
        id="000-ece-ensemble-vs-mc_dropout",
        paper=PAPER,
        grid="paper000",
        text="the ensemble (S-BERT^E) is better calibrated than MC dropout (S-BERT^D) (ECE)",
        source=f"{P000}, Table 2 and §5.1",
        quote="'S-BERT^E is on average 14% better (has less calibration error) than BERT, while S-BERT^D is "
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
