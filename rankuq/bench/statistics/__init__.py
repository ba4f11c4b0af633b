"""rankuq's statistics, below the probes: the per-query parts the probes write, the paired t-tests and
corrections of the leaderboard, and one procedure for every claim of the findings: effects with a
paired two-level bootstrap, power, Benjamini–Hochberg, and the verdict taxonomy. docs/statistics.md
states the procedure.

A claim compares, in one condition, one or more *sides* (the method's metric and its reference).
Each side holds, per seed, one row of *parts* per query (``n_queries × k``); a side's metric on a set
of query rows is ``statistic(rows) -> float``. All sides of a comparison hold the same queries in the
same row order within a seed (paired). ``contrast(values) -> float`` maps the sides' values of one
seed to the effect d of that seed; the effect is the mean of d over the seeds.

- ``contrasts``: the contrasts that run vectorised over the replicates (``Contrast``; ``difference``,
  ``relative``, ``over_best``, ``value``); the statistics are the probes' (``parts``: ``SumStatistic``,
  ``BatchStatistic``, ``mean``, ``ratio_of_means``, re-exported here).
- ``parts``: each probe's per-query values (``QueryParts``) and the statistic that combines them.
- ``paired``: paired Student's t-tests (``paired_t``, ``paired_ttest``) and ``mean_std`` over seeds.
- ``corrections``: Benjamini–Hochberg and Holm over a family of p-values (the leaderboard's marks).
- ``bootstrap``: ``paired_bootstrap``: d, its 95 % and 90 % percentile intervals, standard error and
  p-value from a bootstrap over seeds, then queries (one query resample for every side: paired).
- ``power``: ``minimum_detectable_effect``, ``scale_for_power``: what the data can detect, and how
  much more data would detect the paper's effect.
- ``repeats``: ``sign_flip``: the exact sign-flip test over a benchmark's timed repeats (the cost
  claims), whose smallest p fits their number; ``MIN_REPEATS`` of them at least.
- ``judging``: ``benjamini_hochberg``: adjusted p-values over the registry; ``judge``, ``pooled``,
  ``overall``: the verdict of a condition and of a claim over its conditions.

This package's namespace is the procedure's public surface: ``statistics.judge``,
``statistics.Effect`` and the rest are importable from here.
"""

from rankuq.bench.statistics.bootstrap import Design, Effect, Estimate, Pool, paired_bootstrap
from rankuq.bench.statistics.contrasts import Contrast, difference, over_best, relative, value
from rankuq.bench.statistics.judging import (
    ALPHA,
    BOUNDS,
    DEFINITIONS,
    INCONCLUSIVE,
    MIXED,
    NOT_MEASURED,
    OPPOSITE,
    REFUTED,
    REPRODUCED,
    SMALLER,
    UNTESTABLE,
    Expect,
    Pooled,
    benjamini_hochberg,
    claim_p,
    directions,
    disagree_in_direction,
    judge,
    overall,
    point_of,
    pooled,
)
from rankuq.bench.statistics.parts import BatchStatistic, Statistic, SumStatistic, mean, ratio_of_means
from rankuq.bench.statistics.power import Scale, minimum_detectable_effect, scale_for_power
from rankuq.bench.statistics.repeats import MIN_REPEATS, RepeatTest, sign_flip

__all__ = [
    "ALPHA",
    "BOUNDS",
    "DEFINITIONS",
    "INCONCLUSIVE",
    "MIN_REPEATS",
    "MIXED",
    "NOT_MEASURED",
    "OPPOSITE",
    "REFUTED",
    "REPRODUCED",
    "SMALLER",
    "UNTESTABLE",
    "BatchStatistic",
    "Contrast",
    "Design",
    "Effect",
    "Estimate",
    "Expect",
    "Pool",
    "Pooled",
    "RepeatTest",
    "Scale",
    "Statistic",
    "SumStatistic",
    "benjamini_hochberg",
    "claim_p",
    "difference",
    "directions",
    "disagree_in_direction",
    "judge",
    "mean",
    "minimum_detectable_effect",
    "over_best",
    "overall",
    "paired_bootstrap",
    "point_of",
    "pooled",
    "ratio_of_means",
    "relative",
    "scale_for_power",
    "sign_flip",
    "value",
]
