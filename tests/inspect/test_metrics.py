"""Task metrics: the formation and targeting deltas of a task that holds both conditions (the memoryless
anchor and a schedule with memory) are the trust analysis's own, interval included."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest

from analysis.escape_room.pipeline import analyse
from tests.conftest import REPO
from tests.inspect.conftest import eval_task
from trustsim_inspect.scoring import N_RESAMPLES


@pytest.mark.slow
def test_deltas_equal_the_trust_analysis(tmp_path):
    """Offline agents (no model is called): anchor and smooth sessions of the Bayesian agent."""
    log = eval_task("escape_room", tmp_path / "logs", task_args={"experiment": "anchor,smooth", "runs": 3,
                    "agent": "bayes", "overrides": ["game.games=4"]})  # fmt: skip
    assert len(log.samples) == 6 and not any(e.event == "model" for s in log.samples for e in s.events)
    metrics = {name: m.value for score in log.results.scores for name, m in score.metrics.items()}
    out = tmp_path / "runs"
    proc = subprocess.run([sys.executable, "-m", "analysis", "from-inspect", log.location, "--out", str(out)],
                          cwd=REPO, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    trust = analyse([str(out)], anchor="data", n_resamples=N_RESAMPLES, seed=0)
    (formation,) = [d for d in trust.deltas if d.measure == "delta_trust"]
    (targeting,) = [d for d in trust.deltas if d.measure == "delta_target"]
    assert formation.keys["schedule"] == "smooth" and not math.isnan(formation.interval.low)
    for name, delta in (("delta_trust", formation), ("delta_target", targeting)):
        iv = delta.interval
        assert (metrics[name], metrics[f"{name} low"], metrics[f"{name} high"]) == (
            iv.estimate,
            iv.low,
            iv.high,
        )
    smooth = next(c for c in trust.cells if c.keys["schedule"] == "smooth")
    label = next(k for k in metrics if k.startswith("volume (") and "smooth" in k)
    from rich.text import Text

    assert all(Text.from_markup(name).plain == name for name in metrics)  # Inspect prints them through Rich
    assert metrics[label] == smooth.measures["volume"].estimate
