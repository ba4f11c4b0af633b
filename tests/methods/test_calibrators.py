"""Post-hoc calibration maps: each recovers a known map, fits a hand-worked case, survives a JSON
round trip and refuses bad input with one clear error."""

import json

import numpy as np
import pytest
from scipy.special import expit

from rankuq.errors import RankuqError
from rankuq.methods.calibrators import IsotonicCalibrator, PlattScaler, TemperatureScaler


def drawn(slope: float, intercept: float, n: int = 20_000, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Logits z ~ N(0, 3²) and labels ~ Bernoulli(σ(slope·z + intercept))."""
    rng = np.random.default_rng(seed)
    z = 3 * rng.standard_normal(n)
    return z, (rng.random(n) < expit(slope * z + intercept)).astype(int)


def test_temperature_recovers_the_temperature_of_the_labels_and_is_stationary_there():
    z, y = drawn(1 / 2.5, 0.0)
    scaler = TemperatureScaler().fit(z, y)
    assert scaler.temperature == pytest.approx(2.5, rel=0.05)
    # the log-likelihood's derivative in 1/T vanishes at T*: Σ (y − σ(z/T))·z = 0
    assert np.mean((y - expit(z / scaler.temperature)) * z) == pytest.approx(0, abs=1e-6)
    np.testing.assert_allclose(scaler(np.array([0.0, 2.5])), [0.5, expit(2.5 / scaler.temperature)])


def test_platt_recovers_a_known_slope_and_intercept():
    z, y = drawn(2.0, -1.0)
    scaler = PlattScaler().fit(z, y)
    assert scaler.slope == pytest.approx(2.0, rel=0.05)
    assert scaler.intercept == pytest.approx(-1.0, abs=0.05)
    np.testing.assert_allclose(scaler(np.array([0.5])), expit(scaler.slope * 0.5 + scaler.intercept))


def test_platt_on_a_hand_worked_case():
    """Two logits, 0 and 1, relevant 1 of 4 and 3 of 4 times: the unpenalised maximum likelihood
    puts σ(b) = 1/4 and σ(a + b) = 3/4, so b = −log 3 and a = 2·log 3."""
    z = np.array([0.0] * 4 + [1.0] * 4)
    y = np.array([1, 0, 0, 0, 1, 1, 1, 0])
    scaler = PlattScaler().fit(z, y)
    assert scaler.intercept == pytest.approx(-np.log(3), abs=1e-4)
    assert scaler.slope == pytest.approx(2 * np.log(3), abs=1e-4)


def test_isotonic_fits_a_step_pools_violators_and_clips():
    step = IsotonicCalibrator().fit(np.array([-2.0, -1, 0, 1, 2, 3]), np.array([0, 0, 0, 1, 1, 1]))
    np.testing.assert_allclose(step(np.array([-10.0, -1, 0, 0.5, 1, 10])), [0, 0, 0, 0.5, 1, 1])
    # pool adjacent violators: (0, 1, 0, 1) at z = 1..4 → 0, ½, ½, 1
    pooled = IsotonicCalibrator().fit(np.array([1.0, 2, 3, 4]), np.array([0, 1, 0, 1]))
    np.testing.assert_allclose(pooled(np.array([1.0, 2, 3, 4])), [0, 0.5, 0.5, 1])


def test_isotonic_is_monotone_and_equals_scikit_learn():
    from sklearn.isotonic import IsotonicRegression

    z, y = drawn(1.0, 0.0, n=2000)
    calibrator = IsotonicCalibrator().fit(z, y)
    grid = np.linspace(-15, 15, 3001)
    p = calibrator(grid)
    assert (np.diff(p) >= 0).all() and p.min() >= 0 and p.max() <= 1
    reference = IsotonicRegression(y_min=0, y_max=1, out_of_bounds="clip").fit(z, y)
    np.testing.assert_allclose(p, reference.predict(grid), atol=1e-12)


@pytest.mark.parametrize("cls", [TemperatureScaler, PlattScaler, IsotonicCalibrator])
def test_a_state_survives_json_and_gives_the_same_probabilities(cls):
    z, y = drawn(0.7, 0.3, n=500)
    fitted = cls().fit(z, y)
    state = json.loads(json.dumps(fitted.state()))
    assert state["name"] == cls.name
    np.testing.assert_array_equal(cls.from_state(state)(z), fitted(z))
    with pytest.raises(RankuqError, match=rf"{cls.name}: a saved state needs exactly the keys"):
        cls.from_state({"name": cls.name})
    with pytest.raises(RankuqError, match=rf"{cls.name}: not fitted yet"):
        cls()(z)


@pytest.mark.parametrize(
    ("logits", "labels", "match"),
    [
        ([0.1, np.nan], [0, 1], r"one finite number per candidate, got shape \(2,\) with 1 non-finite"),
        ([[0.1, 0.2]], [0, 1], r"got shape \(1, 2\)"),
        ([0.1, 0.2], [0, 1, 1], r"labels have shape \(3,\), the logits \(2,\)"),
        ([0.1, 0.2], [0, 0], r"2 candidates holds 0 relevant ones"),
        ([0.1, 0.2], [2, 1], r"2 candidates holds 2 relevant ones"),
    ],
)
def test_bad_input_is_one_clear_error(logits, labels, match):
    for cls in (TemperatureScaler, PlattScaler, IsotonicCalibrator):
        with pytest.raises(RankuqError, match=match):
            cls().fit(np.array(logits), np.array(labels))
