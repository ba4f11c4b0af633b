"""Post-hoc calibration maps: fitted on a dev split's relevance logits and labels, then applied to
any logits, after torch-uncertainty's ``scaler.py``. Each keeps the ranking (the maps are
monotone) and changes only the probabilities.

``fit(logits, labels) -> self``, ``__call__(logits) -> probabilities``, ``state() -> dict`` (JSON)
and ``from_state(dict)``. Logits z are one relevance logit per candidate (for a 2-way head, z₁ − z₀,
so σ(z) = softmax(z)[relevant]); labels count as relevant above 0.

- ``TemperatureScaler``: p = σ(z / T), T minimising the dev cross-entropy (Guo et al. 2017).
- ``PlattScaler``: p = σ(a·z + b), a and b by unpenalised logistic regression on z (Platt 1999).
- ``IsotonicCalibrator``: p = the isotonic (non-decreasing) regression of the labels on z,
  interpolated linearly between the fitted points and clipped beyond them (Zadrozny & Elkan 2002).
"""

from abc import ABC, abstractmethod
from typing import Any, ClassVar, Self, overload

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.special import expit

from rankuq.errors import RankuqError

LOG_T_BOUNDS = (-7.0, 7.0)  # T in [e⁻⁷, e⁷]: beyond, the scores are saturated or flat anyway


@overload
def checked(logits: np.ndarray) -> tuple[np.ndarray, None]: ...
@overload
def checked(logits: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...
def checked(logits: np.ndarray, labels: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """Logits as a 1-D float64 array of finite numbers, labels as 0/1 of the same length with both
    classes present (a map fitted on one class is degenerate)."""
    z = np.asarray(logits, dtype=np.float64)
    if z.ndim != 1 or not np.isfinite(z).all():
        raise RankuqError(
            f"calibration logits must be one finite number per candidate, got shape {z.shape} with "
            f"{int((~np.isfinite(z)).sum())} non-finite values; pass the relevance logit z₁ − z₀"
        )
    if labels is None:
        return z, None
    y = (np.asarray(labels) > 0).astype(np.float64)
    if y.shape != z.shape:
        raise RankuqError(
            f"calibration labels have shape {y.shape}, the logits {z.shape}; pass one per candidate"
        )
    relevant = int(y.sum())
    if relevant in (0, y.size):
        raise RankuqError(
            f"calibration data of {y.size} candidates holds {relevant} relevant ones; fit the map on a "
            "dev split with both relevant and non-relevant candidates"
        )
    return z, y


class Calibrator(ABC):
    """A fitted monotone map from relevance logits to probabilities."""

    name: ClassVar[str]
    fields: ClassVar[tuple[str, ...]]  # the keys of ``state()`` besides "name"

    @abstractmethod
    def fit(self, logits: np.ndarray, labels: np.ndarray) -> Self:
        """Fit the map on dev logits [n] and labels [n]; returns the calibrator."""

    @abstractmethod
    def __call__(self, logits: np.ndarray) -> np.ndarray:
        """P(relevant) [n] of logits [n]."""

    def state(self) -> dict[str, Any]:
        """The fitted map as JSON-able values (``from_state`` rebuilds it)."""
        values = {field: getattr(self, field) for field in self.fields}
        if any(value is None for value in values.values()):
            raise RankuqError(f"{self.name}: not fitted yet; call fit(logits, labels) first")
        return {"name": self.name, **values}

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> Self:
        """The calibrator ``state()`` described."""
        wanted = {"name", *cls.fields}
        if not isinstance(state, dict) or set(state) != wanted or state["name"] != cls.name:
            raise RankuqError(
                f"{cls.name}: a saved state needs exactly the keys {sorted(wanted)} with name "
                f"{cls.name!r}, got {state!r}; refit the calibrator"
            )
        calibrator = cls()
        for field in cls.fields:
            setattr(calibrator, field, state[field])
        return calibrator

    def _fitted(self) -> None:
        self.state()  # refuses an unfitted map


class TemperatureScaler(Calibrator):
    """p = σ(z / T), T* = argmin_T −Σ [y log σ(z/T) + (1 − y) log σ(−z/T)] over log T (bounded
    scalar search). On a 2-way head this is softmax(logits / T)[relevant]: T rescales the logits
    only."""

    name = "temperature"
    fields = ("temperature",)

    def __init__(self) -> None:
        self.temperature: float | None = None

    def fit(self, logits: np.ndarray, labels: np.ndarray) -> Self:
        z, y = checked(logits, labels)

        def loss(log_t: float) -> float:
            scaled = z / np.exp(log_t)
            return float(np.mean(np.logaddexp(0, scaled) - y * scaled))  # −log-likelihood, stable

        found = minimize_scalar(loss, bounds=LOG_T_BOUNDS, method="bounded", options={"xatol": 1e-8})
        self.temperature = float(np.exp(found.x))
        return self

    def __call__(self, logits: np.ndarray) -> np.ndarray:
        self._fitted()
        return expit(checked(logits)[0] / self.temperature)


class PlattScaler(Calibrator):
    """p = σ(a·z + b), slope a and intercept b by scikit-learn's ``LogisticRegression`` on the one
    feature z, unpenalised (C = ∞: the dev data alone set them), solved to a tight tolerance."""

    name = "platt"
    fields = ("slope", "intercept")

    def __init__(self) -> None:
        self.slope: float | None = None
        self.intercept: float | None = None

    def fit(self, logits: np.ndarray, labels: np.ndarray) -> Self:
        from sklearn.linear_model import LogisticRegression

        z, y = checked(logits, labels)
        model = LogisticRegression(C=np.inf, tol=1e-10, max_iter=10_000).fit(z[:, None], y.astype(int))
        self.slope, self.intercept = float(model.coef_[0, 0]), float(model.intercept_[0])
        return self

    def __call__(self, logits: np.ndarray) -> np.ndarray:
        self._fitted()
        assert self.slope is not None and self.intercept is not None  # _fitted refused None
        return expit(self.slope * checked(logits)[0] + self.intercept)


class IsotonicCalibrator(Calibrator):
    """p = scikit-learn's ``IsotonicRegression`` (non-decreasing in z, within [0, 1],
    ``out_of_bounds="clip"``) of the labels on z. Its fitted points are the state; applying it is
    their linear interpolation clipped at both ends, which is what the fitted regression predicts."""

    name = "isotonic"
    fields = ("x", "y")

    def __init__(self) -> None:
        self.x: list[float] | None = None
        self.y: list[float] | None = None

    def fit(self, logits: np.ndarray, labels: np.ndarray) -> Self:
        from sklearn.isotonic import IsotonicRegression

        z, y = checked(logits, labels)
        model = IsotonicRegression(y_min=0.0, y_max=1.0, increasing=True, out_of_bounds="clip").fit(z, y)
        self.x, self.y = model.X_thresholds_.tolist(), model.y_thresholds_.tolist()
        return self

    def __call__(self, logits: np.ndarray) -> np.ndarray:
        self._fitted()
        assert self.x is not None and self.y is not None  # _fitted refused None
        return np.asarray(np.interp(checked(logits)[0], self.x, self.y))
