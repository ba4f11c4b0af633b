"""A grid's conditions as the findings read them (``Conditions``): each condition's kind and tested list
variant, its tested lists and its training side; and the two lookups the preconditions make in them:
where a condition's ranker was trained (``source``) and the condition without shift on its test lists
(``no_shift``). A finished run's conditions and its grid file's are read alike (``of_spec``)."""

from dataclasses import dataclass, field

from rankuq import tasks
from rankuq.bench.config.grid import GridSpec, Shift, Side
from rankuq.bench.findings.claims import Kind
from rankuq.bench.planning.plan import side_lists


@dataclass(frozen=True)
class Conditions:
    """Condition → (kind, variant of its tested lists), → (test task, ns), → its training side."""

    kinds: dict[str, tuple[Kind, str]]
    tested: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    trained: dict[str, Side] = field(default_factory=dict)


def of_spec(spec: GridSpec) -> Conditions:
    """The conditions of a grid spec."""
    shifts = spec.conditions()
    return Conditions(
        {shift.label(): (condition_kind(spec, shift), shift.test.variant) for shift in shifts},
        {shift.label(): (shift.test.task, shift.test.ns) for shift in shifts},
        {shift.label(): shift.train for shift in shifts},
    )


def condition_kind(spec: GridSpec, shift: Shift) -> Kind:
    """cross-domain when the sides read different data files (trecqa and trecqa_clean are one domain),
    cross-NS when the negative sampling of the training lists differs from the tested lists' (unless the
    shift declares that the papers' in-domain setting: ``in_domain``), else in-domain, or cross-reference
    where the probes' reference set is another side's."""
    if not tasks.one_domain(shift.train.task, shift.test.task):
        return "cross-domain"
    train, test = tasks.get(shift.train.task), tasks.get(shift.test.task)
    trained = side_lists(spec, shift.train, "train").strategy or train().default_strategy("train")
    tested = shift.test.ns or test().default_strategy(spec.eval.split)
    if trained != tested and not shift.in_domain:
        return "cross-NS"
    return "in-domain" if shift.reference in (None, shift.test) else "cross-reference"


def no_shift(among: Conditions, lists: tuple[str, str | None], variant: str) -> str | None:
    """The in-domain condition of ``among`` that tests ``lists`` (test task, negative sampling) of
    ``variant``: trained on that task with those lists' own negatives."""
    return next(
        (
            other
            for other, (kind, other_variant) in among.kinds.items()
            if kind == "in-domain" and other_variant == variant and among.tested[other] == lists
        ),
        None,
    )


def source(among: Conditions, train: Side, variant: str) -> str | None:
    """The in-domain condition of ``among`` with the training side ``train`` that tests on its training
    task, the lists of ``variant`` first."""
    found = [
        other
        for other, (kind, _) in among.kinds.items()
        if kind == "in-domain" and among.trained.get(other) == train and among.tested[other][0] == train.task
    ]
    found.sort(key=lambda other: among.kinds[other][1] != variant)
    return found[0] if found else None
