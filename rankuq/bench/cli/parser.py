"""The ``rankuq`` argument parser."""

import argparse
from pathlib import Path

from rankuq.bench.cli.common import EVALUATE_PROBES, comma_names
from rankuq.bench.cli.compare import add_parser as add_compare
from rankuq.version import __version__

DESCRIPTION = (
    "The rankuq command: run a grid, list the registries, evaluate or compare black-box runs, report a grid."
)


def _seeds(text: str) -> list[int]:
    """``--seeds 0,1,2``: comma-separated integers."""
    try:
        return [int(name) for name in comma_names(text)]
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a comma-separated list of integers") from None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rankuq", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"rankuq {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    run = commands.add_parser("run", help="run a method × task × seed grid (default: the built-in grid)")
    run.add_argument("grid", nargs="?", type=Path, help="grid YAML file (default: built-in WikiQA grid)")
    run.add_argument("--run-dir", type=Path, help="where models, predictions, MLflow and the leaderboard go")
    run.add_argument("--data-dir", help="the shared data folder (default: $RANKUQ_DATA or ../shared/data)")
    run.add_argument("--address", help="Ray cluster address, e.g. 'auto' on a cluster head")
    run.add_argument("--tracking-uri", help="MLflow tracking URI (default: sqlite file in the run dir)")
    run.add_argument("--experiment", help="MLflow experiment (default: $MLFLOW_EXPERIMENT_NAME or rankuq)")
    run.add_argument(
        "--backbone",
        type=Path,
        help="checkpoint folder to fine-tune instead of the grid's model.backbone (e.g. a member of an "
        "earlier run, RUN_DIR/models/<key>)",
    )
    run.add_argument(
        "--plan",
        action="store_true",
        help="print what the grid would train, score and probe, and its cost; run nothing",
    )

    for registry in ("tasks", "methods", "probes", "metrics"):
        listing = commands.add_parser(registry, help=f"list the registered {registry}")
        listing.add_argument("--json", action="store_true", help=f"print the {registry} as JSON")

    evaluate = commands.add_parser(
        "evaluate",
        help="score a TREC run, a predictions Parquet file, or a cross-encoder checkpoint on a task "
        "(--model DIR --task NAME)",
    )
    evaluate.add_argument(
        "--run", dest="trec_run", type=Path, help="TREC run file (qid Q0 docno rank score tag)"
    )
    evaluate.add_argument("--qrels", type=Path, help="TREC qrels file (qid 0 docno relevance)")
    evaluate.add_argument("--predictions", type=Path, help="predictions Parquet file (contract 2)")
    evaluate.add_argument(
        "--model",
        type=Path,
        help="score this cross-encoder checkpoint folder as it is (no training) on --task: a one-task grid "
        "with train.epochs 0 through Ray, as `rankuq run` runs it; its leaderboard is printed",
    )
    evaluate.add_argument("--task", help="with --model: the task it is scored on, e.g. wikiqa")
    evaluate.add_argument(
        "--methods",
        type=comma_names,
        default=["bert"],
        help="with --model: the methods on it, e.g. bert,temperature,mc_dropout (default: bert)",
    )
    evaluate.add_argument(
        "--baseline",
        default="bm25",
        help="with --model: the method the others are tested against (marks † and ‡), added to "
        "--methods where missing; none for no test (default: bm25)",
    )
    evaluate.add_argument(
        "--run-dir",
        type=Path,
        help="with --model: the run's folder (default: runs/zero-shot-<folder>-<task>)",
    )
    evaluate.add_argument(
        "--max-length",
        type=int,
        help="with --model: cut inputs at this many tokens (default: the checkpoint's own maximum, as its "
        "folder records it; the length used is printed)",
    )
    evaluate.add_argument(
        "--protocol",
        choices=["rerank", "lists"],
        help="with --model: rerank = the top --n (100) of BM25 (or --ns) as retrieved, measured against "
        "the task's full qrels, as BEIR and MTEB report; lists = the papers' lists of --n (10) "
        "candidates with the relevant ones put in, measured on their labels (default: rerank for a "
        "beir/ task, lists otherwise)",
    )
    evaluate.add_argument(
        "--ns",
        help="with --model: the lists' negative sampling, or with --protocol rerank the retriever, e.g. "
        "bm25 (default: bm25 to rerank, else the task's own lists)",
    )
    evaluate.add_argument(
        "--n", type=int, help="with --model: candidates per list (default: 100 to rerank, else 10)"
    )
    evaluate.add_argument("--split", help="with --model: the split scored (default: test)")
    evaluate.add_argument(
        "--data-dir", help="with --model: the data folder (default: $RANKUQ_DATA or ../shared/data)"
    )
    evaluate.add_argument(
        "--seeds", type=_seeds, help="with --model: the probes' seeds, e.g. 0,1,2 (default: 0)"
    )
    evaluate.add_argument(
        "--plan",
        action="store_true",
        help="with --model: print what would be scored and its cost estimate; run nothing",
    )
    evaluate.add_argument("--json", action="store_true", help="print one JSON object")
    evaluate.add_argument(
        "--metrics",
        type=comma_names,
        help="comma-separated ir-measures names, e.g. AP,nDCG@10,P@5,R@100,RR,ECE "
        "(default: R@1,R@5,P@1,AP,RR,nDCG@10, and ECE,ECE.all for probabilities)",
    )
    evaluate.add_argument(
        "-q", "--by-query", action="store_true", help="each query's values too (ir-measures' iter_calc)"
    )
    evaluate.add_argument(
        "--write-run", dest="write_trec_run", type=Path, help="write the scored candidates as a TREC run file"
    )
    evaluate.add_argument(
        "--probabilities",
        action=argparse.BooleanOptionalAction,
        help="the scores are P(relevant) (ECE applies; checked to lie in [0, 1]); default: a TREC run's "
        "are not, a predictions file's as it records",
    )
    for probe in EVALUATE_PROBES:
        evaluate.add_argument(f"--{probe}", action="store_true", help=f"add the {probe} probe (bench.probes)")
    evaluate.add_argument(
        "--confidences",
        type=comma_names,
        help="the abstention probe's confidence functions, e.g. u_max,u_std,u_1-2 (reference-free ones "
        "alone are scored on the whole table; default: all that apply)",
    )
    evaluate.add_argument("--dev", type=Path, help="dev-split predictions Parquet: RA's b, abstention fits")
    evaluate.add_argument(
        "--dev-run",
        dest="dev_trec_run",
        type=Path,
        help="dev-split TREC run (with --dev-qrels), instead of --dev",
    )
    evaluate.add_argument("--dev-qrels", type=Path, help="dev-split TREC qrels (with --dev-run)")
    evaluate.add_argument("--seed", type=int, default=0, help="seed of the probes' splits and learners")
    evaluate.add_argument(
        "--strict",
        action="store_true",
        help="refuse a (qid, docno) listed twice instead of keeping its last line",
    )

    add_compare(commands)

    board = commands.add_parser(
        "leaderboard", help="print a grid's per-condition tables (--out: also leaderboard.md and report.html)"
    )
    board.add_argument("run_dir", nargs="?", type=Path, help="a run directory of `rankuq run`")
    board.add_argument("--tracking-uri", help="read the grid from this MLflow store instead")
    board.add_argument("--grid", help="with --tracking-uri: the grid's name (default: the newest grid)")
    board.add_argument("--experiment", help="with --tracking-uri: the MLflow experiment (default: rankuq)")
    board.add_argument(
        "--out", type=Path, help="write leaderboard.md and report.html into this folder (none without it)"
    )
    board.add_argument(
        "--columns",
        type=comma_names,
        help="the metrics shown, e.g. R@1,AP,ECE (default: those that fit the terminal's width, or COLUMNS)",
    )
    board.add_argument("--latex", type=Path, help="also write the tables as LaTeX (booktabs) to this file")

    found = commands.add_parser(
        "findings", help="measure the papers' claims in finished paper-grid runs; write docs/findings.md"
    )
    found.add_argument("run_dirs", nargs="+", type=Path, help="run directories of the paper grids")
    found.add_argument("--out", type=Path, default=Path("docs/findings.md"), help="default: docs/findings.md")
    found.add_argument(
        "--cost",
        type=Path,
        action="append",
        help="method_cost's CSV of timed repeats (its --out, or the GPU benchmark's): the inference-cost "
        "claims; once per file (a GPU's timings are judged, a CPU's shown as forward-pass counts)",
    )
    found.add_argument(
        "--allow-stale",
        action="store_true",
        help="write the findings even where a run's cells are not what this checkout makes (marked stale)",
    )
    found.add_argument(
        "--readme",
        type=Path,
        help="also rewrite this file's summary between <!-- findings:start --> and <!-- findings:end -->",
    )
    return parser
