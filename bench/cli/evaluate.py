"""``rankuq evaluate``: black-box evaluation of a run file or predictions table."""

import argparse
import json

from rankuq.bench.cli.common import EVALUATE_PROBES, _print_table


def _evaluate(args: argparse.Namespace) -> None:
    from rankuq.bench.evaluation.blackbox import evaluate_inputs, per_query_values, read_dev, read_inputs
    from rankuq.bench.evaluation.trec import write_trec_run

    probes = [probe for probe in EVALUATE_PROBES if getattr(args, probe)]
    evaluated = read_inputs(
        run=args.run,
        qrels=args.qrels,
        predictions=args.predictions,
        strict=args.strict,
        probabilities=args.probabilities,
    )
    dev = read_dev(args.dev, args.dev_run, args.dev_qrels, args.strict, args.probabilities, probes)
    values = evaluate_inputs(evaluated, args.metrics, probes, dev, args.seed, args.confidences)
    queries = per_query_values(evaluated, args.metrics) if args.by_query else None
    if args.write_run:
        write_trec_run(evaluated.table, args.write_run)
    if args.json:
        print(json.dumps(values if queries is None else {"per_query": queries, "all": values}))
        return
    if queries is not None:  # ir-measures' and trec_eval's -q lines: qid, measure, value
        for qid, row in queries.items():
            print("\n".join(f"{qid}\t{name}\t{value:.4f}" for name, value in row.items()))
    _print_table("evaluation", ["metric", "value"], [[k, f"{v:.4f}"] for k, v in values.items()])
