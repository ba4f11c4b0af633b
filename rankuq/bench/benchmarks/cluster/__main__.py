"""``python -m rankuq.bench.benchmarks.cluster``: the benchmark's command; prints one JSON object."""

import argparse
import json
import os
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

from rankuq.bench.benchmarks import cluster
from rankuq.bench.benchmarks.cluster.measure import measure


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="cluster.py",  # as when it was one module: the same usage line
        description=cluster.__doc__,
        formatter_class=argparse.RawTextHelpFormatter,
    )
    parser.add_argument("--skip-scaling", action="store_true", help="leave out the timed scaling runs")
    parser.add_argument("--keep", action="store_true", help="keep the cluster's folder (logs, runs)")
    parser.add_argument(
        "--trainers",
        default="trial",
        help="comma-separated resources.trainer values to scale, trial first (trial,train adds Ray Train's)",
    )
    args = parser.parse_args()
    trainers = args.trainers.split(",")
    if trainers[0] != "trial" or not set(trainers) <= {"trial", "train"}:
        parser.error(f"--trainers {args.trainers}: give trial, or trial,train")
    from rankuq.tasks.base import data_root

    # A SIGTERM (a CI timeout, `kill`) unwinds like an exception: the cluster and the server are stopped.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    root = Path(tempfile.mkdtemp(prefix=f"rankuq-cluster-{os.getpid()}-", dir="/tmp"))
    start = time.perf_counter()
    try:
        result = measure(root, str(data_root()), scaling=not args.skip_scaling, trainers=trainers)
        result["seconds"] = round(time.perf_counter() - start, 1)
        print(json.dumps(result))
    finally:
        if args.keep:
            print(f"kept: {root}", file=sys.stderr)
        else:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
