"""A GPU share that torch cannot see (logical GPUs on a CPU build of torch): CPU, one warning line."""

import pytest
import torch

from rankuq.methods import base


@pytest.mark.skipif(torch.cuda.is_available(), reason="a CUDA device is visible")
def test_granted_gpu_without_cuda_runs_on_the_cpu_with_one_warning_line(monkeypatch, capsys):
    base._warn_gpu_unseen.cache_clear()
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    assert base.inference_device() == base.inference_device() == torch.device("cpu")
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and "given GPU 0" in lines[0] and "running on the CPU" in lines[0]


def test_no_gpu_granted_no_warning(monkeypatch, capsys):
    base._warn_gpu_unseen.cache_clear()
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert base.inference_device().type in ("cpu", "cuda")
    assert capsys.readouterr().err == ""
