"""How many threads the embedded model computes with: the cores free now, measured when it loads.

llama.cpp's threads wait for each other at every step of a computation, spinning. When they outnumber the
cores that are free, a waiting thread holds a core another thread needs, and a call slows down several times
(two embedded-model jobs on two busy cores: a smoke battery took 448 s instead of about 70). So the default
is the cores this process may use that are free now, between 1 and :data:`MAX_THREADS`:

- the cores this process may use: its CPU affinity (``os.sched_getaffinity``), and no more than a container's
  CPU quota (cgroup v2 ``cpu.max``) when one is set;
- the free ones: their idle time in ``/proc/stat`` over :data:`SAMPLE_S` seconds (idle and iowait), plus this
  process's own CPU use over the same window (its own threads will not compete with the model), rounded.
  Where ``/proc/stat`` cannot be read (not Linux), the cores less the 1-minute load average (rounded): that
  average lags, it counts a command that ended a minute ago.

The count is measured when the embedded model loads; :mod:`trustsim.llm.cores` then shares the cores
between the processes that run the model at once. ``model.local.n_threads`` overrides both; the count
changes speed, not answers (1 and 2 threads gave byte-identical tables: docs/llm.md, *Embedded model*).
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path

MAX_THREADS = 4
"""A 135M-parameter model gains nothing from more threads."""
CGROUP_CPU_MAX = Path("/sys/fs/cgroup/cpu.max")
PROC_STAT = Path("/proc/stat")
SAMPLE_S = 0.25
"""Seconds over which the free cores are measured (``/proc/stat`` counts in hundredths of a second)."""
IDLE_FIELDS = (3, 4)
"""idle and iowait: the 4th and 5th numbers of a ``cpuN`` line of ``/proc/stat``."""


def usable_cpus() -> set[int]:
    """The CPUs this process may run on (its affinity; every CPU where the system does not say)."""
    try:
        return set(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        return set(range(os.cpu_count() or 1))


def usable_cores() -> int:
    """The cores this process may run on: its affinity, capped by a cgroup v2 CPU quota."""
    cores = len(usable_cpus())
    try:
        quota, period = CGROUP_CPU_MAX.read_text().split()[:2]
        if quota != "max":
            cores = min(cores, max(1, math.ceil(int(quota) / int(period))))
    except (OSError, ValueError):
        pass
    return max(1, cores)


def load_average() -> float:
    """The 1-minute load average (0 where the system does not report one)."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return 0.0


def cpu_jiffies(stat: str, cpus: Iterable[int]) -> tuple[int, int]:
    """(idle + iowait, all) time of ``cpus`` in a ``/proc/stat`` text, in clock ticks. ValueError when a
    CPU has no line."""
    wanted = {f"cpu{c}" for c in cpus}
    idle = total = seen = 0
    for line in stat.splitlines():
        name, _, rest = line.partition(" ")
        if name in wanted:
            values = [int(v) for v in rest.split()[:8]]
            idle += sum(values[i] for i in IDLE_FIELDS)
            total += sum(values)
            seen += 1
    if seen != len(wanted):
        raise ValueError(f"{PROC_STAT} lacks a line for some of CPUs {sorted(wanted)}")
    return idle, total


def own_cpu_s() -> float:
    """CPU seconds (user + system) this process has used."""
    t = os.times()
    return t.user + t.system


def idle_cores(
    cpus: set[int],
    read: Callable[[], str] | None = None,
    sleep: Callable[[float], None] = time.sleep,
    own: Callable[[], float] = own_cpu_s,
    clock: Callable[[], float] = time.monotonic,
    window: float = SAMPLE_S,
) -> float | None:
    """How many of ``cpus`` are free over the next ``window`` seconds: idle, or used by this process itself.
    None when ``/proc/stat`` cannot be read (``read``: its text, default the file's)."""
    read = read or PROC_STAT.read_text
    try:
        idle0, total0 = cpu_jiffies(read(), cpus)
        own0, t0 = own(), clock()
        sleep(window)
        idle1, total1 = cpu_jiffies(read(), cpus)
        own1, t1 = own(), clock()
    except (OSError, ValueError):
        return None
    if total1 <= total0 or t1 <= t0:
        return None
    idle = len(cpus) * (idle1 - idle0) / (total1 - total0)
    return min(float(len(cpus)), idle + max(0.0, own1 - own0) / (t1 - t0))


def free_cores() -> float:
    """The cores this process may use that are free now (see the module docstring)."""
    cores = usable_cores()
    idle = idle_cores(usable_cpus())
    if idle is None:
        return max(0.0, cores - math.floor(load_average() + 0.5))
    return min(float(cores), idle)


def thread_count(free: float, cores: int) -> int:
    """``free`` cores rounded half up, between 1 and ``cores`` and at most :data:`MAX_THREADS`."""
    return max(1, min(MAX_THREADS, cores, math.floor(free + 0.5)))
