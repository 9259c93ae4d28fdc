"""Every use of llama-cpp-python's internals: its private attributes (``Llama._ctx``, ``Llama._model``), its
low-level C API and ctypes. Nothing else in trustsim touches them.

The guided decoder (:mod:`trustsim.llm.local_decode`) needs what the public ``Llama`` API does not offer:
truncating the KV cache at a position, saving and restoring a KV state without copying the logits history,
reading the last logits in place, telling end-of-generation and control tokens apart, and changing a live
context's thread count (the processes that run the model share the cores: :mod:`trustsim.llm.cores`). The grammar
decoder needs one check that llama.cpp can compile an answer schema (it aborts the process otherwise).
These calls are tested against :data:`TESTED_VERSIONS` only: :func:`check_version` refuses any other
version for guided decoding, and the grammar check is skipped there (the grammar decoder itself uses the
public API only).
"""

from __future__ import annotations

import ctypes
import json
from importlib import metadata
from typing import Any

import numpy as np

from trustsim.errors import ConfigError

TESTED_VERSIONS = ("0.3.36",)  # the llama-cpp-python versions these calls are tested with (constraints.txt)


def installed_version() -> str | None:
    try:
        return metadata.version("llama_cpp_python")
    except metadata.PackageNotFoundError:
        return None


def tested() -> bool:
    """Whether the installed llama-cpp-python is one these calls are tested with."""
    return installed_version() in TESTED_VERSIONS


def check_version() -> None:
    """Fail at start, naming the key, when guided decoding cannot trust the installed llama-cpp-python."""
    if not tested():
        raise ConfigError(
            "model.local.decoder",
            f"guided decoding needs llama-cpp-python {' or '.join(TESTED_VERSIONS)} (installed: "
            f"{installed_version() or 'none'}); use model.local.decoder=grammar",
        )


def special_tokens(llama: Any) -> tuple[np.ndarray, np.ndarray]:
    """Boolean masks over the vocabulary: end-of-generation tokens, and control tokens."""
    import llama_cpp

    vocab = llama._model.vocab
    n = llama.n_vocab()
    eog = np.array([bool(llama_cpp.llama_vocab_is_eog(vocab, t)) for t in range(n)], dtype=bool)
    control = np.array([bool(llama_cpp.llama_vocab_is_control(vocab, t)) for t in range(n)], dtype=bool)
    return eog, control


def chat_formatter(llama: Any) -> Any | None:
    """The model's own chat template as llama-cpp-python renders it (None: the model has none)."""
    from llama_cpp import llama_chat_format

    template = llama.metadata.get("tokenizer.chat_template")
    if not template:
        return None
    eos, bos = llama.token_eos(), llama.token_bos()
    return llama_chat_format.Jinja2ChatFormatter(
        template=template,
        eos_token=llama._model.token_get_text(eos) if eos != -1 else "",
        bos_token=llama._model.token_get_text(bos) if bos != -1 else "",
    )


def truncate(llama: Any, n: int) -> None:
    """Keep the first ``n`` tokens of the context (the KV cache and ``Llama``'s own token count)."""
    llama._ctx.kv_cache_seq_rm(-1, n, -1)
    llama.n_tokens = n


def save_state(llama: Any) -> Any:
    """The context's KV state, written once into a buffer of its own (``len()`` is its size;
    ``Llama.save_state`` would also copy the logits of a whole batch, and ``bytes`` would copy it twice)."""
    import llama_cpp

    ctx = llama._ctx.ctx
    size = llama_cpp.llama_state_get_size(ctx)
    buf = (ctypes.c_uint8 * size)()
    n = llama_cpp.llama_state_get_data(ctx, buf, size)
    return buf if n == size else (ctypes.c_uint8 * n).from_buffer(buf)  # a view of the bytes written


def load_state(llama: Any, data: Any, tokens: tuple[int, ...]) -> None:
    """Restore a state saved by :func:`save_state` after ``tokens`` (read in place, not copied)."""
    import llama_cpp

    if llama_cpp.llama_state_set_data(llama._ctx.ctx, data, len(data)) != len(data):
        raise RuntimeError("cannot restore a saved KV state")
    llama.input_ids[: len(tokens)] = tokens
    llama.n_tokens = len(tokens)


def set_threads(llama: Any, n: int) -> None:
    """Compute the next calls with ``n`` threads (single tokens and batches alike)."""
    llama._ctx.set_n_threads(n, n)
    llama.n_threads = llama.n_threads_batch = n
    llama.context_params.n_threads = llama.context_params.n_threads_batch = n


def last_logits(llama: Any) -> np.ndarray:
    """A copy of the logits after the last evaluated token."""
    import llama_cpp

    ptr = llama_cpp.llama_get_logits_ith(llama._ctx.ctx, -1)
    return np.ctypeslib.as_array(ptr, shape=(llama.n_vocab(),)).copy()


def check_grammar(llama: Any, schema: dict[str, Any]) -> None:
    """Raise ValueError when llama.cpp cannot compile the answer schema's grammar (sampling with it would
    abort the process). Skipped on a llama-cpp-python version these calls are not tested with."""
    if not tested():
        return
    import llama_cpp
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    gbnf = json_schema_to_gbnf(json.dumps(schema))
    sampler = llama_cpp.llama_sampler_init_grammar(llama._model.vocab, gbnf.encode(), b"root")
    if not sampler:
        raise ValueError("llama.cpp cannot compile the answer schema (too many bounded repetitions?)")
    llama_cpp.llama_sampler_free(sampler)
