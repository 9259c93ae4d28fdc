"""The LLM layer: litellm transport, the request store, the embedded local model, retries and limits.

``build_client(model_cfg, llm_cfg)`` gives an :class:`LLMClient`; ``await client.complete(ChatRequest)``
returns a :class:`ChatResponse`. litellm is imported lazily, on the first call that needs it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trustsim.llm.client import LLMClient
from trustsim.llm.config import LLMConfig, ModelConfig, parse_llm_config, parse_model_config
from trustsim.llm.errors import ProviderError, ReplayMissError
from trustsim.llm.store import RequestStore
from trustsim.llm.types import ChatRequest, ChatResponse

__all__ = [
    "ChatRequest",
    "ChatResponse",
    "LLMClient",
    "LLMConfig",
    "ModelConfig",
    "ProviderError",
    "ReplayMissError",
    "RequestStore",
    "build_client",
    "parse_llm_config",
    "parse_model_config",
]


def build_client(model_cfg: Any, llm_cfg: Any, *, base_dir: str | Path | None = None) -> LLMClient:
    """Validate the ``model`` and ``llm`` config groups and build the job's client.

    Args:
        model_cfg: the ``model`` group (DictConfig, dict or :class:`ModelConfig`).
        llm_cfg: the ``llm`` group (DictConfig, dict or :class:`LLMConfig`).
        base_dir: directory a relative ``llm.store_path`` is resolved against (default: the working dir).

    Raises:
        trustsim.errors.ConfigError: a value is invalid; the message names the key.
    """
    model = model_cfg if isinstance(model_cfg, ModelConfig) else parse_model_config(model_cfg)
    llm = llm_cfg if isinstance(llm_cfg, LLMConfig) else parse_llm_config(llm_cfg)
    store_path = Path(llm.store_path).expanduser()
    if not store_path.is_absolute():
        store_path = Path(base_dir or Path.cwd()) / store_path
    if model.provider == "local":
        from trustsim.llm import local

        local.check_available(model.local)  # fail at start, naming the key, when something is missing
        local.register(model.local)
    return LLMClient(model, llm, RequestStore(store_path))
