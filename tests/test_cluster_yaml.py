"""cluster.yaml passes Ray's own cluster-launcher validation; the KubeRay manifest is well formed.
Quick (no cluster is started): part of the README's test command."""

from pathlib import Path

import yaml
from ray.autoscaler._private.util import prepare_config, validate_config

ROOT = Path(__file__).resolve().parents[1]


def test_cluster_yaml_passes_the_launchers_validation():
    config = prepare_config(yaml.safe_load((ROOT / "cluster.yaml").read_text()))
    validate_config(config)  # raises on a schema error
    workers, head = config["worker_setup_commands"], config["head_setup_commands"]
    assert any("whl/cu128" in line for line in workers) and any('".[gpu]"' in line for line in workers)
    assert any("whl/cpu" in line for line in head) and any('".[cpu]"' in line for line in head)
    assert config["available_node_types"]["gpu_worker"]["resources"]["GPU"] >= 1
    assert config["available_node_types"]["head"]["resources"]["GPU"] == 0


def test_kuberay_manifest_names_a_head_and_a_gpu_group_on_shared_storage():
    manifest = yaml.safe_load((ROOT / "kuberay-raycluster.yaml").read_text())
    assert (manifest["apiVersion"], manifest["kind"]) == ("ray.io/v1", "RayCluster")
    (group,) = manifest["spec"]["workerGroupSpecs"]
    (worker,) = group["template"]["spec"]["containers"]
    assert worker["resources"]["limits"]["nvidia.com/gpu"] == "1"
    assert {"name": "shared", "mountPath": "/mnt/shared"} in worker["volumeMounts"]


def test_the_faiss_builds_are_exclusive_extras():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    extras = project["project"]["optional-dependencies"]
    assert not any(dep.startswith("faiss") for dep in project["project"]["dependencies"])
    assert extras["cpu"] == ["faiss-cpu>=1.8"] and extras["gpu"] == ["faiss-gpu-cu12>=1.8"]
    assert project["tool"]["uv"]["conflicts"] == [[{"extra": "cpu"}, {"extra": "gpu"}]]
