"""The grid's ``search:`` section: Ray Tune search spaces over training settings, method parameters and
RA's risk aversion b, each key and domain checked against the field it sets."""

import math
from collections.abc import Mapping
from types import UnionType
from typing import TYPE_CHECKING, Annotated, Literal, TypeVar, Union, cast, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError, field_validator

from rankuq import methods
from rankuq.backbone import ModelConfig
from rankuq.bench import metrics
from rankuq.bench.config.training import TrainConfig
from rankuq.errors import RankuqError
from rankuq.methods.base import MethodParams, NeuralMethod

if TYPE_CHECKING:  # Ray Tune takes a second to import: only searches need it
    from ray.tune.search.sample import Domain

# name → (its arguments, what it draws: float, int, or the categories themselves)
DOMAINS: dict[str, tuple[tuple[str, ...], type | None]] = {
    "uniform": (("lower", "upper"), float),
    "quniform": (("lower", "upper", "q"), float),
    "loguniform": (("lower", "upper"), float),
    "qloguniform": (("lower", "upper", "q"), float),
    "randint": (("lower", "upper"), int),  # upper excluded, as in Tune
    "qrandint": (("lower", "upper", "q"), int),
    "lograndint": (("lower", "upper"), int),  # upper excluded
    "choice": (("categories",), None),
}
_UPPER_EXCLUDED = {"randint", "lograndint"}
# Searching the number of epochs would move the scheduler's time axis (ASHA stops between epochs).
NOT_SEARCHABLE = {"train.epochs"}


class RiskParams(BaseModel):
    """The risk probe's searchable parameter: RA's b, searched on each cell's dev predictions."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    b: Annotated[float, Field(description="risk aversion (negative: risk-seeking, Penha & Hauff, 2021)")] = (
        0.0
    )


class SchedulerConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Literal["asha", "fifo"] = "asha"
    grace_period: Annotated[int, Field(ge=1, description="epochs before ASHA may stop a trial")] = 1
    reduction_factor: Annotated[float, Field(gt=1)] = 2.0


class SearchConfig(BaseModel):
    """Which settings to search, scored by ``metric`` on the dev split, with which Tune algorithm."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    metric: str = "R@1"
    num_samples: Annotated[int, Field(ge=1, le=10_000)] = 8
    algorithm: Literal["random", "optuna"] = "random"
    scheduler: SchedulerConfig = SchedulerConfig()
    space: Annotated[dict[str, object], Field(min_length=1)]  # key → domain, checked by check_space

    @field_validator("metric")
    @classmethod
    def _known_metric(cls, value: str) -> str:
        try:
            metrics.get(value)
        except RankuqError as error:
            raise ValueError(str(error)) from None
        return value

    @property
    def mode(self) -> str:
        """Tune's mode: "min" for a metric whose family declares lower better (ECE, Brier, NLL)."""
        return "min" if metrics.get(self.metric).lower_is_better else "max"

    def training_keys(self) -> list[str]:
        """The searched keys that change training (all but the probes' ``risk.*``)."""
        return [key for key in self.space if not key.startswith("risk.")]

    def keys_for(self, trainer: str) -> list[str]:
        """The searched keys that change what ``trainer`` trains: train.*, model.* and its parameters."""
        return [key for key in self.space if key.partition(".")[0] in ("train", "model", trainer)]

    def identity(self, keys: list[str]) -> dict[str, object]:
        """What a search of ``keys`` depends on (its cache key): the settings and those keys' domains."""
        return {**self.model_dump(exclude={"space"}), "space": {key: self.space[key] for key in keys}}

    def domains(self, keys: list[str]) -> dict[str, "Domain"]:
        """Tune domains of ``keys`` (already checked by ``check_space``)."""
        return {key: _domain(*_parsed(key, self.space[key])) for key in keys}


def _parsed(key: str, raw: object) -> tuple[str, list[object]]:
    """A search domain's name and arguments; ValueError("<key>: why") where ``raw`` is not one."""
    valid = ", ".join(f"{{{name}: [{', '.join(args)}]}}" for name, (args, _) in DOMAINS.items())
    if not (isinstance(raw, dict) and len(raw) == 1):
        raise ValueError(f"{key}: a search domain is one mapping, one of {valid}")
    domain, args = next(iter(raw.items()))
    if domain not in DOMAINS:
        raise ValueError(f"{key}: unknown domain '{domain}'; valid domains: {valid}")
    names, draws = DOMAINS[domain]
    if not isinstance(args, list) or (draws and len(args) != len(names)) or not args:
        raise ValueError(f"{key}: {domain} takes [{', '.join(names)}], got {args!r}")
    return domain, args


def _domain(name: str, args: list[object]) -> "Domain":
    from ray import tune

    return cast("Domain", tune.choice(list(args)) if name == "choice" else getattr(tune, name)(*args))


def check_space(
    search: SearchConfig,
    sections: dict[str, tuple[type[BaseModel], dict[str, object]]],
    trained: dict[str, set[str]],
) -> None:
    """Raise ValueError("<key>: why") for the first bad key or domain of ``search.space``.

    ``sections`` maps a key's first part (train, model, risk, a grid method) to its pydantic model and
    current values; ``trained`` each grid method to the parameters its training depends on.
    """
    valid = [
        f"{section}.{name}"
        for section, (model, _) in sections.items()
        for name in model.model_fields
        if _searchable(section, name, trained)
    ]
    for key, raw in search.space.items():
        section, _, name = key.partition(".")
        if section in methods.REGISTRY and section not in sections:
            grid = [method for method in sections if method in methods.REGISTRY]
            raise ValueError(f"{key}: {section} is not one of the grid's methods {grid}; add it to methods")
        if section not in sections or name not in sections[section][0].model_fields:
            raise ValueError(f"{key}: unknown key; searchable keys: {', '.join(valid)}")
        if key in NOT_SEARCHABLE:
            raise ValueError(f"{key}: the epochs are the scheduler's time axis; set {key}, do not search it")
        if not _searchable(section, name, trained):
            raise ValueError(
                f"{key}: {section}.{name} does not change what {section} trains (only parameters of a "
                f"method's own training can be searched); searchable keys: {', '.join(valid)}"
            )
        _check_domain(key, raw, *sections[section], name)


def _searchable(section: str, name: str, trained: dict[str, set[str]]) -> bool:
    """Not the epochs, and of a method only what its training depends on (mc_dropout's T is not)."""
    return f"{section}.{name}" not in NOT_SEARCHABLE and (section not in trained or name in trained[section])


def _check_domain(
    key: str, raw: object, model: type[BaseModel], current: dict[str, object], name: str
) -> None:
    """One known domain with the right arguments, drawing values of the field's type that ``model``
    accepts for ``name`` (with the ``current`` values of its other fields)."""
    domain, args = _parsed(key, raw)
    draws = DOMAINS[domain][1]
    candidates: list[object] = args
    if draws:
        lower, upper = _check_range(key, domain, args, draws, _kinds(model.model_fields[name].annotation))
        candidates = [lower, upper - 1 if domain in _UPPER_EXCLUDED else upper]
    for value in candidates:
        try:
            model(**{**current, name: value})
        except ValidationError as error:
            raise ValueError(f"{key}: {value!r} is not a valid value: {error.errors()[0]['msg']}") from None


def _check_range(
    key: str, name: str, args: list[object], draws: type, kinds: set[object]
) -> tuple[float, float]:
    """A numeric domain's bounds (lower, upper), checked; ValueError("<key>: why") otherwise."""
    numbers = [arg for arg in args if isinstance(arg, int | float) and not isinstance(arg, bool)]
    if len(numbers) != len(args):
        raise ValueError(f"{key}: {name} takes numbers, got {args!r}")
    if not all(math.isfinite(arg) for arg in numbers):  # .inf or .nan: Tune would draw them
        raise ValueError(f"{key}: {name} takes finite numbers, got {args!r}")
    if draws is int and not all(isinstance(arg, int) for arg in args):
        raise ValueError(f"{key}: {name} takes integers, got {args!r}")
    numeric = kinds & {int, float}
    if not numeric:
        raise ValueError(f"{key}: {name} draws numbers but {key} is not a number; use choice")
    if draws is float and float not in numeric:
        raise ValueError(f"{key}: {name} draws floats but {key} is an integer; use randint or choice")
    if numbers[0] >= numbers[1]:
        raise ValueError(f"{key}: {name} needs lower < upper, got {args!r}")
    try:
        _domain(name, args)
    except (ValueError, TypeError, AssertionError) as error:  # Tune's own checks (log of a bound ≤ 0, …)
        raise ValueError(f"{key}: {name}{args}: {error}") from None
    return numbers[0], numbers[1]


def _kinds(annotation: object) -> set[object]:
    """The plain types an annotation allows (int | None → {int, NoneType}); bool counts as no number."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _kinds(get_args(annotation)[0])
    if origin in (Union, UnionType):
        return set[object]().union(*(_kinds(arg) for arg in get_args(annotation)))
    return {bool} if annotation is bool else {annotation}


def sections_of(
    train: TrainConfig, model: ModelConfig, params: dict[str, MethodParams]
) -> tuple[dict[str, tuple[type[BaseModel], dict[str, object]]], dict[str, set[str]]]:
    """What ``check_space`` checks keys against: the grid's sections and each method's trained params."""
    sections: dict[str, tuple[type[BaseModel], dict[str, object]]] = {
        "train": (TrainConfig, train.model_dump()),
        "model": (ModelConfig, model.model_dump()),
        "risk": (RiskParams, {}),
    }
    trained = {}
    for name, value in params.items():
        method = methods.create(name, value)
        sections[name] = (type(value), value.model_dump())
        identity = None
        if method.trains:
            assert isinstance(method, NeuralMethod)  # the methods that train
            identity = method.training_identity()
        trained[name] = set(identity or ()) & set(type(value).model_fields)
    return sections, trained


def tuned_section(
    section: str, values: Mapping[str, JsonValue], chosen: Mapping[str, JsonValue]
) -> dict[str, JsonValue]:
    """``values`` of one section (train, model, or a method's parameters) with its chosen keys set."""
    prefix = f"{section}."
    return {**values, **{key.removeprefix(prefix): v for key, v in chosen.items() if key.startswith(prefix)}}


Section = TypeVar("Section", bound=BaseModel)


def tuned_config(section: str, config: Section, chosen: Mapping[str, JsonValue]) -> Section:
    """A typed section (train, model, a method's parameters) with its chosen keys set, validated."""
    return type(config).model_validate(tuned_section(section, config.model_dump(), chosen))
