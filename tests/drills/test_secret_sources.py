"""Drills of secrets that reach a run by other ways than a key setting, through the command line's preflight
(in process; one real ``python -m trustsim`` per rule where the process is the subject):

- a variable the config names as a key or header source (``model.api_key_env=LLM_AUTH``, ``headers_env``)
  is a secret from the start, whatever its name: in the name, a run directory, the store path, a sweep value,
  a param, a header read through ``${oc.env:...}``;
- Hydra's own paths (``hydra.run.dir``, ``hydra.sweep.dir``, ``hydra.job.name``) are checked resolved;
- a URL's userinfo and every query value are secrets unless the name is known to be safe, a URL with a space
  is checked too, and a refused URL is never echoed;
- key-shaped text anywhere (a config key name, inside ``litellm_model``, an upper-case key given as a
  variable name, ``--config-name``) is refused before anything is written and never echoed;
- a key variable that holds a word (``volunteer``) or a short value is no key: it is not redacted inside what a
  run writes (that corrupted the events), only as a whole config value, with a warning.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from trustsim import secrets
from trustsim.config import conf_dir
from trustsim.errors import ConfigError
from trustsim.llm.config import parse_model_config
from trustsim.preflight import preflight
from trustsim.rundir.writer import RunRecorder
from trustsim.secrets import REDACTED, redact, redact_text, secret_values, url_problem

from .helpers import REPO, manifest, run_cli

CONF = str(conf_dir())
MAIN = str(REPO / "trustsim" / "__main__.py")
AUTH = "cnryLlmAuth0123456789"  # the value of a variable whose name does not look secret
DEAD = "http://127.0.0.1:9/v1"
LLM = ["agent=llm", "model=openai_compatible", f"model.api_base={DEAD}", "model.api_key_env=LLM_AUTH",
       "game.games=1"]  # fmt: skip
KEY = "sk-cnryShapedKey0123456789abcd"


@pytest.fixture(autouse=True)
def _fresh(monkeypatch) -> None:
    """No key source registered and no warning given yet (both are process-wide), LLM_AUTH set."""
    monkeypatch.setattr(secrets, "_registered", set())
    monkeypatch.setattr(secrets, "_warned", set())
    monkeypatch.setenv("LLM_AUTH", AUTH)


def refusal(argv: list[str], capsys) -> str:
    """The preflight's refusal of ``argv`` (exit 2): its stderr."""
    capsys.readouterr()
    with pytest.raises(SystemExit) as done:
        preflight(argv, CONF, MAIN)
    assert done.value.code == 2
    err = capsys.readouterr().err
    assert "refused before anything was written" in err, err
    return err


def passes(argv: list[str], capsys) -> str:
    capsys.readouterr()
    preflight(argv, CONF, MAIN)
    return capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "key"),
    [
        ([f"name={AUTH}"], "name"),  # name=$LLM_AUTH
        (["name=${oc.env:LLM_AUTH}"], "name"),
        ([f"hydra.run.dir=/tmp/runs/{AUTH}"], "hydra.run.dir"),
        ([f"llm.store_path=/tmp/{AUTH}.sqlite"], "llm.store_path"),
        (["-m", "seed=1,2", f"name=a,{AUTH}"], "name"),  # a sweep value
        ([f"+model.params.extra_body.x={AUTH}"], "model.params.extra_body.x"),
        (["+model.params.extra_headers.X-Gw=${oc.env:GW_HDR}", "+model.headers_env.X-Key=GW_HDR"],
         "model.params.extra_headers.X-Gw"),
    ],
)  # fmt: skip
def test_a_custom_key_variable_is_a_secret_from_the_start(args, key, capsys, monkeypatch) -> None:
    monkeypatch.setenv("GW_HDR", "cnryGatewayHeader987")
    err = refusal([*args, *LLM], capsys)
    assert f"config error at '{key}'" in err, err
    assert AUTH not in err and "cnryGatewayHeader987" not in err


def test_a_key_variable_named_in_a_config_file_is_a_secret_too(tmp_path, capsys) -> None:
    (tmp_path / "model").mkdir()
    base = yaml.safe_load((REPO / "conf/model/openai_compatible.yaml").read_text())
    (tmp_path / "model" / "gw.yaml").write_text(
        yaml.safe_dump({**base, "api_key_env": "LLM_AUTH", "name": "gw"})
    )
    args = ["--config-dir", str(tmp_path), "agent=llm", "model=gw", f"model.api_base={DEAD}"]
    assert "config error at 'name'" in refusal([*args, f"name={AUTH}"], capsys)
    # a sweep whose second model names the variable: the values are checked once every job's sources are known
    sweep = ["-m", "--config-dir", str(tmp_path), "agent=llm", "model=openai_compatible,gw",
             f"model.api_base={DEAD}", f"+model.params.user=a,{AUTH}"]  # fmt: skip
    assert AUTH not in refusal(sweep, capsys)
    assert passes([*args, "name=plain-name"], capsys) == ""  # the variable's name itself is fine


def test_the_command_line_refuses_a_custom_key_in_the_name(tmp_path) -> None:
    """The real command line: ``name=$LLM_AUTH`` exits 2 before a run directory, a store or a line of output
    holds the key."""
    run = tmp_path / "run"
    done = run_cli([*LLM, f"llm.store_path={tmp_path / 's.sqlite'}", f"name={AUTH}", f"hydra.run.dir={run}"],
                   tmp_path, LLM_AUTH=AUTH)  # fmt: skip
    assert done.returncode == 2 and "config error at 'name'" in done.stderr, done.stderr[-2000:]
    assert AUTH not in done.stdout + done.stderr and not run.exists() and not (tmp_path / "s.sqlite").exists()


@pytest.mark.parametrize(
    ("args", "key"),
    [
        (["hydra.run.dir=/tmp/runs/${oc.env:LLM_AUTH}"], "hydra.run.dir"),
        (["hydra.job.name=${oc.env:LLM_AUTH}"], "hydra.job.name"),
        (["-m", "seed=1,2", "hydra.sweep.dir=/tmp/sweeps/${oc.env:LLM_AUTH}"], "hydra.sweep.dir"),
        (["-m", "seed=1,2", "hydra.sweep.subdir=${oc.env:LLM_AUTH}_${hydra.job.num}"], "hydra.sweep.subdir"),
        (["hydra.run.dir=/tmp/runs/${oc.env:OPENAI_API_KEY}", "model.api_key_env=null"], "hydra.run.dir"),
    ],
)
def test_hydra_paths_are_checked_resolved(args, key, capsys, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "cnryOpenAiValue4242")
    err = refusal([*args, *LLM], capsys)
    assert f"config error at '{key}'" in err and AUTH not in err and "cnryOpenAiValue4242" not in err, err


def test_ordinary_paths_pass(capsys, monkeypatch) -> None:
    """No false alarm: a variable that is no secret in a Hydra path, a folder named like a key prefix."""
    monkeypatch.setenv("DRILL_PLAIN_DIR", "plain-folder")
    args = [
        "hydra.run.dir=/tmp/runs/${oc.env:DRILL_PLAIN_DIR}/${name}",
        "llm.store_path=/tmp/hf_models_folder/s.db",
    ]
    assert passes([*LLM, *args], capsys) == ""


@pytest.mark.parametrize(
    "url",
    [
        "https://gw.example/v1?code=abc123",
        "https://gw.example/v1?authkey=abc123",
        "https://bucket.example/v1?X-Amz-Signature=abc123&X-Amz-Date=20260101",
        "https://gw.example/v1?project=p1",  # any name not on the safe list
        "https://gw.example/v1?api-version=sk-abcdefghijklmnopqrstu",  # a safe name with a key for a value
        "https://gw.example/v1?sk-abcdefghijklmnopqrstu",  # a key as a bare name
        "http://user:pw@gw.example/v1?a=b c",  # a space: checked all the same
        "http://user:pw@gw.example/v1\tx",
        "see http://token@gw.example/v1 for details",
        "https://gw.example/v1#state=abc",
    ],
)
def test_url_userinfo_and_query_values_are_secret(url: str) -> None:
    assert url_problem(url, []) is not None


@pytest.mark.parametrize(
    "url",
    ["https://gw.example/v1?api-version=2024-10-21", "http://127.0.0.1:8000/v1", "https://gw.example/v1#docs",
     "see https://example.org/path for details"],
)  # fmt: skip
def test_safe_urls_pass(url: str) -> None:
    assert url_problem(url, []) is None


def test_a_refused_url_is_never_echoed(capsys) -> None:
    for value in (
        "http://user:cnryPw77@gw.example/v1?a=b c",
        "http://gw.example/v1?api-version=1 cnryTail77",
    ):
        err = refusal([*LLM, f"model.api_base={value}"], capsys)
        assert "config error at 'model.api_base'" in err and "cnry" not in err and "gw.example" not in err, (
            err
        )


@pytest.mark.parametrize(
    ("args", "named"),
    [
        ([f"+model.{KEY}=1"], "model.***redacted***"),
        ([f"model.litellm_model=openai/{KEY}"], "model.litellm_model"),
        (["model.api_key_env=AKIAIOSFODNN7CNRYEXAMPLEKEY"], "model.api_key_env"),
        ([f"--config-name={KEY}"], "--config-name"),
        (["--config-name", KEY], "command line"),
        (["-m", "seed=1,2", f"+model.params.{KEY}=1"], "model.params.***redacted***"),
    ],
)
def test_key_shaped_text_is_refused_and_never_echoed(args, named, capsys) -> None:
    err = refusal([*args, *LLM], capsys)
    assert f"config error at '{named}'" in err, err
    assert "cnry" not in err.lower() and "AKIA" not in err


def test_key_shaped_text_is_refused_by_the_model_schema_too() -> None:
    """Outside the command line (``trustsim.api``): the model's schema refuses the same values."""
    base = {"name": "m", "litellm_model": "openai/x", "api_base": DEAD}
    for field, value, key in [
        ("litellm_model", f"openai/{KEY}", "model.litellm_model"),
        ("api_key_env", "AKIAIOSFODNN7CNRYEXAMPLEKEY", "model.api_key_env"),
        ("api_base", "http://gw.example/v1?code=abc", "model.api_base"),
    ]:
        with pytest.raises(ConfigError) as exc:
            parse_model_config({**base, field: value}).check("model")
        assert exc.value.key == key and "CNRY" not in str(exc.value) and KEY not in str(exc.value)
    assert secrets.describe_env_name("AKIAIOSFODNN7CNRYEXAMPLEKEY").startswith("named in model.api_key_env")


def test_the_command_line_writes_nothing_for_a_key_shaped_key_name(tmp_path) -> None:
    run = tmp_path / "run"
    done = run_cli(["agent=bayes", "game.games=1", f"+model.{KEY}=1", f"hydra.run.dir={run}"], tmp_path)
    assert done.returncode == 2 and not run.exists(), done.stderr[-2000:]
    assert KEY not in done.stdout + done.stderr


def test_a_word_is_no_key_and_redacts_only_whole_values(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "volunteer")
    monkeypatch.setenv("DRILL_SHORT_TOKEN", "ab12")
    monkeypatch.setenv("DRILL_REAL_API_KEY", "cnryRealKey0123456789")
    secrets.register_key_sources({"model": {"api_key_env": "ANTHROPIC_API_KEY"}})
    assert secret_values() == ["cnryRealKey0123456789"]  # only a value that can be a key is used inside text
    assert (
        redact_text('"type":"volunteer","cause":"no_volunteer"')
        == '"type":"volunteer","cause":"no_volunteer"'
    )
    record = redact({"model": {"params": {"user": "volunteer", "note": "a volunteer"}}})["model"]["params"]
    assert record == {"user": REDACTED, "note": "a volunteer"}  # a whole config value, nothing inside text
    secrets.warn_weak_keys()
    secrets.warn_weak_keys()  # once per variable
    err = capsys.readouterr().err
    assert err.count("ANTHROPIC_API_KEY does not hold a real API key") == 1 and "volunteer" not in err
    # the event log keeps every word; a real key is still redacted inside text
    rec = RunRecorder(tmp_path)
    rec.event("game_start", session=0, game=1)
    rec.event("decision", action="volunteer", cause="no_volunteer", raw="key cnryRealKey0123456789!")
    rec.close()
    (line,) = [
        json.loads(x) for x in (tmp_path / "events.jsonl").read_text().splitlines() if '"decision"' in x
    ]
    assert (line["action"], line["cause"], line["raw"]) == ("volunteer", "no_volunteer", f"key {REDACTED}!")


@pytest.mark.slow
def test_a_run_with_a_word_for_a_key_keeps_its_events(tmp_path: Path) -> None:
    """The real command line with ``ANTHROPIC_API_KEY=volunteer``: a warning, and the escape room's events
    keep their ``volunteer`` values."""
    run = tmp_path / "run"
    done = run_cli(
        ["agent=bayes", "game.games=1", f"hydra.run.dir={run}"], tmp_path, ANTHROPIC_API_KEY="volunteer"
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "ANTHROPIC_API_KEY does not hold a real API key" in done.stderr
    events = (run / "events.jsonl").read_text()
    assert "no_volunteer" in events and REDACTED not in events and manifest(run)["status"] == "complete"


def test_the_python_api_refuses_a_custom_key_in_the_name(tmp_path) -> None:
    """``trustsim.api.run`` has no preflight: the job's own validation refuses the key (exit 2), and the failed
    record it writes does not hold it."""
    from trustsim.api import run

    args = [
        "agent=bayes",
        "game.games=1",
        "model=openai_compatible",
        "model.api_key_env=LLM_AUTH",
        f"name={AUTH}",
    ]
    result = run(None, args, tmp_path / "run")
    assert result.exit_code == 2 and "config error at 'name'" in result.manifest["failure"]["reason"]
    for path in (p for p in (tmp_path / "run").rglob("*") if p.is_file()):
        assert AUTH.encode() not in path.read_bytes(), path
