"""Backoff delays of retries (the limits that pace requests are the endpoint's: trustsim.llm.endpoint)."""

from __future__ import annotations

import numpy as np


class Backoff:
    """Exponential backoff with "equal jitter": delay = d/2 + U(0, d/2), d = min(max, base * 2**attempt).

    Jitter draws come from a seeded numpy Generator, so the sequence of delays is reproducible.
    """

    def __init__(self, base_s: float, max_s: float, seed: int = 0) -> None:
        self.base_s = base_s
        self.max_s = max_s
        self._rng = np.random.default_rng(seed)

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number ``attempt`` (0-based); honours a server's Retry-After."""
        cap = min(self.max_s, self.base_s * (2.0**attempt))
        delay = cap / 2.0 + float(self._rng.uniform(0.0, cap / 2.0))
        if retry_after is not None and retry_after > 0:
            delay = max(delay, min(retry_after, self.max_s))
        return delay
