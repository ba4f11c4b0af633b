"""The cost claims: a method's inference time over another's, per timed repeat of method_cost's
CSVs (``bench.benchmarks.method_cost``, or the GPU benchmark's), one condition per device and setting
(MiniLM depth, pairs, threads, precision) of each file. The repeats are not queries to resample: each
gives one paired value (the method's time over bert's minus the other's, in the same repeat; or one
ratio against a floor), and the effect is their mean with the exact sign-flip test over them
(``statistics.sign_flip``), whose smallest p is 2 / 2ⁿ. A condition of fewer than ``MIN_REPEATS``
repeats (2 / 2¹⁰ = 0.002) is untestable for that reason ("repeats"), not judged on a p that could
never be significant; every condition names its n.

A GPU's timings in fp32 are judged. A CPU's are shown but not judged (``Measured.descriptive``): on
one CPU thread a method's time is its forward passes times bert's, so the ratio restates T and M, and
such a condition enters neither Benjamini–Hochberg nor the claim's estimate. A GPU's bf16 timings are
shown the same way: the papers timed their models in fp32 (PyTorch's default; neither names another),
and two precisions of one card are two settings, not two samples of one effect."""

import numpy as np
import pandas as pd

from rankuq.bench import statistics
from rankuq.bench.findings.claims import CPU, Check, Claim
from rankuq.bench.findings.rows import Measured, Row

# What the "cpu" column holds for a CPU: method_cost's cpu_flags (a list of these flags, "flags
# unknown" or "no AVX2") or the GPU benchmark run with --cpu ("cpu"). On a GPU it holds torch's name
# of the GPU. A file without the column predates it and was timed on a CPU.
CPU_WORDS = frozenset({"cpu", "flags unknown", "no AVX2", "avx2", "avx512f", "avx512_bf16", "amx_bf16"})
DESCRIPTIVE = "descriptive"  # a CPU's or a GPU's bf16 condition's verdict: shown, not judged
JUDGED_PRECISION = "fp32"  # the papers' timings (module docstring)
GPU_BF16 = "bf16 on the GPU: shown; the papers timed fp32"
# One condition: a file's timings on one device in one setting.
SETTING = ["file", "cpu", "layers", "pairs", "threads", "precision"]


def on_gpu(device: str) -> bool:
    """Whether the "cpu" column's ``device`` names a GPU (``CPU_WORDS``)."""
    return bool(device) and not set(device.split(", ")) <= CPU_WORDS


def assess_cost(claim: Claim, cost: pd.DataFrame | None) -> Row:
    """A cost claim measured in method_cost's table ``cost`` (``runs.read_costs``: one or more files;
    verdicts come in ``judge_all``)."""
    if cost is None:
        note = "no cost file given: `rankuq findings RUN_DIR… --cost FILE`, FILE from method_cost --out"
        return Row(claim, None, (), statistics.NOT_MEASURED, note)
    table = cost.assign(**{c: cost.get(c, "") for c in ("file", "cpu")}).fillna({"cpu": ""})
    groups = table.groupby(SETTING, sort=False)
    measured = tuple(m for _, rows in groups if (m := _measure_cost(claim, rows)) is not None)
    note = "" if measured else f"the cost file has no timings of {claim.method} and {claim.compared()}"
    if measured and all(m.descriptive for m in measured):
        note = f"{CPU} only: not judged; give the GPU's method_cost.csv with --cost"
    commands = dict.fromkeys(str(c) for c in table.command)  # each file's, in the order given
    return Row(claim, None, measured, statistics.NOT_MEASURED, note, command="; ".join(commands))


def _measure_cost(claim: Claim, rows: pd.DataFrame) -> Measured | None:
    """The claim in one setting. Its metric "time (× X)" is, per timed repeat, a method's time over
    X's in the same repeat (the methods take turns within a repeat); d is the mean over the repeats of
    that ratio minus the other method's (or the ratio itself, against a floor), tested exactly over the
    repeats (``statistics.sign_flip``)."""
    denominator = claim.metric.removeprefix("time (× ").removesuffix(")")

    def times(method: str) -> np.ndarray | None:
        timed = rows[rows.method == method]
        if timed.label.nunique() != 1:  # absent, or several settings of it (last_layer_mc's T)
            return None
        return timed.sort_values("repeat").seconds.to_numpy(dtype=float)

    methods = [claim.method] if claim.floor is not None else [claim.method, str(claim.against)]
    base, timed = times(denominator), [times(m) for m in methods]
    if base is None or any(t is None or len(t) != len(base) for t in timed):
        return None
    ratios = [t / base for t in timed if t is not None]  # each repeat's time over the denominator's
    paired = ratios[0] if claim.floor is not None else ratios[0] - ratios[1]
    n = len(base)
    effect = statistics.sign_flip(paired)
    checks: tuple[Check, ...] = ()
    if n < statistics.MIN_REPEATS:
        checks = (
            Check(
                "repeats",
                False,
                f"n = {n} < {statistics.MIN_REPEATS} timed repeats: the exact test over {n} repeats cannot "
                f"give p below {effect.p_floor:.2g}; rerun the benchmark with at least "
                f"{statistics.MIN_REPEATS} repeats",
            ),
        )
    gpu = on_gpu(str(rows.cpu.iloc[0]))
    judged = gpu and str(rows.precision.iloc[0]) == JUDGED_PRECISION
    return Measured(
        _condition(claim, rows, gpu, n),
        effect,
        float(ratios[0].mean()),
        claim.floor if claim.floor is not None else float(ratios[1].mean()),
        checks,
        verdict=statistics.NOT_MEASURED if judged else DESCRIPTIVE,
        note="" if judged else GPU_BF16 if gpu else CPU,
        unit="timed repeats",
        descriptive=not judged,
    )


def _condition(claim: Claim, rows: pd.DataFrame, gpu: bool, n: int) -> str:
    """The device, setting and repeats, e.g. "NVIDIA H100 80GB HBM3, MiniLM-L6, 2,048 WikiQA test
    pairs, bf16, n = 3 repeats"."""
    first = rows.iloc[0]
    device = first.cpu if gpu else f"a CPU, {first.threads} thread{'s' if first.threads != 1 else ''}"
    versus = f"; vs {rows[rows.method == claim.against].label.iloc[0]}" if claim.floor is None else ""
    setting = f"MiniLM-L{first.layers}, {first.pairs:,} WikiQA test pairs, {first.precision}"
    return f"{device}, {setting}, n = {n} repeats{versus}"
