"""How many threads the embedded model computes with: the machine's free cores, chosen once per process.

llama.cpp's threads wait for each other at every step of a computation, spinning. When they outnumber the
cores that are free, a waiting thread holds a core another thread needs, and a call slows down several times
(two embedded-model jobs on two busy cores: a smoke battery took 448 s instead of about 70). So the default
is the cores this process may use less the busy ones, between 1 and :data:`MAX_THREADS`:

- the cores this process may use: its CPU affinity (``os.sched_getaffinity``), and no more than a container's
  CPU quota (cgroup v2 ``cpu.max``) when one is set;
- the busy ones: the 1-minute load average (``os.getloadavg``), rounded.

The count is chosen when the first embedded model is loaded and kept for the process (one model instance per
thread count). ``model.local.n_threads`` overrides it; the count changes speed, not answers (1 and 2 threads
gave byte-identical tables: docs/llm.md, *Embedded model*).
"""

from __future__ import annotations

import functools
import math
import os
from pathlib import Path

MAX_THREADS = 4
"""A 135M-parameter model gains nothing from more threads."""
CGROUP_CPU_MAX = Path("/sys/fs/cgroup/cpu.max")


def usable_cores() -> int:
    """The cores this process may run on: its affinity, capped by a cgroup v2 CPU quota."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        cores = os.cpu_count() or 1
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


def free_threads(cores: int, load: float) -> int:
    """``cores`` less the busy ones (``load``, rounded half up), between 1 and :data:`MAX_THREADS`."""
    return max(1, min(MAX_THREADS, cores - math.floor(load + 0.5)))


@functools.cache
def default_threads() -> int:
    """The embedded model's thread count when ``model.local.n_threads`` is not set (once per process)."""
    return free_threads(usable_cores(), load_average())
