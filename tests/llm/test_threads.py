"""The embedded model's default thread count: the cores free now (trustsim/llm/threads.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from trustsim.llm import threads


def _stat(*cpus: tuple[int, int, int]) -> str:
    """A /proc/stat text: per CPU (busy user ticks, idle ticks, iowait ticks)."""
    total = [sum(c[i] for c in cpus) for i in range(3)]
    lines = [f"cpu  {total[0]} 0 0 {total[1]} {total[2]} 0 0 0 0 0"]
    lines += [f"cpu{n} {u} 0 0 {i} {w} 0 0 0 0 0" for n, (u, i, w) in enumerate(cpus)]
    return "\n".join([*lines, "intr 123 4 5", "ctxt 99", "btime 1700000000"]) + "\n"


class FakeMachine:
    """/proc/stat before and after the window, this process's CPU seconds, and a clock."""

    def __init__(self, before: str, after: str, own_s: float = 0.0, window: float = 0.25) -> None:
        self.stats = iter([before, after])
        self.own = iter([10.0, 10.0 + own_s])
        self.times = iter([100.0, 100.0 + window])
        self.slept: list[float] = []

    def idle(self, cpus: set[int]) -> float | None:
        return threads.idle_cores(
            cpus,
            read=lambda: next(self.stats),
            sleep=self.slept.append,
            own=lambda: next(self.own),
            clock=lambda: next(self.times),
        )


def test_two_quiet_cores_are_free() -> None:
    m = FakeMachine(_stat((100, 500, 0), (100, 500, 0)), _stat((100, 525, 0), (100, 525, 0)))
    assert m.idle({0, 1}) == pytest.approx(2.0)
    assert m.slept == [threads.SAMPLE_S]


def test_a_busy_core_is_not_free_and_iowait_counts_as_idle() -> None:
    before = _stat((100, 500, 0), (100, 500, 0))
    after = _stat((125, 500, 0), (100, 515, 10))  # cpu0 busy, cpu1 idle (a third of it waiting for disk)
    assert FakeMachine(before, after).idle({0, 1}) == pytest.approx(1.0)
    assert FakeMachine(before, after).idle({1}) == pytest.approx(1.0)  # only the CPUs of its affinity
    assert FakeMachine(before, after).idle({0}) == pytest.approx(0.0)


def test_this_process_own_use_counts_as_free() -> None:
    """Its own use over the window is not competition for the model it loads."""
    before = _stat((100, 500, 0), (100, 500, 0))
    after = _stat((125, 500, 0), (110, 515, 0))  # 1.4 cores busy, 0.6 of them this process
    m = FakeMachine(before, after, own_s=0.15)
    assert m.idle({0, 1}) == pytest.approx(0.6 + 0.6)


def test_an_unreadable_proc_stat_is_no_measure() -> None:
    def unreadable() -> str:
        raise OSError("no /proc")

    assert threads.idle_cores({0}, read=unreadable, sleep=lambda s: None) is None
    m = FakeMachine(_stat((1, 1, 0)), _stat((1, 1, 0)))
    assert m.idle({0, 3}) is None  # no line for cpu3


def test_without_proc_stat_the_load_average_stands_in(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(threads, "PROC_STAT", Path("/nonexistent/stat"))
    monkeypatch.setattr(threads, "usable_cores", lambda: 4)
    monkeypatch.setattr(threads, "idle_cores", lambda cpus: None)
    monkeypatch.setattr(threads, "load_average", lambda: 1.6)
    assert threads.free_cores() == 2.0


def test_a_lagging_load_average_does_not_matter_where_proc_stat_is_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The case that halved the default run: a compile ended a second ago, the load average still says 2."""
    monkeypatch.setattr(threads, "usable_cores", lambda: 2)
    monkeypatch.setattr(threads, "load_average", lambda: 2.0)
    monkeypatch.setattr(threads, "idle_cores", lambda cpus: 1.97)
    assert threads.thread_count(threads.free_cores(), 2) == 2


@pytest.mark.parametrize(
    ("free", "cores", "expected"),
    [
        (1.97, 2, 2),  # a quiet two-core machine: both cores
        (1.4, 2, 1),  # one core mostly busy: one thread
        (1.5, 2, 2),  # rounded half up
        (0.0, 2, 1),  # never fewer than one
        (16.0, 16, 4),  # never more than four
        (3.0, 2, 2),  # never more than the cores
    ],
)
def test_threads_are_the_free_cores_rounded(free: float, cores: int, expected: int) -> None:
    assert threads.thread_count(free, cores) == expected


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


def test_the_real_proc_stat_is_read_where_there_is_one() -> None:
    if not threads.PROC_STAT.exists():
        pytest.skip("no /proc/stat on this system")
    cpus = threads.usable_cpus()
    idle = threads.idle_cores(cpus, window=0.05)
    assert idle is not None and 0.0 <= idle <= len(cpus)
