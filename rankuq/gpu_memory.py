"""The GPU-memory preflight of a member: refuse to start one on a CUDA device whose free memory
cannot hold it, naming the processes that hold the card, instead of dying of CUDA out-of-memory
half-way through loading (as every member of the first H100 run did: a JAX process held 75 % of the
card, rankuq/records/data/2026-11-27-h100/gpu.json and rankuq.gpu_env).

What a member needs is the one measurement there is, scaled (``member_need_mib``). The check reads
the free memory at the member's start: members packed on one card start together, so it is a floor
that catches a card held by someone else, not a reservation among members."""

import contextlib
import subprocess
from dataclasses import dataclass

import psutil
import torch
from torch import nn

from rankuq.errors import RankuqError

# rankuq/records/data/2026-11-27-h100/gpu.json, packing.alone_gpu_memory_mib: torch's peak allocation of one
# MiniLM-L6 member (22.71 M parameters, 6 layers of 384) training in bf16 autocast at batch 32, max
# length 128. AdamW keeps 16 bytes a parameter (fp32 weights, gradients and two moments), 346.5 MiB
# of it; the rest are the activations, scaled with rows × tokens × layers × width.
MEASURED_MIB = 794.2
MEASURED_PARAMS = 22.71e6
MEASURED_ROWS, MEASURED_TOKENS, MEASURED_LAYERS, MEASURED_WIDTH = 32, 128, 6, 384
OPTIMIZER_BYTES_PER_PARAM = 16
# torch's caching allocator reserves more than its peak allocation (blocks rounded up, kept for
# reuse): a margin over the estimate, not measured.
RESERVE_MARGIN = 1.25
MIB = 2**20
QUERY = "pid,process_name,used_memory"  # nvidia-smi --query-compute-apps: one CSV line a process


@dataclass(frozen=True)
class Holder:
    """A process holding memory on the card."""

    pid: int
    name: str
    used_mib: float

    def line(self) -> str:
        return f"pid {self.pid} {self.name} ({self.used_mib / 1024:.2f} GiB)"


def member_need_mib(model: nn.Module, batch_size: int, max_length: int) -> float:
    """GPU memory a member of ``model`` needs to train at ``batch_size`` rows of ``max_length``
    tokens: optimizer state by its parameter count, activations by its shape (layers and width from
    its config; the measured member's where the config has none), with the allocator's margin."""
    params = sum(parameter.numel() for parameter in model.parameters())
    config = getattr(model, "config", None)
    layers = getattr(config, "num_hidden_layers", MEASURED_LAYERS)
    width = getattr(config, "hidden_size", MEASURED_WIDTH)
    state = MEASURED_PARAMS * OPTIMIZER_BYTES_PER_PARAM / MIB
    per_unit = (MEASURED_MIB - state) / (MEASURED_ROWS * MEASURED_TOKENS * MEASURED_LAYERS * MEASURED_WIDTH)
    activations = per_unit * batch_size * max_length * layers * width
    return (params * OPTIMIZER_BYTES_PER_PARAM / MIB + activations) * RESERVE_MARGIN


def check_member_room(model: nn.Module, batch_size: int, max_length: int, what: str) -> None:
    """Raise one RankuqError if this process's CUDA device lacks the free memory ``what`` (a member,
    named in the message) needs to train ``model``; nothing on a machine without CUDA."""
    if torch.cuda.is_available():
        require_free_mib(member_need_mib(model, batch_size, max_length), what)


def require_free_mib(need: float, what: str) -> None:
    """Raise one RankuqError naming the card's holders if this process's CUDA device has less than
    ``need`` MiB free for ``what`` (a scorer may call it with its own estimate)."""
    device = torch.cuda.current_device()
    free, total = (value / MIB for value in torch.cuda.mem_get_info(device))
    if free >= need:
        return
    raise RankuqError(
        f"{what} needs about {need:,.0f} MiB of GPU memory, and GPU {device} "
        f"({torch.cuda.get_device_name(device)}) has {free:,.0f} MiB free of {total:,.0f}; held by: "
        f"{held_by(device)}. Stop those processes (a JAX or TensorFlow one takes most of a card unless "
        "told not to: rankuq.gpu_env), or give each member a larger share (resources.gpus_per_trial)"
    )


def held_by(device: int) -> str:
    """The compute processes on ``device`` with the memory each holds, largest first, as nvidia-smi
    lists them; or why they could not be listed."""
    try:
        holders = compute_processes(device)
    except (OSError, subprocess.SubprocessError, ValueError) as error:
        return f"could not list processes: {error}"
    if not holders:
        return "no compute process listed (one in another container or namespace is not shown)"
    return ", ".join(holder.line() for holder in sorted(holders, key=lambda h: -h.used_mib))


def compute_processes(device: int) -> list[Holder]:
    """nvidia-smi's compute processes on ``device`` (found by its UUID: Ray's CUDA_VISIBLE_DEVICES
    renumbers the devices this process sees), each named by its command line where it is visible."""
    command = ["nvidia-smi", f"--query-compute-apps={QUERY}", "--format=csv,noheader,nounits"]
    uuid = getattr(torch.cuda.get_device_properties(device), "uuid", None)
    if uuid is not None:
        command.append(f"--id=GPU-{uuid}")
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=10, check=True)
    except FileNotFoundError:
        raise FileNotFoundError("nvidia-smi is not on the PATH") from None
    except subprocess.CalledProcessError as error:
        said = (error.stderr or error.stdout or "").strip().splitlines() or ["(no message)"]
        raise subprocess.SubprocessError(f"nvidia-smi exited {error.returncode}: {said[0]}") from None
    return [_holder(line) for line in done.stdout.splitlines() if line.strip()]


def _holder(line: str) -> Holder:
    """One CSV line of nvidia-smi (pid, process name, MiB used; the name may hold commas), named by
    the process's command line where this process can see it (a Ray worker: ray::ImplicitFunc.train)."""
    fields = line.split(",")
    pid, name, used = fields[0].strip(), ",".join(fields[1:-1]).strip(), fields[-1].strip()
    if len(fields) < 3 or not pid.isdigit():
        raise ValueError(f"nvidia-smi printed an unexpected line: {line!r}")
    with contextlib.suppress(psutil.Error):  # another namespace's pid, or gone: nvidia-smi's name stands
        name = " ".join(psutil.Process(int(pid)).cmdline())[:80] or name
    try:
        used_mib = float(used)
    except ValueError:  # "[N/A]" where the driver does not account per process
        used_mib = 0.0
    return Holder(int(pid), name, used_mib)
