"""Preview: what a run or a sweep would ask and cost, sending nothing and needing no key.

``python -m trustsim ... preview=true`` (single runs and multiruns) plays each job with a stand-in model
under the real LLM client (the real prompts and request settings), counts prompt tokens with litellm's
token counter, finds requests already in the request store (free), estimates completion tokens from the
answer schema or the token cap, and prices everything from ``model.price`` or litellm's price map. It
writes no run directory and no store row (only ``preview.json`` under ``outputs/previews/``).

``estimate(cfg) -> Estimate`` does the same from Python for one composed job config.
"""

from __future__ import annotations

from trustsim.preview.report import Estimate
from trustsim.preview.run import estimate, run_preview, sweep_total

__all__ = ["Estimate", "estimate", "run_preview", "sweep_total"]
