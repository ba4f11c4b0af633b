"""``rankuq run``: the command's adapter of ``bench.run.grid_run`` (plan, or run the grid and show it)."""

import argparse
import logging

from rankuq.bench.cli.boards import show_board


def run_command(args: argparse.Namespace) -> None:
    from rankuq.bench.run.grid_run import GridRequest, grid_run, plan_grid

    request = GridRequest(
        grid=args.grid,
        run_dir=args.run_dir,
        data_dir=args.data_dir,
        backbone=args.backbone,
        tracking_uri=args.tracking_uri,
        address=args.address,
        experiment=args.experiment,
        holder=args.command_line,
    )
    if args.plan:  # before the engine's imports (Ray Train, Tune, Data; MLflow): seconds saved
        planned = plan_grid(request)  # its inputs checked first: then the imports
        from rankuq.bench.planning.summary import describe

        print(describe(planned))
        return
    for noisy in ("ray", "ray.data", "ray.tune", "ray.train", "mlflow", "alembic"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    layout = grid_run(request).layout
    from rankuq.bench.results.boards import read_run_dir
    from rankuq.bench.results.tracking import experiment_page

    show_board(read_run_dir(layout.root))
    print(f"written: leaderboard.md, .csv and report.html in {layout.root}, beside the MLflow store")
    page = experiment_page(args.tracking_uri or layout.default_tracking_uri, args.experiment)
    if page:
        print(f"MLflow: {page}")
