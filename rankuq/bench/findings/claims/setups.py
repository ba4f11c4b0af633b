"""What each paper ran, declared once beside the grids that stand in for it: the papers' models (by
their size) and datasets, and the role this project's datasets play in their place (the grid files'
"Where this departs from the paper" comments, rankuq/bench/grids/NAME.yaml). The report sets each grid's own
model and tested tasks (read from its run) beside them; ``TASKS`` names the tasks as the report does."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Setup:
    """A paper's experiment as a grid stands in for it: ``papers`` (who), ``model`` (their ranker and
    its size), ``datasets`` (theirs), ``stand_in`` (how this grid's data takes their place)."""

    papers: str
    model: str
    datasets: str
    stand_in: str


_000 = Setup(
    "000 (Penha & Hauff 2021)",
    "BERT-base cross-encoder (12 layers, 768 hidden), 1 epoch",
    "MSDialog, MANtIS, UDC (DSTC8): dialogue response ranking, R_10 lists",
    "ClariQ, WikiQA, SemEval-2016 3A and TrecQA (clean) for the three dialogue corpora, R_10 lists cut "
    "from them; shifts between them for the paper's cross-domain pairs, other negative samplings of "
    "ClariQ for its cross-NS cells",
)
_001 = (
    "001 (Cohen et al. 2021)",
    "MS MARCO passages for training, TREC DL 2019 and Robust04 (graded, top 200 of a first stage) for "
    "testing",
    "SemEval-2016 3A (graded) and WikiQA in domain; WikiQA → SemEval (graded) as the out-of-distribution "
    "collection, graded as Robust04 is; native lists of 10 to 30 candidates, not 200",
)
_GP_DATA = "MSDialog, MANtIS, UDC: dialogue response ranking (R_10 lists), transfer between them"
_CLARIQ_NEGATIVES = (
    "trained on each request's top BM25 non-relevant candidate, where the papers drew training negatives "
    "at random"
)
SETUPS: dict[str, Setup] = {
    "paper000": _000,
    "paper001": Setup(_001[0], "BERT-L2: the first 2 layers of BERT-base", *_001[1:]),
    "paper001_l4": Setup(_001[0], "BERT-L4: the first 4 layers of BERT-base", *_001[1:]),
    "paper002": Setup(
        "002 (Gisserot-Boukhlef et al. 2024)",
        "22 off-the-shelf rerankers (bi- and cross-encoders, e.g. ember-v1), not fine-tuned",
        "StackOverflow, AskUbuntu, SciDocs, Alloprof, CMedQAv1, Mmarco (MTEB reranking)",
        "WikiQA, ClariQ, SemEval-2016 3A and TrecQA (clean), each with a ranker fine-tuned on it, "
        "for the six reranking datasets; the reference sets are their dev splits",
    ),
    "gp": Setup(
        "003 PG-DRR (Ye et al. 2023), 004 GPF-BERT (2023)",
        "BERT-base: bert-base-cased (003), 12 layers, 12 heads, 768 hidden (004), with a GP output layer",
        _GP_DATA,
        f"ClariQ for the dialogue corpora in domain (R_10 lists), {_CLARIQ_NEGATIVES}; SemEval-2016 3A → "
        "ClariQ for their transfer (forum threads, as MSDialog's), SemEval trained as the papers train, on "
        "random negatives, and tested on its BM25 lists (docs/reproducing.md)",
    ),
    "gp_fit": Setup(
        "003 PG-DRR (Ye et al. 2023), 004 GPF-BERT (2023)",
        "BERT-base: bert-base-cased (003), 12 layers, 12 heads, 768 hidden (004), with a GP output layer",
        _GP_DATA,
        f"ClariQ for the dialogue corpora in domain (R_10 lists), {_CLARIQ_NEGATIVES}; the GP heads trained "
        "to convergence",
    ),
}

# The tasks as the report names them.
TASKS: dict[str, str] = {
    "clariq": "ClariQ",
    "wikiqa": "WikiQA",
    "semeval": "SemEval-2016 3A",
    "semeval_graded": "SemEval-2016 3A (graded)",
    "trecqa": "TrecQA",
    "trecqa_clean": "TrecQA (clean)",
}
