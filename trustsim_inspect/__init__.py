"""trustsim inside Inspect (the optional ``inspect`` extra): every game as an Inspect task.

``inspect eval trustsim/escape_room -T experiment=mid2strike --model <model>`` plays trustsim's own rules,
agents, prompts and parsing; only the transport changes: every model call goes through Inspect's
``get_model()`` (its providers, retries, limits and cache), seats take model roles (``--model-role
seat_c=...``), and each sample keeps its trustsim run directory (``python -m analysis from-inspect``).

Modules: :mod:`~trustsim_inspect.tasks` (the tasks), :mod:`~trustsim_inspect.samples` (configuration to
samples), :mod:`~trustsim_inspect.bridge` (the transport), :mod:`~trustsim_inspect.solver` (playing a
sample's job), :mod:`~trustsim_inspect.scoring` (scores and metrics). See docs/inspect.md.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path


def _offline_tokenizers() -> None:
    """Point tiktoken at the encodings litellm ships (``o200k_base``, ``cl100k_base``), unless the user chose a
    cache: Inspect counts tokens with them (e.g. ``mockllm/model``) and would otherwise download them."""
    spec = importlib.util.find_spec("litellm")
    if spec is None or spec.origin is None:
        return
    bundled = Path(spec.origin).parent / "litellm_core_utils" / "tokenizers"
    if bundled.is_dir():
        os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(bundled))


_offline_tokenizers()
