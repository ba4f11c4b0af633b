"""``rankuq compare``: TREC runs against a baseline TREC run, with paired tests and corrected p-values."""

import argparse
import json
import math
from pathlib import Path
from typing import TYPE_CHECKING

from rankuq.bench.cli.common import comma_names, print_note, print_table

if TYPE_CHECKING:
    from rankuq.bench.results.comparison import Comparison


def compare_command(args: argparse.Namespace) -> None:
    from rankuq.bench.preflight.paths import check_input_file
    from rankuq.bench.results.comparison import CORRECTION_NAMES, TESTS, compare, footnote

    for option, paths in (
        ("run", args.trec_runs),
        ("--qrels", [args.qrels]),
        ("--baseline", [args.baseline]),
    ):
        for path in filter(None, paths):  # before any is opened, as evaluate's: a named pipe blocks
            check_input_file(path, option)
    comparison = compare(
        args.trec_runs, args.qrels, args.baseline, args.metrics, args.correction, args.test, args.strict
    )
    table = comparison.table
    label, correction = TESTS[comparison.test], comparison.correction
    if args.json:
        print(json.dumps(_records(comparison)))
        return
    rows, p_rows = [], []
    for _, row in table.iterrows():
        cells = [f"{row.run} (baseline)" if row.baseline else str(row.run)]
        for name in comparison.metrics:  # as the leaderboard's cells: "0.164 (-17.72% ‡)"
            reference = float(table.loc[table.baseline, name].iloc[0])
            if row.baseline or reference == 0:
                cells.append(f"{row[name]:.4f}")
                continue
            note = " ".join(
                filter(None, (f"{(row[name] - reference) / abs(reference):+.2%}", row[f"{name} mark"]))
            )
            cells.append(f"{row[name]:.4f} ({note})")
        rows.append(cells)
        if not row.baseline:
            p_rows.append(
                [str(row.run)]
                + [
                    f"{row[f'{n} {label} p {correction}']:.4g} ({row[f'{n} {label} p']:.4g})"
                    for n in comparison.metrics
                ]
            )
    print_table("comparison", ["run", *comparison.metrics], rows)
    print_table("p-values", ["run", *comparison.metrics], p_rows)
    print(f"p-values: paired {label}, {CORRECTION_NAMES[correction]}-corrected (raw in brackets)")
    print_note(footnote(comparison))


def _records(comparison: "Comparison") -> dict[str, object]:
    """The comparison as JSON: the settings, then per TREC run and metric its mean, the raw and corrected
    p-value (null for the baseline) and the mark."""
    from rankuq.bench.results.comparison import TESTS

    label, correction = TESTS[comparison.test], comparison.correction
    trec_runs = []
    for _, row in comparison.table.iterrows():
        values = {
            name: {
                "mean": float(row[name]),
                "p": _number(row[f"{name} {label} p"]),
                "p_corrected": _number(row[f"{name} {label} p {correction}"]),
                "mark": row[f"{name} mark"],
            }
            for name in comparison.metrics
        }
        trec_runs.append({"run": row.run, "baseline": bool(row.baseline), "metrics": values})
    return {
        "baseline": comparison.baseline,
        "queries": comparison.queries,
        "test": comparison.test,
        "correction": correction,
        "runs": trec_runs,
    }


def _number(value: float) -> float | None:
    return None if math.isnan(value) else float(value)


def add_parser(commands: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """The ``compare`` verb's options."""
    compare = commands.add_parser(
        "compare", help="compare TREC runs against a baseline run: paired tests, corrected p-values"
    )
    compare.add_argument(
        "trec_runs", metavar="runs", nargs="+", type=Path, help="TREC run files (qid Q0 docno rank score tag)"
    )
    compare.add_argument("--qrels", type=Path, required=True, help="TREC qrels file (qid 0 docno relevance)")
    compare.add_argument(
        "--baseline", type=Path, help="the run the others are tested against (default: the first)"
    )
    compare.add_argument(
        "--metrics",
        type=comma_names,
        help="comma-separated ir-measures names, e.g. AP,nDCG@10,RR@10 (default: R@1,R@5,P@1,AP,RR,nDCG@10)",
    )
    compare.add_argument(
        "--correction", choices=("bh", "holm"), default="bh", help="Benjamini–Hochberg (default) or Holm"
    )
    compare.add_argument(
        "--test",
        choices=("t", "randomisation"),
        default="t",
        help="the test run on each metric, whose corrected p-values mark a run: the paired t-test "
        "(default) or Fisher's randomisation test (10,000 assignments, seed 0)",
    )
    compare.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object: per run and metric the mean, the raw and corrected p-value, the mark",
    )
    compare.add_argument(
        "--strict",
        action="store_true",
        help="refuse a (qid, docno) listed twice instead of keeping its last line",
    )
