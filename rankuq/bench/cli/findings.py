"""``rankuq findings``: the papers' claims measured in finished runs, written to docs/findings.md."""

import argparse


def findings_command(args: argparse.Namespace) -> None:
    from rankuq.bench.preflight.paths import check_output_file

    check_output_file(args.out, "--out", "findings.md")  # before the claims are measured
    from rankuq.bench.findings.findings import findings

    out = findings(
        args.run_dirs, args.out, cost=args.cost or (), allow_stale=args.allow_stale, readme=args.readme
    )
    print(f"written: {out}" + (f" and the summary in {args.readme}" if args.readme else ""))
