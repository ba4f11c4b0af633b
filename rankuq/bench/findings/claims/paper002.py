"""Paper 002, Gisserot-Boukhlef et al., "Towards Trustworthy Reranking: A Simple yet Effective
Abstention Mechanism", TMLR 2024: grid paper002, bert's scores, in-domain tasks."""

from rankuq.bench.findings.claims.schema import Claim, Paper, claim

PAPER = Paper("Gisserot-Boukhlef et al., 2024")
P002 = "Gisserot-Boukhlef et al. 2024"  # as the sources cite it
# Table 1, nAUC-mAP in %: the average over the six datasets and the range over them.
TABLE1_002 = {
    "u_max": (27.5, 16.6, 49.2),
    "u_std": (28.5, 16.2, 58.7),
    "u_1-2": (21.5, 4.7, 39.4),
    "u_lin": (37.4, 22.0, 65.4),
}
CLAIMS: tuple[Claim, ...] = (
    claim(
        id="002-u-lin",
        paper=PAPER,
        text="u_lin abstains better than u_std on average over the tasks (nAUC of AP)",
        source=f"{P002}, Table 1 (average, mAP)",
        quote="nAUC-mAP (%) on average over six datasets and the models: u_lin 37.4 against u_std 28.5, "
        "d = +8.9 points (u_max 27.5, u_1-2 21.5); 'edging out the best baseline strategy (u_std) by "
        "almost 10 points' (§5.1)",
        paper_effect=0.089,
        metric="nAUC.AP.u_lin",
        reference=("nAUC.AP.u_std",),
        grid="paper002",
        method="bert",
        kinds=("in-domain",),
    ),
    *(
        claim(
            id=f"002-u-lin-{name}",
            paper=PAPER,
            text=f"u_lin abstains better than u_std on average over the tasks (nAUC of {metric})",
            source=f"{P002}, Table 1 (average, {paper_metric})",
            quote=f"nAUC-{paper_metric} (%) on average over six datasets and the models: u_lin {lin} against "
            f"u_std {std}, d = {lin - std:+.1f} points",
            paper_effect=round((lin - std) / 100, 3),
            metric=f"nAUC.{metric}.u_lin",
            reference=(f"nAUC.{metric}.u_std",),
            grid="paper002",
            method="bert",
            kinds=("in-domain",),
        )
        for name, metric, paper_metric, lin, std in (
            ("ndcg", "nDCG@10", "mNDCG", 38.0, 29.1),
            ("rr", "RR", "mRR", 40.7, 32.3),
        )
    ),
    *(
        claim(
            id=f"002-u-lin-over-{u}",
            paper=PAPER,
            text=f"u_lin abstains better than the data-driven {u} on average over the tasks (nAUC of AP)",
            source=f"{P002}, Table 12 and §D (average, mAP)",
            quote=f"nAUC-mAP (%) on average over six datasets and the models: u_lin 37.4 against {u} "
            f"{other}, d = {37.4 - other:+.1f} points; 'u_lin remains the best reference-based method' "
            "(§D.3.1), 'still less effective than simple linear regression' (u_mlp, u_rf, §D.1)",
            paper_effect=round((37.4 - other) / 100, 3),
            metric="nAUC.AP.u_lin",
            reference=(f"nAUC.AP.{u}",),
            grid="paper002",
            method="bert",
            kinds=("in-domain",),
        )
        for u, other in (("u_mlp", 34.2), ("u_rf", 32.9), ("u_log", 35.7), ("u_mah", 31.1))
    ),
    *(
        claim(
            id=f"002-nauc-positive-{u}",
            paper=PAPER,
            text=f"abstaining with {u} improves AP (nAUC above 0)",
            source=f"{P002}, Table 1 and §5.1",
            quote=f"'all evaluated abstention-based methods improve downstream evaluation metrics (nAUCs "
            f"greater than 0)': {u}'s nAUC-mAP {mean} % on average, {low} to {high} % over the datasets",
            paper_effect=mean / 100,
            metric=f"nAUC.AP.{u}",
            floor=0.0,
            expect="at least",
            grid="paper002",
            method="bert",
            kinds=("in-domain",),
        )
        for u, (mean, low, high) in TABLE1_002.items()
    ),
    *(
        claim(
            id="002-reference-size" + ("" if size == 500 else f"-{size}"),
            paper=PAPER,
            text=f"u_lin fitted on {size} reference queries abstains better than u_std (nAUC of AP)",
            source=f"{P002}, Table 5 and Figure 4",
            quote="no number at this size: u_lin overtakes u_std from 9 to 80 reference queries (break-even "
            "per dataset; 38 on average, Table 5) and stays ahead in Figure 4's curves",
            paper_effect=None,
            metric=f"nAUC.AP.u_lin@{size}",
            reference=("nAUC.AP.u_std",),
            grid="paper002",
            method="bert",
            kinds=("in-domain",),
        )
        for size in (500, 100)
    ),
    *(
        claim(
            id=f"002-threshold-{rate}",
            paper=PAPER,
            text=f"threshold calibration: at a target abstention rate of {rate} %, u_lin's error on the "
            "achieved AP is below u_std's",
            source=f"{P002}, Table 3 (lower part, mAP)",
            quote=f"MAE between target and achieved mAP (%, StackOverflow, ember-v1, 1000 seeds): u_lin "
            f"{lin} against u_std {std}, {lin / std - 1:+.1%}; 'u_std having a MAE twice as high at 90 %' "
            "(§5.3)",
            paper_effect=round(lin / std - 1, 3),
            metric=f"threshold.AP_MAE.{rate}.u_lin",
            reference=(f"threshold.AP_MAE.{rate}.u_std",),
            scale="relative",
            expect="lower",
            grid="paper002",
            method="bert",
            kinds=("in-domain",),
        )
        for rate, lin, std in ((10, 1.22, 1.24), (50, 1.33, 1.52), (90, 1.51, 3.09))
    ),
    claim(
        id="002-reference-domain",
        paper=PAPER,
        text="u_lin fitted on another domain's reference set abstains worse than the reference-free u_std "
        "(nAUC of AP)",
        source=f"{P002}, Table 4 and §5.4",
        quote="nAUC-mAP averaged over the other test sets, per reference set (ember-v1): u_lin 27.8 % "
        "against u_std 30.4 % on average (−2.6 points; below u_std with 3 of the 6 reference sets: "
        "Alloprof, SciDocs, StackOverflow); 'the reference-based method underperforms reference-free "
        'baselines when fitted on the "wrong" reference set\'',
        paper_effect=-0.026,
        metric="nAUC.AP.u_lin",
        reference=("nAUC.AP.u_std",),
        expect="lower",
        grid="paper002",
        method="bert",
        kinds=("cross-reference",),
    ),
)
