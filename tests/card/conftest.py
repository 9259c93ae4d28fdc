"""Battery sweeps shared by the card tests: the offline battery (smoke size) and the model battery on the fake
OpenAI-compatible server (every answer generated from the request's JSON schema), run once per session."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import analysis_cli, built_once, cli
from trustsim.llm.fake_server import FakeServer

KEY_ENV = "TRUSTSIM_CARD_TEST_KEY"


def instance(schema: dict[str, Any], defs: dict[str, Any]) -> Any:
    """A small valid instance of a JSON schema (first enum value, lower bounds, every property)."""
    if "$ref" in schema:
        return instance(defs[schema["$ref"].rsplit("/", 1)[-1]], defs)
    for key in ("anyOf", "oneOf"):
        if key in schema:
            options = [s for s in schema[key] if s.get("type") != "null"] or schema[key]
            return instance(options[0], defs)
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        return {k: instance(v, defs) for k, v in (schema.get("properties") or {}).items()}
    if kind == "array":
        return [instance(schema.get("items") or {}, defs) for _ in range(int(schema.get("minItems", 0)))]
    if kind == "integer":
        return int(schema.get("minimum", 0))
    if kind == "number":
        low, high = float(schema.get("minimum", 0.0)), float(schema.get("maximum", 1.0))
        return (low + high) / 2
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    return "fake"


def schema_reply(payload: dict[str, Any]) -> str:
    fmt = payload.get("response_format") or {}
    schema = (fmt.get("json_schema") or {}).get("schema")
    if not schema:
        return json.dumps({"action": "pass", "reasoning": "no schema"})
    return json.dumps(instance(schema, schema.get("$defs") or schema.get("definitions") or {}))


def trustsim(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m trustsim ARGS`` in the checkout (a subprocess: a sweep's launcher is part of the subject)."""
    return cli("trustsim", *args, env=env)


analysis = analysis_cli  # ``python -m analysis ARGS``, in this process


def manifests(sweep: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted(sweep.glob("*/manifest.json"))]


@pytest.fixture(scope="session")
def offline_sweep(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    def build(root: Path) -> str:
        sweep = root / "sweep"
        proc = trustsim(
            "-m",
            "+experiment=trustcard_offline",
            "card.size=smoke",
            f"hydra.sweep.dir={sweep}",
            "progress=false",
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        return proc.stdout

    root, stdout = built_once(tmp_path_factory, "card_offline", build)
    return root / "sweep", stdout


@pytest.fixture(scope="session")
def fake_model_sweeps(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str, int]:
    """The model battery against the fake server, then the same command again (a new sweep directory)."""

    def build(root: Path) -> tuple[str, int]:
        env = {KEY_ENV: "sk-card-test-not-a-key"}
        with FakeServer(reply=schema_reply) as server:
            common = [
                "-m", "+experiment=trustcard", "card.size=smoke", "model=openai_compatible",
                f"model.api_base={server.api_base}", "model.litellm_model=openai/fake-model",
                f"model.api_key_env={KEY_ENV}", "model.structured_output=schema", "agent.prompt=trustsim",
                f"llm.store_path={root / 'store.sqlite'}", "progress=false",
            ]  # fmt: skip
            first = trustsim(*common, f"hydra.sweep.dir={root / 'first'}", env=env)
            assert first.returncode == 0, first.stderr[-3000:]
            sent_first = len(server.body_digests())
            second = trustsim(*common, f"hydra.sweep.dir={root / 'second'}", env=env)
            assert second.returncode == 0, second.stderr[-3000:]
            sent_again = len(server.body_digests()) - sent_first
        return first.stdout, sent_again

    root, (stdout, sent_again) = built_once(tmp_path_factory, "card_fake", build)
    return root / "first", root / "second", stdout, sent_again
