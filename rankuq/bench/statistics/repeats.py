"""An exact test over timed repeats (``sign_flip``): the cost claims' effect, where the repeats of a
benchmark are not queries to resample. Each repeat r gives one paired value x_r (a method's time over
bert's minus another's in the same repeat, or one ratio against a floor); d is their mean, and every
p is the sign-flip permutation test's: under H0 (x − θ symmetric about 0) each of the 2ⁿ sign
patterns of x − θ is as likely, so p = the share of patterns whose mean is at least as extreme as the
observed one, exact for n ≤ ``EXACT_UP_TO`` (else 2¹⁶ patterns drawn with ``default_rng(0)``). The
smallest p it can give is 2 / 2ⁿ two-sided (0.0625 at 5 repeats, 0.002 at 10): few repeats cannot be
significant, whatever the timings, which is why a timing claim needs at least ``MIN_REPEATS``. The
95 % CI is the test inverted, the θ it does not reject at 5 % (unbounded where 2 / 2ⁿ ≥ 5 %)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

MIN_REPEATS = 10  # a timing claim rests on at least this many repeats: its smallest p is 2 / 2¹⁰ = 0.002
EXACT_UP_TO = 16  # 2¹⁶ sign patterns enumerated; more repeats: as many drawn


def _patterns(n: int) -> np.ndarray:
    """Sign patterns (patterns × n) of n values: all 2ⁿ up to ``EXACT_UP_TO``, else the identity and
    2¹⁶ − 1 drawn."""
    if n <= EXACT_UP_TO:
        bits = (np.arange(2**n)[:, None] >> np.arange(n)) & 1
        return np.asarray(1 - 2 * bits, dtype=float)
    drawn = np.random.default_rng(0).choice([-1.0, 1.0], size=(2**EXACT_UP_TO - 1, n))
    return np.vstack([np.ones((1, n)), drawn])


@dataclass(frozen=True, eq=False)
class RepeatTest:
    """The sign-flip test of ``values`` (one per timed repeat): d their mean, ``se`` their standard
    error, ``p`` the exact two-sided p of d = 0, ``p_floor`` the smallest p n repeats can give."""

    values: np.ndarray = field(repr=False)
    d: float
    se: float
    p: float
    p_floor: float
    patterns: np.ndarray = field(repr=False)

    @property
    def n(self) -> int:
        return int(self.values.size)

    def _null(self, threshold: float) -> tuple[np.ndarray, float, float]:
        """The pattern means of values − threshold, the observed one, and a tolerance for ties."""
        shifted = self.values - threshold
        means = self.patterns @ shifted / shifted.size
        scale = float(np.max(np.abs(shifted))) if shifted.size else 0.0
        return means, float(shifted.mean()), 1e-12 * max(scale, 1e-300)

    def one_sided_p(self, threshold: float, above: bool) -> float:
        """Exact p of "mean ≤ threshold" (``above``: the alternative is a mean above it) or of
        "mean ≥ threshold": the share of sign patterns at least as far that way as observed."""
        means, observed, tie = self._null(threshold)
        beyond = means >= observed - tie if above else means <= observed + tie
        return float(np.count_nonzero(beyond) / means.size)

    def two_sided_p(self, threshold: float = 0.0) -> float:
        means, observed, tie = self._null(threshold)
        return float(np.count_nonzero(np.abs(means) >= abs(observed) - tie) / means.size)

    def interval(self, level: float = 0.95) -> tuple[float, float]:
        """The θ whose two-sided test keeps p ≥ 1 − ``level``: the test inverted (bisection on each
        side of d); ±inf where even the farthest θ keeps it (too few repeats)."""
        alpha = 1 - level
        if self.n == 0 or not math.isfinite(self.d):
            return math.nan, math.nan
        spread = float(np.ptp(self.values)) or abs(self.d) or 1.0
        ends = []
        for far in (float(self.values.min()) - spread, float(self.values.max()) + spread):
            if self.two_sided_p(far) >= alpha:  # even beyond every value: not rejected
                ends.append(math.copysign(math.inf, far - self.d))
                continue
            kept, rejected = self.d, far
            for _ in range(60):
                middle = (kept + rejected) / 2
                if self.two_sided_p(middle) >= alpha:
                    kept = middle
                else:
                    rejected = middle
            ends.append(kept)
        return ends[0], ends[1]


def sign_flip(values: Sequence[float] | np.ndarray) -> RepeatTest:
    """The exact sign-flip test of the repeats' paired values (``RepeatTest``)."""
    x = np.asarray(values, dtype=float).ravel()
    if x.size == 0 or not np.all(np.isfinite(x)):
        raise ValueError("sign_flip needs finite values, at least one")
    x.setflags(write=False)
    patterns = _patterns(x.size)
    se = float(np.std(x, ddof=1) / math.sqrt(x.size)) if x.size > 1 else math.nan
    floor = 2 / 2**x.size if x.size <= EXACT_UP_TO else 1 / len(patterns)  # all patterns, or those drawn
    test = RepeatTest(x, float(x.mean()), se, math.nan, min(1.0, floor), patterns)
    p = 1.0 if test.d == 0 else test.two_sided_p(0.0)
    return RepeatTest(x, test.d, se, p, test.p_floor, patterns)
