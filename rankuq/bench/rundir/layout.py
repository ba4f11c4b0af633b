"""Where everything of a run directory lies. Every stage asks this object for its paths; nothing
else joins folder names, so the layout of a run directory is read in one place:

    RUN_DIR/
      cache/                      candidate-list shards (tasks.shards), one folder per content hash
      search/<key>/               a search's trials.csv and best.json
      ray/                        Tune and Train storage: epoch checkpoints of members in training
      models/<key>/               a trained member: a save_pretrained folder and rankuq-training.json
      fits/<key>/fit.json         a post-hoc method's fitted state (temperature's T, …)
      predictions/<task>/<method>/seed-<seed>-<key>.parquet       the tested split
      predictions-dev/<task>/<method>/seed-<seed>-<key>.parquet   the dev split the probes fit on
      probes/<task>/<method>/seed-<seed>-<key>/                   a seed's probe metrics and plots
      plots/ (index.json)         each (condition, method)'s plots, as the report shows them
      leaderboard.csv, leaderboard.md, report.html
      seeds.csv                   one row per (condition, method, seed): its keys (bench.results.provenance),
                                  every metric and probe value
      queries.parquet             the same values split by query (bench.statistics.parts): what the findings'
                                  resampling over seeds and queries reads
      mlflow.db, mlartifacts/     the default (local) MLflow store
      compute.json                each invocation's wall time, machine and outcome (bench.rundir.compute_log)
"""

from dataclasses import dataclass
from pathlib import Path

from rankuq.contract import plain_name
from rankuq.errors import RankuqError

# A trained member's last reported metrics, beside its weights. Written last, it marks the member
# whole: the folders of earlier versions (model.pt, training.json) are not read, but trained again.
TRAINING_FILE = "rankuq-training.json"
FIT_FILE = "fit.json"  # a post-hoc method's fitted state
PLOT_INDEX = "index.json"
BEST_FILE, TRIALS_FILE = "best.json", "trials.csv"  # a search's choice and its trial table
LEADERBOARD_CSV = "leaderboard.csv"
SEEDS_CSV = "seeds.csv"
QUERIES_FILE = "queries.parquet"


@dataclass(frozen=True)
class RunLayout:
    root: Path

    def __post_init__(self) -> None:
        object.__setattr__(self, "root", Path(self.root).resolve())

    @property
    def cache(self) -> Path:
        return self.root / "cache"

    def cached_lists(self, task: str, split: str) -> Path:
        """The one list folder of ``task``'s ``split`` in the cache (``tasks.shards`` names it
        ``<task>-<split>-<key>``), for a script that reads a run's lists; an error where there is not
        exactly one."""
        folders = sorted(self.cache.glob(f"{plain_name(task)}-{split}-*"))
        if len(folders) != 1:
            raise RankuqError(
                f"{self.cache} holds {len(folders)} {task}-{split}-* list folders, not one: run (or "
                "`--plan`) the grid whose lists you want into its own run directory"
            )
        return folders[0]

    @property
    def ray_storage(self) -> Path:
        return self.root / "ray"

    @property
    def models(self) -> Path:
        return self.root / "models"

    def member(self, key: str) -> Path:
        """A trained member's folder: what scoring loads (``NeuralMethod.load_member``)."""
        return self.models / key

    def fit_file(self, key: str) -> Path:
        return self.root / "fits" / key / FIT_FILE

    def search(self, key: str) -> Path:
        return self.root / "search" / key

    def predictions(self, task: str, method: str, seed: int, key: str, dev: bool = False) -> Path:
        folder = "predictions-dev" if dev else "predictions"
        return self.root / folder / plain_name(task) / method / f"seed-{seed}-{key}.parquet"

    def probes(self, task: str, method: str, seed: int, key: str) -> Path:
        return self.root / "probes" / plain_name(task) / method / f"seed-{seed}-{key}"

    @property
    def plots(self) -> Path:
        return self.root / "plots"

    @property
    def plot_index(self) -> Path:
        return self.plots / PLOT_INDEX

    def plot(self, kind: str, condition: str, method: str) -> Path:
        return self.plots / f"{kind}-{plain_name(condition, '_', 200)}-{method}.png"

    @property
    def grid_file(self) -> Path:
        return self.root / "grid.yaml"

    def training_file(self, key: str) -> Path:
        return self.models / key / TRAINING_FILE

    @property
    def leaderboard_csv(self) -> Path:
        return self.root / LEADERBOARD_CSV

    @property
    def seeds_csv(self) -> Path:
        return self.root / SEEDS_CSV

    @property
    def queries_file(self) -> Path:
        return self.root / QUERIES_FILE

    @property
    def ray_pids(self) -> Path:
        """The local Ray processes a run started (bench.engine.processes), so a rerun stops what a killed
        driver left."""
        return self.root / "ray-pids.json"

    @property
    def mlflow_db(self) -> Path:
        return self.root / "mlflow.db"

    @property
    def mlartifacts(self) -> Path:
        return self.root / "mlartifacts"

    @property
    def default_tracking_uri(self) -> str:
        return f"sqlite:///{self.mlflow_db}"
