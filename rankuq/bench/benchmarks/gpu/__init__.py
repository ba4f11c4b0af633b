"""The GPU acceptance run (issue 30, docs/gpu.md): one command on one GPU that prints one JSON object.

    python -m rankuq.bench.benchmarks.gpu OUTDIR [--cpu] [--tiny]

(a) ``packing``: a small WikiQA grid through local Ray, one member alone and five packed at 0.2 GPU
each, trained in bf16 autocast; (b) ``scoring.throughput``: pairs/s of bert, MC dropout, the
ensemble, last-layer MC, SNGP, GPF and PG-DRR in bf16 and fp32 beside the papers' cost ratios;
(c) ``scoring.agreement``: one member's probabilities on the GPU against the CPU, and the same seed
trained twice; (d) the plan's H100-hours for grid (a) against its measured time. ``--cpu --tiny``
runs it all on the CPU with the tiny random BERT: the quick suite's check of the wiring.
"""
