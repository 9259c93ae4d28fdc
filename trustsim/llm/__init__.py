"""The LLM layer: litellm transport, the request store, the embedded local model, retries and limits.

``build_client(model, llm)`` of a validated :class:`ModelConfig` and :class:`LLMConfig` (``parse_model_config``,
``parse_llm_config``) gives an :class:`LLMClient`; ``await client.complete(ChatRequest)``
returns a :class:`ChatResponse`. litellm is imported lazily, on the first call that needs it.
"""

from __future__ import annotations

import errno
import sqlite3
from pathlib import Path

from trustsim.llm import local
from trustsim.llm.budget import Budget, BudgetReached
from trustsim.llm.client import LLMClient, check_key_env
from trustsim.llm.config import LLMConfig, ModelConfig, parse_llm_config, parse_model_config
from trustsim.llm.errors import DamagedStoreError, MissingKeyError, ProviderError, ReplayMissError, StoreError
from trustsim.llm.store import RequestStore, ShardedStore, Store, StoreDamaged
from trustsim.llm.types import ChatRequest, ChatResponse
from trustsim.secrets import register_secret_env

__all__ = [
    "BudgetReached",
    "ChatRequest",
    "ChatResponse",
    "DamagedStoreError",
    "LLMClient",
    "LLMConfig",
    "MissingKeyError",
    "ModelConfig",
    "ProviderError",
    "ReplayMissError",
    "RequestStore",
    "ShardedStore",
    "StoreError",
    "build_client",
    "parse_llm_config",
    "parse_model_config",
]


def build_client(
    model: ModelConfig,
    llm: LLMConfig,
    *,
    base_dir: str | Path | None = None,
    job: str | None = None,
    store: Store | None = None,
) -> LLMClient:
    """Build the job's client from the validated ``model`` and ``llm`` config groups.

    Args:
        model: the ``model`` group, validated (:func:`parse_model_config`).
        llm: the ``llm`` group, validated (:func:`parse_llm_config`).
        base_dir: directory a relative ``llm.store_path``/``llm.store_dir`` is resolved against (default: the
            working dir).
        job: the job's config hash: recorded with every stored response (``llm.budget_usd`` counts the
            job's spend by it) and the name of the job's shard under ``llm.store_dir``.
        store: an open store to share (a mixed team's seat clients share the job's store: one writer per
            shard); None opens ``llm.store_path`` / ``llm.store_dir``.

    Raises:
        TypeError: ``model`` or ``llm`` is not a validated config object (e.g. a plain dict).
        trustsim.errors.ConfigError: the key variable is not set (:class:`MissingKeyError`), the embedded
            model is not available, or the store cannot be used (:class:`StoreError`); the message names the
            key.
    """
    for name, value, expected, parse in (
        ("model", model, ModelConfig, "parse_model_config"),
        ("llm", llm, LLMConfig, "parse_llm_config"),
    ):
        if not isinstance(value, expected):
            raise TypeError(
                f"build_client: {name} must be a {expected.__name__} (validate the group with "
                f"trustsim.llm.{parse} first), got {type(value).__name__}"
            )
    store_path = Path(llm.store_dir or llm.store_path).expanduser()
    if not store_path.is_absolute():
        store_path = Path(base_dir or Path.cwd()) / store_path
    register_secret_env(model.api_key_env)
    for var in model.headers_env.values():
        register_secret_env(var)
    check_key_env(model)  # at start, naming the variable, not as an HTTP error at the first call
    if model.provider == "local":
        local.check_available(model.local)  # fail at start, naming the key, when something is missing
        local.register(model.local)
    if store is None:
        store = open_store(
            store_path,
            read_only=llm.replay_only,
            job=job,
            sharded=llm.store_dir is not None,
            check=llm.store_check,
        )
    return LLMClient(model, llm, store, budget=Budget(model, llm, store, job))


def open_store(
    path: Path, *, read_only: bool, job: str | None = None, sharded: bool = False, check: str = "quick"
) -> RequestStore | ShardedStore:
    """Open the request store (a file, or with ``sharded`` a shard directory) after its integrity check
    (``llm.store_check``); a path that cannot be used, or a store that is empty, foreign or damaged, is a
    config error naming ``llm.store_path`` (``llm.store_dir``) and what to do."""
    key = "llm.store_dir" if sharded else "llm.store_path"
    try:
        if sharded:
            return ShardedStore(path, job=job, read_only=read_only, check=check)
        return RequestStore(path, read_only=read_only, job=job, check=check)
    except StoreDamaged as exc:
        raise DamagedStoreError(exc.path, exc.problem, key) from None
    except FileNotFoundError:
        raise StoreError(
            f"no request store at {path} (llm.replay_only=true replays from an existing store)",
            resume=f"point {key} at the store that holds the run, or drop llm.replay_only=true",
            key=key,
        ) from None
    except (OSError, sqlite3.Error) as exc:
        raise StoreError(
            f"cannot open the request store at {path} ({type(exc).__name__}: {exc})",
            resume=_open_advice(path, exc, key, read_only=read_only),
            key=key,
        ) from None


def _open_advice(path: Path, exc: BaseException, key: str, *, read_only: bool) -> str:
    """What to do about a store path that cannot be opened: the advice fits the cause."""
    code = getattr(exc, "errno", None)
    if key == "llm.store_dir" and (code in (errno.ENOTDIR, errno.EEXIST) or path.is_file()):
        return (
            f"{key} names a folder of shards (one per job) and {path} is not a folder: choose a folder, "
            f"or use llm.store_path={path} for a single store file"
        )
    if code == errno.ENOTDIR:
        return f"a part of {path} is a file, not a folder: choose another {key}"
    if read_only:
        return f"choose a readable {key}"
    sqlite_code = getattr(exc, "sqlite_errorcode", -1) & 0xFF  # PERM, READONLY, CANTOPEN
    denied = code in (errno.EACCES, errno.EPERM, errno.EROFS) or sqlite_code in (3, 8, 14)
    if denied:
        return f"choose a writable {key}, or replay a read-only store with llm.replay_only=true"
    return f"choose a writable {key} (free space, or fix the folder), then re-run the same command"
