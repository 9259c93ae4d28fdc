"""What the request key covers: every setting that changes an answer, and nothing else (docs/llm.md,
"What the request key covers").

The key is the SHA-256 of the canonical request (:func:`trustsim.llm.store.canonical_request`):

- **What is asked**, for every model: the litellm model id, the API base, the messages, the merged
  generation settings of the request's purpose (``model.params`` or its ``purpose_params`` group) and the
  sample index. The model settings that shape a request (``prompt``, ``prompt_compact``, ``structured_output``,
  ``strict_schema``, ``reasoning_max_chars``) are in the key through the messages and settings they produce.
- **How the embedded model computes the answer** (``provider: local`` only): the ``model.local`` settings in
  :data:`LOCAL_KEYED`, the SHA-256 of the weights file and the llama-cpp-python version (:func:`local_block`).

Everything else is an execution setting: it changes how fast, how often, where or at what price requests
are sent, never an answer, and changing it replays the stored answers (:data:`MODEL_EXECUTION`,
:data:`LOCAL_EXECUTION`, and every ``llm.*`` setting).
"""

from __future__ import annotations

import hashlib
import threading
from importlib import metadata
from pathlib import Path
from typing import Any, Protocol

from trustsim.llm.config import LocalModelConfig

# model.local settings that change the answers (bench_local_settings.py measures each: docs/llm.md)
LOCAL_KEYED = ("decoder", "n_batch", "state_cache_mb")
# model.local settings that do not: the weights are keyed by their digest, wherever the file lies
LOCAL_EXECUTION = ("package", "path", "n_ctx", "n_threads")
# model settings in the key: what is asked (model id, API base, generation settings per purpose), and for the
# embedded model (provider local) how it computes the answer (the local block)
MODEL_KEYED = ("litellm_model", "api_base", "params", "purpose_params", "provider", "local")
# model settings that shape the request a game builds: keyed through the messages and settings they produce
MODEL_SHAPES_REQUEST = (
    "prompt",
    "prompt_compact",
    "structured_output",
    "strict_schema",
    "reasoning_max_chars",
)
# model settings that never change an answer: its table name, its key and headers, how it is priced, its
# endpoint limits and the prompt-cache marks (sent, not keyed: they change what is billed)
MODEL_EXECUTION = (
    "name",
    "api_key_env",
    "headers_env",
    "drop_params",
    "weak",
    "price",
    "limits",
    "prompt_cache",
)

_DIGESTS: dict[tuple[str, int, int], str] = {}
_DIGESTS_LOCK = threading.Lock()


class MetaCache(Protocol):
    """Where a digest is remembered between runs: the request store's ``meta`` table."""

    def meta(self, name: str) -> str | None: ...

    def set_meta(self, name: str, value: str) -> None: ...


def local_block(cfg: LocalModelConfig, weights: Path, cache: MetaCache | None = None) -> dict[str, Any]:
    """The embedded model's part of the canonical request: the keyed settings, the weights' digest and
    the llama-cpp-python version (its kernels compute the numbers)."""
    block: dict[str, Any] = {name: getattr(cfg, name) for name in LOCAL_KEYED}
    block["weights_sha256"] = weights_sha256(weights, cache)
    block["llama_cpp_python"] = _llama_cpp_version()
    return block


def weights_sha256(path: Path, cache: MetaCache | None = None) -> str:
    """SHA-256 of a weights file, hashed once per file version (path, size, modification time): remembered
    in this process and in ``cache`` (the request store), so a run does not read 100 MB again."""
    path = path.resolve()
    st = path.stat()
    stamp = (str(path), st.st_size, st.st_mtime_ns)
    with _DIGESTS_LOCK:
        digest = _DIGESTS.get(stamp)
    if digest is not None:
        return digest
    name, prefix = f"weights_sha256:{path}", f"{st.st_size}:{st.st_mtime_ns}:"
    remembered = cache.meta(name) if cache is not None else None
    if remembered is not None and remembered.startswith(prefix):
        digest = remembered[len(prefix) :]
    else:
        digest = hash_file(path)
        if cache is not None:
            cache.set_meta(name, prefix + digest)
    with _DIGESTS_LOCK:
        _DIGESTS[stamp] = digest
    return digest


def hash_file(path: Path) -> str:
    """SHA-256 hex digest of a file's bytes."""
    h = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def _llama_cpp_version() -> str | None:
    try:
        return metadata.version("llama_cpp_python")
    except metadata.PackageNotFoundError:
        return None
