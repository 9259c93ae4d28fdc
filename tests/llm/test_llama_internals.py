"""llama-cpp-python's internals are used in one module only, behind a version check."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from trustsim.errors import ConfigError
from trustsim.llm import llama_internals, local
from trustsim.llm.config import LocalModelConfig

PACKAGE = Path(__file__).resolve().parents[2] / "trustsim"
INTERNALS = re.compile(
    r"\._ctx\b|\._model\b|\bctypes\b|llama_cpp\.llama_[a-z_]+\(|llama_cpp\.(?:_internals|lib)"
)


def test_no_module_but_llama_internals_touches_llama_cpp_internals() -> None:
    texts = {str(p.relative_to(PACKAGE)): p.read_text(encoding="utf-8") for p in PACKAGE.rglob("*.py")}
    users = {name for name, text in texts.items() if "llama" in text.lower() and INTERNALS.search(text)}
    assert users == {"llm/llama_internals.py"}


def test_guided_decoding_on_an_untested_llama_cpp_python_fails_at_start_naming_the_key(monkeypatch) -> None:
    if local.importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("needs llama-cpp-python")
    monkeypatch.setattr(llama_internals, "installed_version", lambda: "0.9.1")
    with pytest.raises(ConfigError) as info:
        local.check_available(LocalModelConfig(decoder="guided"))
    assert info.value.key == "model.local.decoder"
    assert (
        "guided decoding needs llama-cpp-python 0.3.36 (installed: 0.9.1); use model.local.decoder=grammar"
        in str(info.value)
    )
    local.check_available(LocalModelConfig(decoder="grammar"))  # the grammar decoder uses the public API


def test_the_grammar_check_is_skipped_on_an_untested_version(monkeypatch) -> None:
    monkeypatch.setattr(llama_internals, "installed_version", lambda: "0.9.1")
    llama_internals.check_grammar(object(), {"type": "string", "maxLength": 10**6})  # no internals touched
