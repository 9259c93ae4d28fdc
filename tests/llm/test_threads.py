"""The embedded model's default thread count: the free cores (trustsim/llm/threads.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from trustsim.llm import threads


@pytest.mark.parametrize(
    ("cores", "load", "expected"),
    [
        (2, 0.2, 2),  # a quiet two-core machine: both cores
        (2, 0.6, 1),  # one core busy (rounded): one thread
        (2, 1.4, 1),
        (2, 7.0, 1),  # never fewer than one
        (16, 0.0, 4),  # never more than four
        (16, 13.0, 3),
    ],
)
def test_threads_are_the_free_cores(cores: int, load: float, expected: int) -> None:
    assert threads.free_threads(cores, load) == expected


def test_a_container_quota_caps_the_cores(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cpu_max = tmp_path / "cpu.max"
    monkeypatch.setattr(threads, "CGROUP_CPU_MAX", cpu_max)
    monkeypatch.setattr(threads.os, "sched_getaffinity", lambda pid: set(range(64)))
    cpu_max.write_text("150000 100000\n")  # 1.5 CPUs
    assert threads.usable_cores() == 2
    cpu_max.write_text("max 100000\n")
    assert threads.usable_cores() == 64
    cpu_max.unlink()
    assert threads.usable_cores() == 64


def test_the_default_is_chosen_once_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    threads.default_threads.cache_clear()
    load = iter([0.0, 9.0])
    monkeypatch.setattr(threads, "usable_cores", lambda: 2)
    monkeypatch.setattr(threads, "load_average", lambda: next(load))
    try:
        assert threads.default_threads() == 2
        assert threads.default_threads() == 2  # the load rose, the model keeps its threads
    finally:
        threads.default_threads.cache_clear()
