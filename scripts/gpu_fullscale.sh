#!/usr/bin/env bash
# The papers' grids at full training scale on a lent GPU machine (issue 40, docs/gpu.md): two device
# calls to one warm machine, the second at once after the first (it is given back 30 s after a call).
#
#   bash scripts/gpu_fullscale.sh install      # call 1, carry [".gpu"]: the bundle into .gpu-env/
#   bash scripts/gpu_fullscale.sh run PART     # call 2, carry [".gpu-weights"]: weights, grids, pack
#   bash scripts/gpu_fullscale.sh benchmark    # or call 2: the acceptance benchmark (docs/gpu.md)
#
# The bundle (46 MiB) and the bf16 weights (43 MiB) do not fit one 64 MiB call together, so call 1
# installs the bundle into .gpu-env/ (ignored by git: the warm machine keeps it, and call 2 does not
# name it in carry, so it is not replaced), and call 2 carries the weights. Results go to $OUT (at most
# three files; rankuq/bench/benchmarks/gpu/fullscale.py). Here, on a CPU, RANKUQ_FULLSCALE_LOCAL=1 skips the
# bundle and the weights and RANKUQ_FULLSCALE_GRID runs that grid file instead of the part's: the
# wiring test (tests/bench/benchmarks/test_fullscale.py) goes through this same path.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${OUT:?set OUT to the folder the results go to (the device tool sets it)}"
ENV_DIR=$PWD/.gpu-env
# Keep JAX and TensorFlow off the card in every process (the first H100 call: JAX preallocated 75 %).
export PYTHONUNBUFFERED=1 JAX_PLATFORMS=${JAX_PLATFORMS:-cpu}
export XLA_PYTHON_CLIENT_PREALLOCATE=${XLA_PYTHON_CLIENT_PREALLOCATE:-false}
export TF_FORCE_GPU_ALLOW_GROWTH=${TF_FORCE_GPU_ALLOW_GROWTH:-true}
if [ "${RANKUQ_FULLSCALE_LOCAL:-0}" != 1 ]; then
  export PYTHONPATH=$ENV_DIR/site${PYTHONPATH:+:$PYTHONPATH} RANKUQ_DATA=$ENV_DIR/data
fi
PYTHON=${PYTHON:-python3}

# Call 2's start: the real weights into the installed stand-in, rankuq itself (editable, no deps).
prepare() {
  [ "${RANKUQ_FULLSCALE_LOCAL:-0}" = 1 ] && return
  [ -d "$ENV_DIR/site" ] || { echo "no $ENV_DIR: call 1 (install) did not run on this machine" >&2; exit 2; }
  "$PYTHON" scripts/gpu_bundle.py weights --weights .gpu-weights
  "$PYTHON" -m pip install -q --no-index --no-deps --no-build-isolation -e .
}

case "${1:-}" in
  install)
    "$PYTHON" scripts/gpu_bundle.py install --bundle .gpu --target "$ENV_DIR" >"$OUT/install.log" 2>&1
    du -sh "$ENV_DIR" >>"$OUT/install.log"
    ;;
  run)
    part=${2:?give the part: 1, 2 or 3}
    prepare
    grids=(--part "$part")
    if [ -n "${RANKUQ_FULLSCALE_GRID:-}" ]; then grids=(--grid "$RANKUQ_FULLSCALE_GRID"); fi
    exec "$PYTHON" -m rankuq.bench.benchmarks.gpu.fullscale run "$OUT" "${grids[@]}" \
      --budget-s "${RANKUQ_FULLSCALE_BUDGET_S:-560}"
    ;;
  benchmark)
    prepare
    exec timeout 540 "$PYTHON" -m rankuq.bench.benchmarks.gpu "$OUT" 2>"$OUT/stderr.log"
    ;;
  *)
    echo "usage: OUT=DIR bash scripts/gpu_fullscale.sh install | run PART | benchmark" >&2
    exit 2
    ;;
esac
