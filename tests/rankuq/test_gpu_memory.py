"""rankuq.gpu_memory: a member refused a CUDA device without room for it, with the card's holders
named; CUDA and nvidia-smi stood in for by monkeypatches (no GPU here)."""

import os
import subprocess
from types import SimpleNamespace

import pytest
import torch
from torch import nn
from transformers import BertConfig, BertForSequenceClassification

from rankuq import gpu_memory
from rankuq.errors import RankuqError

GIB = 2**30
# nvidia-smi's lines on the first H100 run: the driver's JAX and a Ray worker's (pids of no process
# here, so nvidia-smi's names stand), and this test's own process, named by its command line
# Other holders: pids above Linux's largest (2**22), so no live process here lends them its own name.
LISTED = f"4194401, python, 61358\n4194402, [Not Found], 19682\n{os.getpid()}, python3, 12\n"


@pytest.fixture(scope="module")
def minilm_l6() -> nn.Module:
    """The measured member's shape: MiniLM-L6 (6 layers of 384, its vocabulary), a 2-way head."""
    config = BertConfig(hidden_size=384, num_hidden_layers=6, num_attention_heads=12, intermediate_size=1536)
    return BertForSequenceClassification(config)


def test_the_need_of_the_measured_member_is_the_measurement_with_the_allocators_margin(minilm_l6):
    model = minilm_l6
    need = gpu_memory.member_need_mib(model, 32, 128)
    assert need == pytest.approx(gpu_memory.MEASURED_MIB * gpu_memory.RESERVE_MARGIN, rel=0.01)
    # activations grow with rows × tokens; the optimizer state does not
    doubled = gpu_memory.member_need_mib(model, 64, 128)
    state = 22.71e6 * 16 / 2**20 * gpu_memory.RESERVE_MARGIN
    assert doubled - need == pytest.approx(need - state, rel=0.01)


def fake_card(monkeypatch, free_mib: float, listing=None) -> list[list[str]]:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda device: (int(free_mib * 2**20), int(79.2 * GIB)))
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device: "NVIDIA H100 80GB HBM3")
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda device: SimpleNamespace(uuid="5a3c-77"))
    calls: list[list[str]] = []

    def run(command: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        calls.append(command)
        if isinstance(listing, Exception):
            raise listing
        return subprocess.CompletedProcess(command, 0, stdout=LISTED if listing is None else listing)

    # the module gpu_memory runs nvidia-smi with, named through it: another test may have loaded
    # rankuq.gpu_memory anew, with its own reference to the module
    monkeypatch.setattr("rankuq.gpu_memory.subprocess.run", run)
    return calls


def test_a_member_is_refused_a_card_held_by_others_with_each_holder_named(monkeypatch, minilm_l6):
    calls = fake_card(monkeypatch, free_mib=20.6)
    with pytest.raises(RankuqError) as raised:
        gpu_memory.check_member_room(minilm_l6, 32, 128, "member 956d45892c5d5a22")
    message = str(raised.value)
    assert message.startswith("member 956d45892c5d5a22 needs about 993 MiB of GPU memory, and GPU 0 ")
    assert "(NVIDIA H100 80GB HBM3) has 21 MiB free of 81,101" in message
    assert "held by: pid 4194401 python (59.92 GiB), pid 4194402 [Not Found] (19.22 GiB), " in message
    assert f"pid {os.getpid()} " in message and "pytest" in message  # its command line, not 'python3'
    assert "gpus_per_trial" in message and "\n" not in message
    assert calls[0][-1] == "--id=GPU-5a3c-77"  # the device Ray gave, whatever CUDA_VISIBLE_DEVICES says


def test_a_card_with_room_is_taken_without_listing_anything(monkeypatch, minilm_l6):
    calls = fake_card(monkeypatch, free_mib=1024)
    gpu_memory.check_member_room(minilm_l6, 32, 128, "member x")
    assert calls == []


def test_a_machine_without_cuda_is_not_checked(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda device: pytest.fail("asked a CPU machine"))
    gpu_memory.check_member_room(nn.Linear(2, 2), 32, 128, "member x")


@pytest.mark.parametrize(
    ("listing", "said"),
    [
        (FileNotFoundError(2, "No such file"), "could not list processes: nvidia-smi is not on the PATH"),
        (
            subprocess.CalledProcessError(9, ["nvidia-smi"], stderr="NVIDIA-SMI has failed\nmore"),
            "could not list processes: nvidia-smi exited 9: NVIDIA-SMI has failed.",
        ),
        (subprocess.TimeoutExpired(["nvidia-smi"], 10), "could not list processes: Command"),
        ("No running processes found\n", "could not list processes: nvidia-smi printed an unexpected line"),
        ("", "held by: no compute process listed"),
    ],
)
def test_processes_that_cannot_be_listed_leave_the_reason_in_the_one_error(monkeypatch, listing, said):
    fake_card(monkeypatch, free_mib=10, listing=listing)
    with pytest.raises(RankuqError, match="needs about") as raised:
        gpu_memory.check_member_room(nn.Linear(2, 2), 32, 128, "member x")
    assert said in str(raised.value)
