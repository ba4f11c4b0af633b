"""``rankuq leaderboard``: a grid's tables, leaderboard.md and report.html."""

import argparse
import os
import tempfile
from pathlib import Path

from rankuq.bench.cli.boards import show_board
from rankuq.errors import RankuqError


def leaderboard_command(args: argparse.Namespace) -> None:
    from rankuq.bench.results.boards import read_run_dir, read_tracking
    from rankuq.bench.results.leaderboard import metrics_of
    from rankuq.bench.results.report import write_report

    if (args.run_dir is None) == (args.tracking_uri is None) or (args.grid and args.run_dir):
        raise RankuqError("rankuq leaderboard: give either RUN_DIR or --tracking-uri URI [--grid NAME]")
    from rankuq.bench.preflight.paths import check_output_file, check_output_folder
    from rankuq.bench.preflight.tracking_inputs import check_experiment, check_tracking_uri, experiment_option
    from rankuq.bench.results.mlflow_names import experiment_name

    if args.tracking_uri:
        check_tracking_uri(args.tracking_uri)
        check_experiment(experiment_name(args.experiment), experiment_option(args.experiment))
        from rankuq.bench.results.mlflow_store import check_store

        check_store(args.tracking_uri)  # its schema: MLflow would try to make the tables anew
    if args.out:
        check_output_folder(args.out, "--out")
    if args.latex:
        check_output_file(args.latex, "--latex", "tables.tex")
    os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")  # plot downloads: no bars
    with tempfile.TemporaryDirectory() as downloads:  # the report embeds the plots: no need to keep them
        board = (
            read_run_dir(args.run_dir)
            if args.run_dir
            else read_tracking(args.tracking_uri, args.grid, Path(downloads), args.experiment)
        )
        known = metrics_of(board.table)
        if args.columns == []:  # '' or ',,,': no name at all would show a board of no metric
            raise RankuqError(
                f"--columns: no metric named; give some of the board's columns: {', '.join(known)}"
            )
        unknown = [name for name in args.columns or () if name not in known]
        if unknown:
            raise RankuqError(
                f"--columns {', '.join(unknown)}: not on this board; its columns: {', '.join(known)}"
            )
        show_board(board, args.columns)
        if args.out is None and args.latex is None:  # reading a board writes nothing unless asked
            return
        paths = write_report(board, args.out, args.latex)
    print(f"written: {', '.join(map(str, paths))}")
