"""The Python examples of docs/api.md run as written, with the outputs shown, inside a running event loop
(as in a Jupyter notebook), in a scratch folder; the examples that need an API key are skipped (listed)."""

from __future__ import annotations

import asyncio
import doctest
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
API_MD = REPO / "docs" / "api.md"
SKIP = [
    # (regular expression searched in an example's source, why it is not run here)
    (r"\bmodel=(gpt|claude|gemini)", "needs an API key and network"),
    (r"^llm\.", "reads the API-model run above"),
]
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def python_blocks(text: str) -> str:
    """The ``python`` fenced blocks of a Markdown text, one after another."""
    return "\n".join(re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M))


def api_examples() -> tuple[doctest.DocTest, list[str]]:
    """docs/api.md as one doctest, less the skipped examples (returned with their reasons)."""
    test = doctest.DocTestParser().get_doctest(
        python_blocks(API_MD.read_text(encoding="utf-8")), {}, "api.md", str(API_MD), 0
    )
    kept, skipped = [], []
    for example in test.examples:
        reason = next((why for pattern, why in SKIP if re.search(pattern, example.source)), None)
        (skipped.append(f"{example.source.strip()}: {reason}") if reason else kept.append(example))
    test.examples = kept
    return test, skipped


def test_api_md_runs_as_written_in_a_running_event_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    test, skipped = api_examples()
    assert len(test.examples) >= 20 and len(skipped) == 2, skipped
    out: list[str] = []
    runner = doctest.DocTestRunner(optionflags=FLAGS)

    async def notebook_cell() -> doctest.TestResults:
        asyncio.get_running_loop()  # a loop runs here, as in a Jupyter kernel
        return runner.run(test, out=out.append, clear_globs=False)

    results = asyncio.run(notebook_cell())
    assert results.failed == 0, "".join(out)
    assert (tmp_path / "report" / "report.md").is_file()


def test_the_extractor_keeps_continuations_and_outputs() -> None:
    text = "x\n```python\n>>> for i in range(2):\n...     i\n0\n1\n```\n```bash\necho no\n```\n"
    examples = doctest.DocTestParser().get_examples(python_blocks(text))
    assert len(examples) == 1 and examples[0].want == "0\n1\n"
