"""``rankuq findings``: the papers' claims measured in finished runs, written to docs/findings.md."""

import argparse


def _findings(args: argparse.Namespace) -> None:
    from rankuq.bench.findings.render import findings

    print(f"written: {findings(args.run_dirs, args.out, cost=args.cost, allow_stale=args.allow_stale)}")
