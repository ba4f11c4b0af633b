"""rankuq.gpu_env: JAX and TensorFlow kept off the GPU in rankuq's processes, the user's values kept."""

import json
import os
import subprocess
import sys
import textwrap

from rankuq.gpu_env import GPU_SAFE_ENV, RAY_JOB_CONFIG, apply, worker_env_vars

# A stand-in for JAX on the path of a child process: it records the variables as they are when it is
# first imported (JAX reads them when its backend starts, at bm25s's import-time top_k), and offers
# the one call bm25s makes at import.
FAKE_JAX = {
    "__init__.py": """
        import json, os, sys
        names = json.loads(os.environ["FAKE_JAX_NAMES"])
        with open(os.environ["FAKE_JAX_RECORD"], "w") as record:
            json.dump({name: os.environ.get(name) for name in names}, record)
        from . import lax
    """,
    "lax.py": """
        def top_k(values, k):
            return values[:k], list(range(k))
    """,
}


def test_apply_sets_what_is_unset_and_keeps_the_users_values():
    environ = {"JAX_PLATFORMS": "cuda", "PATH": "/bin"}
    apply(environ)
    assert environ == {**GPU_SAFE_ENV, "JAX_PLATFORMS": "cuda", "PATH": "/bin"}


def test_the_workers_get_the_users_values_and_not_what_a_submitted_job_sets():
    assert worker_env_vars({}) == GPU_SAFE_ENV
    users = worker_env_vars({"XLA_PYTHON_CLIENT_PREALLOCATE": "true"})
    assert users == {**GPU_SAFE_ENV, "XLA_PYTHON_CLIENT_PREALLOCATE": "true"}
    # `ray job submit --runtime-env-json`: Ray refuses a ray.init runtime env naming the job's variables
    job = {"runtime_env": {"env_vars": {"JAX_PLATFORMS": "cpu,cuda"}, "pip": ["x"]}}
    found = worker_env_vars({RAY_JOB_CONFIG: json.dumps(job)})
    assert "JAX_PLATFORMS" not in found and set(found) == set(GPU_SAFE_ENV) - {"JAX_PLATFORMS"}
    assert worker_env_vars({RAY_JOB_CONFIG: json.dumps({"runtime_env": None})}) == GPU_SAFE_ENV


def test_the_cli_process_has_the_variables_set_before_jax_is_first_imported(tmp_path):
    """`rankuq run` reaches JAX where it is installed when it scores bm25 (bm25s imports it and
    starts its backend); the variables must be in the environment by then, not set later by the command."""
    (tmp_path / "jax").mkdir()
    for name, code in FAKE_JAX.items():
        (tmp_path / "jax" / name).write_text(textwrap.dedent(code))
    record = tmp_path / "record.json"
    env = {name: value for name, value in os.environ.items() if name not in GPU_SAFE_ENV}
    env |= {
        "PYTHONPATH": os.pathsep.join([str(tmp_path), env.get("PYTHONPATH", "")]),
        "FAKE_JAX_RECORD": str(record),
        "FAKE_JAX_NAMES": json.dumps(sorted(GPU_SAFE_ENV)),
    }
    # what `rankuq run` imports, then JAX as a bm25 scorer reaches it (bm25s imports it, lazily since
    # 2026-11-27); the variables must already be set however late that is
    code = "import rankuq.bench.cli.main\nimport rankuq.bench.run.grid_run\nimport jax\n"
    subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True, timeout=300)
    assert json.loads(record.read_text()) == GPU_SAFE_ENV
