"""``rankuq compare``: runs against a baseline run, with paired tests and corrected p-values."""

import argparse
from pathlib import Path

from rankuq.bench.cli.common import _names, _print_table


def _compare(args: argparse.Namespace) -> None:
    from rankuq.bench.results.comparison import compare, footnote

    comparison = compare(
        args.runs, args.qrels, args.baseline, args.metrics, args.correction, args.test, args.strict
    )
    table = comparison.table
    rows = []
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
    _print_table("comparison", ["run", *comparison.metrics], rows)
    print(footnote(comparison))


def add_parser(commands: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """The ``compare`` verb's options."""
    compare = commands.add_parser(
        "compare", help="compare TREC runs against a baseline run: paired tests, corrected p-values"
    )
    compare.add_argument("runs", nargs="+", type=Path, help="TREC run files (qid Q0 docno rank score tag)")
    compare.add_argument("--qrels", type=Path, required=True, help="TREC qrels file (qid 0 docno relevance)")
    compare.add_argument(
        "--baseline", type=Path, help="the run the others are tested against (default: the first)"
    )
    compare.add_argument(
        "--metrics",
        type=_names,
        help="comma-separated ir-measures names, e.g. AP,nDCG@10,RR@10 (default: R@1,R@5,P@1,AP,RR,nDCG@10)",
    )
    compare.add_argument(
        "--correction", choices=("bh", "holm"), default="bh", help="Benjamini–Hochberg (default) or Holm"
    )
    compare.add_argument(
        "--test",
        choices=("t", "randomisation"),
        default="t",
        help="the test whose corrected p-values mark a run: the paired t-test (default) or Fisher's "
        "randomisation test",
    )
    compare.add_argument(
        "--strict",
        action="store_true",
        help="refuse a (qid, docno) listed twice instead of keeping its last line",
    )
