"""Config builders shared by the LLM-layer tests."""

from __future__ import annotations

from pathlib import Path


def model_dict(api_base: str | None = None, **over: object) -> dict:
    cfg: dict = {
        "name": "fake",
        "litellm_model": "openai/fake-model",
        "api_base": api_base,
        "api_key_env": "TRUSTSIM_TEST_KEY",
        "params": {"temperature": 0.0, "max_tokens": 64},
        "subtask_params": {"max_tokens": 8},
    }
    cfg.update(over)
    return cfg


def llm_dict(store: Path, **over: object) -> dict:
    cfg: dict = {
        "store_path": str(store),
        "max_retries": 3,
        "backoff_base_s": 0.01,
        "backoff_max_s": 0.05,
        "timeout_s": 5.0,
        "max_concurrency": 8,
    }
    cfg.update(over)
    return cfg
