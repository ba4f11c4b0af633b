"""Post-hoc calibration maps over one score per candidate, as `fit(scores, labels)` then `map(scores)`
(the shape of torch-uncertainty's scalers), with a JSON-able ``state`` so a grid caches the fit."""

from abc import ABC, abstractmethod
from typing import Any, Self

import numpy as np
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression


class Calibrator(ABC):
    @abstractmethod
    def fit(self, scores: np.ndarray, labels: np.ndarray) -> Self:
        """Fit on dev scores (a logit per candidate) and 0/1 labels."""

    @abstractmethod
    def __call__(self, scores: np.ndarray) -> np.ndarray:
        """Calibrated relevance probabilities."""

    @abstractmethod
    def state(self) -> dict[str, Any]:
        """The fitted map as JSON-able values."""

    @classmethod
    @abstractmethod
    def from_state(cls, state: dict[str, Any]) -> Self:
        """The map ``state`` describes."""


class PlattScaler(Calibrator):
    """P = σ(a·s + b), a and b by maximum likelihood (Platt 1999; unregularised logistic regression)."""

    def __init__(self, slope: float = 1.0, intercept: float = 0.0) -> None:
        self.slope, self.intercept = slope, intercept

    def fit(self, scores: np.ndarray, labels: np.ndarray) -> Self:
        model = LogisticRegression(C=np.inf).fit(np.asarray(scores, float)[:, None], np.asarray(labels))
        self.slope, self.intercept = float(model.coef_[0, 0]), float(model.intercept_[0])
        return self

    def __call__(self, scores: np.ndarray) -> np.ndarray:
        return 1 / (1 + np.exp(-(self.slope * np.asarray(scores, float) + self.intercept)))

    def state(self) -> dict[str, Any]:
        return {"slope": self.slope, "intercept": self.intercept}

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> Self:
        return cls(state["slope"], state["intercept"])


class IsotonicCalibrator(Calibrator):
    """A non-decreasing step function of the score (Zadrozny & Elkan 2002), clipped outside the dev range."""

    def __init__(self, thresholds: list[float] | None = None, values: list[float] | None = None) -> None:
        self.thresholds, self.values = thresholds or [], values or []

    def fit(self, scores: np.ndarray, labels: np.ndarray) -> Self:
        model = IsotonicRegression(out_of_bounds="clip", y_min=0.0, y_max=1.0)
        model.fit(np.asarray(scores, float), np.asarray(labels, float))
        self.thresholds, self.values = model.X_thresholds_.tolist(), model.y_thresholds_.tolist()
        return self

    def __call__(self, scores: np.ndarray) -> np.ndarray:
        return np.interp(np.asarray(scores, float), self.thresholds, self.values)  # clips at the ends

    def state(self) -> dict[str, Any]:
        return {"thresholds": self.thresholds, "values": self.values}

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> Self:
        return cls(state["thresholds"], state["values"])
