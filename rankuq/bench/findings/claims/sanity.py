"""This project's sanity checks of the model fit: floors a working setup must reach before a ranker's
uncertainty is read (a fine-tuned cross-encoder above BM25, WikiQA AP of at least 0.70). No paper's
claims (``paper`` None), judged as the claims are and reported apart; no preconditions."""

from rankuq.bench.findings.claims.schema import Claim

FIT_TASKS = ("wikiqa", "clariq", "semeval", "trecqa_clean")
SANITY = "rankuq sanity check (the model fit), not a paper's claim"
LONGER = "bert, up to {} epochs with early stopping on dev,"


def _beats_bm25(grid: str, task: str, id: str, who: str) -> tuple[Claim, ...]:
    """``who`` beats BM25 on ``task``'s condition of ``grid``, in AP and in R@1: two checks."""
    return tuple(
        Claim(
            id=f"{id}-{metric}",
            paper=None,
            grid=grid,
            text=f"{who} beats BM25 on {task} ({metric})",
            source=SANITY,
            quote=f"rule: bert's {metric} above BM25's on the same test queries, d = bert − bm25 with its "
            "95 % CI above 0 (every paper's premise: a fine-tuned cross-encoder above BM25)",
            paper_effect=None,
            method="bert",
            metric=metric,
            against="bm25",
            kinds=("in-domain",),
            condition=task,
        )
        for metric in ("AP", "R@1")
    )


def _wikiqa_floor(grid: str, id: str, who: str) -> Claim:
    """``who`` reaches the model-fit floor, AP 0.70 on WikiQA test, in ``grid``."""
    return Claim(
        id=id,
        paper=None,
        grid=grid,
        text=f"{who} reaches AP 0.70 on WikiQA test",
        source=SANITY,
        quote="rule: d = AP − 0.70 with its 95 % CI above 0 (the floor: Yang et al. 2015's CNN-Cnt, the "
        "dataset's paper, reaches 0.652; BERT-base about 0.81)",
        paper_effect=None,
        method="bert",
        metric="AP",
        floor=0.70,
        expect="at least",
        kinds=("in-domain",),
        condition="wikiqa",
    )


# paper002 trains one epoch per task; fit_wikiqa/fit_trecqa train the same conditions to convergence.
CLAIMS: tuple[Claim, ...] = (
    _wikiqa_floor("paper002", "fit-wikiqa-ap-floor", "bert"),
    *(check for task in FIT_TASKS for check in _beats_bm25("paper002", task, f"fit-{task}", "bert")),
    _wikiqa_floor("fit_wikiqa", "fit-wikiqa-longer-ap-floor", LONGER.format(3)),
    *_beats_bm25("fit_wikiqa", "wikiqa", "fit-wikiqa-longer", LONGER.format(3)),
    *_beats_bm25("fit_trecqa", "trecqa_clean", "fit-trecqa_clean-longer", LONGER.format(6)),
)
