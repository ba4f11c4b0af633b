"""The grid spec: YAML → validated settings; unknown keys and names are rejected with the valid ones."""

import re
from collections.abc import Hashable
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, TypeGuard, get_args

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    field_validator,
    model_serializer,
    model_validator,
)

from rankuq import methods, tasks
from rankuq.backbone import TINY, ModelConfig
from rankuq.bench import metrics
from rankuq.bench.config.evaluation import EvalConfig
from rankuq.bench.config.resources import ResourcesConfig
from rankuq.bench.config.search_space import SearchConfig, check_space, sections_of
from rankuq.bench.config.training import TrainConfig, unset_left_out
from rankuq.errors import RankuqError
from rankuq.methods.base import Method, MethodParams, NeuralMethod
from rankuq.tasks import lists, negatives

DEFAULT_GRID = "default.yaml"
PLAIN_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")
# What the code can run: numpy seeds are below 2**32; lists of more candidates than this are not
# reranking lists; more seeds than this is a typo for a range.
MAX_SEED, MAX_SEEDS, MAX_CANDIDATES = 2**32 - 1, 1000, 1000


def _plain_name(value: str) -> str:
    """Names become folders and MLflow run names: plain file names, so '.', '..', hidden names and
    paths are refused."""
    if not PLAIN_NAME.fullmatch(value) or len(value) > 100:
        raise ValueError(
            f"{value!r} is not a plain name (up to 100 letters, digits, '_', '.', '-', not starting "
            "with '.'): it names a folder and an MLflow run"
        )
    return value


PlainName = Annotated[str, AfterValidator(_plain_name)]


def condition_name(task: str) -> str:
    """The condition "train and test on ``task``": the task's name with what a folder or an MLflow run
    name cannot hold turned into '-' ("beir/scifact" → "beir-scifact", "parquet:/x" → "parquet-x")."""
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", task).strip("-.")
    return (name or "task")[:100]


class Side(BaseModel):
    """One side of a condition: which task's lists, built with which negative sampling."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    task: str
    ns: str | None = Field(
        None, description="negative sampling; None = native lists, else bm25; run:<path> reranks a TREC run"
    )
    n: Annotated[int, Field(ge=2, le=MAX_CANDIDATES)] | None = Field(
        None, description="candidates per list (10)"
    )
    variant: str = "standard"

    @field_validator("variant")
    @classmethod
    def _known_variant(cls, value: str) -> str:
        if value not in lists.VARIANTS:
            raise ValueError(f"unknown variant '{value}'; valid variants: {', '.join(lists.VARIANTS)}")
        return value

    @field_validator("task")
    @classmethod
    def _known_task(cls, value: str) -> str:
        tasks.get(value)
        return value

    @field_validator("ns")
    @classmethod
    def _known_strategy(cls, value: str | None) -> str | None:
        if value is not None:
            negatives.get(value)  # an unknown name, or a TREC run file that is not there, fails on load
        return value

    def label(self) -> str:
        return self.task if self.ns is None else f"{self.task}:{self.ns}"


class Shift(BaseModel):
    """Train on one side, test on the other: cross-domain (tasks differ) or cross-NS (ns differs)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: PlainName | None = None
    train: Side
    test: Side
    reference: Side | None = Field(
        None,
        description="the side whose dev split the probes and post-hoc fits read (their reference set); "
        "None: the tested side's, or the source's where the target has no dev split. Another domain's: "
        "Gisserot-Boukhlef et al. (2024) §5.4, a reference set that does not match the tested data",
    )
    in_domain: bool = Field(
        False,
        description="read a condition whose training negatives differ from its tested lists' as in "
        "domain, not cross-NS: the papers' own in-domain setting where that is how they train (PG-DRR, "
        "Ye et al. 2023 §4.4, and GPF-BERT 2023: negatives drawn at random from the whole collection, "
        "tested on the dataset's BM25 lists). Both sides must read one domain's data",
    )

    @model_serializer(mode="wrap")
    def _unset_left_out(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return unset_left_out(handler(self), reference=None, in_domain=False)

    @model_validator(mode="after")
    def _in_domain_is_one_domain(self) -> "Shift":
        if self.in_domain and not tasks.one_domain(self.train.task, self.test.task):
            raise ValueError(
                f"in_domain: {self.train.task} and {self.test.task} read different data, so the shift is "
                "cross-domain; in_domain only declares a change of training negatives in domain"
            )
        return self

    def label(self) -> str:
        return self.name or f"{self.train.label()}→{self.test.label()}"


class GridSpec(BaseModel):
    """A method × condition × seed grid; a task in ``tasks`` is the condition "train and test on it"."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: PlainName = "default"
    data_dir: str | None = None
    tasks: list[str] = []
    shifts: list[Shift] = []
    methods: Annotated[dict[str, dict[str, object] | None], Field(min_length=1)]  # validated by each method
    seeds: Annotated[
        list[Annotated[int, Field(ge=0, le=MAX_SEED)]], Field(min_length=1, max_length=MAX_SEEDS)
    ] = [0]
    baseline: str | None = Field(None, description="method the others are compared with")
    model: ModelConfig = ModelConfig()
    train: TrainConfig = TrainConfig()
    # A task whose data needs another recipe (TrecQA's 94 training questions need more steps than a
    # 250-query sample of WikiQA): its members train with these keys over `train`, the rest as before.
    train_by_task: dict[str, dict[str, object]] = Field(
        {},
        description="train settings over `train` for members trained on that task "
        "({trecqa_clean: {negatives: 4, epochs: 6}}); members of other tasks keep their keys",
    )
    eval: EvalConfig = EvalConfig()
    resources: ResourcesConfig = ResourcesConfig()
    search: SearchConfig | None = None

    @field_validator("tasks")
    @classmethod
    def _known_tasks(cls, value: list[str]) -> list[str]:
        for name in value:
            tasks.get(name)
        return value

    @field_validator("methods")
    @classmethod
    def _known_methods(cls, value: dict[str, object]) -> dict[str, object]:
        for name in value:
            methods.get(name)
        return value

    @model_validator(mode="after")
    def _some_condition(self) -> "GridSpec":
        if not self.tasks and not self.shifts:
            raise ValueError(
                "name at least one task (tasks: [wikiqa]) or shift (shifts: [{train: …, test: …}])"
            )
        if self.train.early_stopping is not None and self.eval.dev_split is None:
            raise ValueError("train.early_stopping scores the train side's dev split; set eval.dev_split")
        self._check_train_by_task()
        labels = [shift.label() for shift in self.conditions()]
        twice = sorted({label for label in labels if labels.count(label) > 1})
        if twice:  # a condition names its folder and MLflow run: two of one name would overwrite each other
            raise ValueError(f"two conditions are named {twice[0]!r}; give a shift another name")
        return self

    @model_serializer(mode="wrap")
    def _unset_left_out(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return unset_left_out(handler(self), train_by_task={})

    def _check_train_by_task(self) -> None:
        trained = {condition.train.task for condition in self.conditions()}
        for task, keys in self.train_by_task.items():
            where = f"train_by_task.{task}"
            if task not in trained:
                raise ValueError(f"{where}: no condition trains on {task} (trained: {sorted(trained)})")
            if "ns" in keys:
                raise ValueError(f"{where}.ns: the training lists are the shift's; set its train side's ns")
            try:
                merged = self.train_for(task)
            except ValidationError as error:
                raise ValueError(f"{where}.{first_error(error, TrainConfig)}") from None
            if (merged.epochs == 0) != (self.train.epochs == 0):
                raise ValueError(f"{where}.epochs: 0 (zero-shot) is for the whole grid or none of it")
            if merged.early_stopping is not None and self.eval.dev_split is None:
                raise ValueError(f"{where}.early_stopping scores the dev split; set eval.dev_split")

    def train_for(self, task: str) -> TrainConfig:
        """The train settings of members trained on ``task``: ``train`` with its override, if any."""
        override = self.train_by_task.get(task)
        if not override:
            return self.train
        return TrainConfig.model_validate({**self.train.model_dump(), **override})

    def conditions(self) -> list[Shift]:
        """Every train → test condition of the grid, plain tasks first."""
        return [
            Shift(name=condition_name(task), train=Side(task=task), test=Side(task=task))
            for task in self.tasks
        ] + list(self.shifts)

    @field_validator("seeds")
    @classmethod
    def _unique_seeds(cls, value: list[int]) -> list[int]:
        if len(set(value)) != len(value):
            raise ValueError(f"seeds must be unique, got {value}")
        return value

    def method_params(self, source: str) -> dict[str, MethodParams]:
        """Each method's validated parameters; errors name ``source`` and the key."""
        return {
            name: methods.get(name).parse(raw, where=f"{source}: methods.{name}")
            for name, raw in self.methods.items()
        }


def parse_grid(raw: object, source: str) -> tuple[GridSpec, dict[str, MethodParams]]:
    """Validate a loaded YAML document; one RankuqError naming ``source`` and the key on failure."""
    if not isinstance(raw, dict):
        raise RankuqError(f"{source}: a grid is a YAML mapping with keys {sorted(GridSpec.model_fields)}")
    try:
        spec = GridSpec(**raw)
    except ValidationError as error:
        raise RankuqError(f"{source}: {first_error(error, GridSpec)}") from None
    except RankuqError as error:  # unknown task or method name, raised inside a validator
        raise RankuqError(f"{source}: {error}") from None
    params = spec.method_params(source)
    _check_sides(spec, source)
    if spec.baseline is not None and spec.baseline not in spec.methods:
        raise RankuqError(
            f"{source}: baseline '{spec.baseline}' is not one of the grid's methods {list(spec.methods)}"
        )
    if spec.train.epochs == 0:
        _check_zero_shot(spec, params, source)
    if spec.search is not None:
        try:
            _check_search(spec, spec.search, params)
        except ValueError as error:
            raise RankuqError(f"{source}: {error}") from None
    return spec, params


def dev_side(condition: Shift, split: str, root: Path) -> Side:
    """The side whose ``split`` lists the probes and post-hoc fits read: the condition's ``reference``
    where it names one, else the tested side, or, where the target has no such split (a test-only BEIR
    folder), the source side, as paper 002's domain transfer fits its thresholds on the source's dev
    split."""
    if condition.reference is not None:
        return condition.reference
    target = tasks.get(condition.test.task)()
    return condition.test if split in target.available_splits(root) else condition.train


def _check_sides(spec: GridSpec, source: str) -> None:
    """Every split the run will read exists for its task, and each side's negative sampling fits it
    (native lists only where the task has them): checked here, before any shard is written."""
    # Post-hoc methods fit on the dev lists of the tested side, or of the source side (dev_side).
    fit_splits = (
        {spec.eval.dev_split or "dev"} if any(methods.get(name).posthoc for name in spec.methods) else set()
    )
    dev = [spec.eval.dev_split] if spec.eval.dev_split else []
    keys = [f"tasks.{i}" for i in range(len(spec.tasks))] + [f"shifts.{i}" for i in range(len(spec.shifts))]
    root = tasks.data_root(spec.data_dir)
    for key, condition in zip(keys, spec.conditions(), strict=True):
        # The dev and fit splits are read on the target, or on the source where it lacks them.
        reads = [*dev, *sorted(fit_splits)]
        read_on = {split: dev_side(condition, split, root) for split in reads}
        on_target = [split for split in reads if read_on[split] == condition.test]
        on_reference = [
            split for split in reads if split not in on_target and read_on[split] == condition.reference
        ]
        on_source = [split for split in reads if split not in on_target + on_reference]
        roles = [
            # train.epochs 0 (zero-shot) reads no training lists
            ("train", condition.train, [*(["train"] if spec.train.epochs else []), *dev, *on_source]),
            ("test", condition.test, [spec.eval.split, *on_target]),
        ]
        if condition.reference is not None and on_reference:
            roles.append(("reference", condition.reference, on_reference))
        for role, side, splits in roles:
            where = key if key.startswith("tasks") else f"{key}.{role}"
            loader = tasks.get(side.task)()
            for split in splits:
                if split not in loader.splits:
                    raise RankuqError(
                        f"{source}: {where}: task {side.task} has no '{split}' split (valid splits: "
                        f"{', '.join(loader.splits)}); the grid reads it for the {role} side "
                        "(train, eval.split, eval.dev_split, post-hoc fits): pick another task or split"
                    )
                try:
                    lists.check_native(
                        side.ns or loader.default_strategy(split), split in loader.native_splits, ""
                    )
                except RankuqError as error:
                    raise RankuqError(f"{source}: {where}.ns: {side.task}/{split}{error}") from None


def _check_zero_shot(spec: GridSpec, params: dict[str, MethodParams], source: str) -> None:
    """``train.epochs: 0`` scores ``model.backbone`` as given: only with a checkpoint named, and only
    methods that score one model with its own head (not an ensemble of copies, not a new head)."""
    if spec.model.backbone in (None, TINY):
        raise RankuqError(
            f"{source}: train.epochs: 0 scores model.backbone as it is, and "
            f"{spec.model.backbone or 'MiniLM'} has no trained relevance head; set model.backbone to a "
            "cross-encoder checkpoint folder"
        )
    if spec.train.early_stopping is not None or (spec.search and spec.search.training_keys()):
        raise RankuqError(
            f"{source}: train.epochs: 0 trains nothing, so train.early_stopping and searched training "
            "settings have nothing to select; drop them"
        )
    for name, own in params.items():
        method = methods.create(name, own)
        if not scores_as_given(method):
            raise RankuqError(
                f"{source}: methods.{name}: with train.epochs: 0 only methods that score the given "
                f"checkpoint with its own head run ({', '.join(zero_shot_methods())}); {name} "
                f"{'combines several members' if method.members() > 1 else 'trains a head of its own'}"
            )


def scores_as_given(method: Method) -> bool:
    """Whether ``method`` can score a checkpoint as given (``train.epochs: 0``): it trains nothing,
    or one model with the checkpoint's own head (`bert`, `mc_dropout`, the post-hoc maps)."""
    if not isinstance(method, NeuralMethod):
        return True
    return method.training_identity() is None and method.members() == 1


def zero_shot_methods() -> list[str]:
    """The registered methods that score a checkpoint as given."""
    return [name for name in methods.names() if scores_as_given(methods.create(name))]


def _check_search(spec: GridSpec, search: SearchConfig, params: dict[str, MethodParams]) -> None:
    """The space's keys and domains, and what searching them needs from the rest of the grid."""
    try:
        check_space(search, *sections_of(spec.train, spec.model, params))
    except ValueError as error:
        raise ValueError(f"search.space.{error}") from None
    if search.training_keys() and spec.eval.dev_split is None:
        raise ValueError("search.space: trials are scored on the dev split; set eval.dev_split")
    if "risk.b" in search.space:
        if "risk" not in spec.eval.probes or spec.eval.dev_split is None:
            raise ValueError(
                "search.space.risk.b: b is searched on the risk probe's dev predictions; "
                "add risk to eval.probes and set eval.dev_split"
            )
        if metrics.get(search.metric).family.kind != "ranking":
            raise ValueError(
                f"search.space.risk.b: b reorders candidates, which {search.metric} does not see; "
                "search it by a ranking metric (R@1, AP, RR, nDCG@10)"
            )
    if search.scheduler.name == "asha" and search.scheduler.grace_period > spec.train.epochs:
        raise ValueError(
            f"search.scheduler.grace_period: {search.scheduler.grace_period} is more than train.epochs "
            f"({spec.train.epochs}), so ASHA could stop no trial"
        )


def first_error(error: ValidationError, root: type[BaseModel]) -> str:
    """``key: message`` of pydantic's first error validating ``root``: the dotted key, and for an
    unknown key the keys valid where it was given."""
    first = error.errors()[0]
    key = ".".join(str(part) for part in first["loc"]) or "grid"
    message = first["msg"].removeprefix("Value error, ")
    if first["type"] == "extra_forbidden":
        message = f"unknown key; valid keys here: {_valid_keys(root, first['loc'])}"
    return f"{key}: {message}"


def _valid_keys(model: type[BaseModel], location: tuple[int | str, ...]) -> str:
    """The keys of the model inside ``model`` that holds the unknown key at ``location`` (list
    indices skipped)."""
    for part in location[:-1]:
        if isinstance(part, int):
            continue
        annotation = model.model_fields[part].annotation
        # The model inside list[Shift] or SearchConfig | None, else the annotation itself.
        inner = [arg for arg in (*get_args(annotation), annotation) if _is_model(arg)]
        if not inner:
            break
        model = inner[0]
    return ", ".join(sorted(model.model_fields))


def _is_model(annotation: object) -> TypeGuard[type[BaseModel]]:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


class UniqueKeyLoader(yaml.SafeLoader):
    """``yaml.safe_load``'s loader, refusing a key given twice in one mapping (YAML would keep the
    last silently, so a second ``seeds:`` would quietly replace the first)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Hashable, object]:
        seen: set[Hashable] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if not isinstance(key, Hashable):
                continue  # SafeLoader refuses it below
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"key {key!r} is given twice; keep one", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def load_grid(path: Path | None = None) -> tuple[GridSpec, dict[str, MethodParams]]:
    """Read a grid YAML file, or the built-in default grid when ``path`` is None."""
    if path is None:
        text = resources.files("rankuq.bench.grids").joinpath(DEFAULT_GRID).read_text()
        source = f"built-in grid {DEFAULT_GRID}"
    else:
        if not path.is_file():
            raise RankuqError(f"grid file not found: {path}")
        text, source = path.read_text(), str(path)
    try:
        raw = yaml.load(text, Loader=UniqueKeyLoader)  # a SafeLoader: no Python tags
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark
        where = f", line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise RankuqError(f"{source}{where}: not valid YAML ({error.problem or error.context})") from None
    except yaml.YAMLError as error:
        raise RankuqError(f"{source}: not valid YAML ({' '.join(str(error).split())})") from None
    return parse_grid(raw, source)
