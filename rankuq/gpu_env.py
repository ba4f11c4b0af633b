"""The environment that keeps JAX and TensorFlow off the GPU in rankuq's processes.

A stock GPU image ships JAX (and often TensorFlow) beside torch. bm25s, which rankuq imports where it
uses BM25 (methods.bm25's scorer, tasks.negatives' sampler; never at module level), imports JAX when it
is installed and runs one ``jax.lax.top_k`` at import; that starts JAX's GPU backend, and JAX
preallocates 75 % of the card. On the first H100 run
(rankuq/records/data/2026-11-27-h100/gpu.json) the driver held 59.9 GiB and each Ray worker
19.2 GiB, and every member died of CUDA out-of-memory. rankuq never computes with JAX or TensorFlow:
both stay on the CPU, and should a user route them to the GPU, they grow into it instead of taking it.

``GPU_SAFE_ENV`` is the one list. ``apply`` sets it in this process (``rankuq/__init__`` calls it
before anything heavy is imported: the CLI, the API, the benchmarks and every Ray worker that
unpickles rankuq's code pass through it), and ``worker_env_vars`` hands the same values to Ray's
workers on every node (``bench.engine.session``'s runtime env). A variable the user set keeps the
user's value, here and in the workers."""

import json
import os
from collections.abc import Mapping, MutableMapping

GPU_SAFE_ENV: dict[str, str] = {
    # JAX computes on the CPU only: it never opens the GPU, so it reserves nothing there.
    "JAX_PLATFORMS": "cpu",
    # Should a user send JAX to the GPU after all (their own JAX_PLATFORMS), it allocates as it goes
    # instead of 75 % of the card at its first computation.
    "XLA_PYTHON_CLIENT_PREALLOCATE": "false",
    # TensorFlow maps every visible GPU's memory on its first GPU op unless told to grow.
    "TF_FORCE_GPU_ALLOW_GROWTH": "true",
}

# Ray's variable for the runtime env of a job submitted with `ray job submit` (the name of
# ray._private.runtime_env.constants.RAY_JOB_CONFIG_JSON_ENV_VAR; not imported: this module stays light).
RAY_JOB_CONFIG = "RAY_JOB_CONFIG_JSON_ENV_VAR"


def apply(environ: MutableMapping[str, str] = os.environ) -> None:
    """Set each variable of ``GPU_SAFE_ENV`` in ``environ`` that is not set there already."""
    for name, value in GPU_SAFE_ENV.items():
        environ.setdefault(name, value)


def worker_env_vars(environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    """``GPU_SAFE_ENV`` as this process has it (the user's value where set), for a Ray runtime env's
    ``env_vars``; less the variables a submitted Ray job's runtime env sets already: Ray refuses a
    ``ray.init`` runtime env that names a variable the job's names, and the job's value reaches every
    worker anyway."""
    taken = _submitted_job_env_vars(environ)
    return {name: environ.get(name, value) for name, value in GPU_SAFE_ENV.items() if name not in taken}


def _submitted_job_env_vars(environ: Mapping[str, str]) -> set[str]:
    """The variables of the runtime env of the Ray job this driver runs in (none outside a job)."""
    config = json.loads(environ.get(RAY_JOB_CONFIG) or "{}")
    return set((config.get("runtime_env") or {}).get("env_vars") or {})
