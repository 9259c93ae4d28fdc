"""Drills of the command line's preflight (trustsim/preflight.py): what Hydra would compose is checked before
anything is written.

- a key in a model config file (``--config-dir``, ``hydra.searchpath``), in a header or in ``api_base``'s
  query string: exit 2 naming the key, no run directory, no sweep directory, no ``multirun.yaml``;
- group options from ``--config-dir`` and ``hydra.searchpath`` are known options (the pre-check resolves them
  through Hydra's search path, as the run does);
- the documented custom header ``+model.headers_env.X-Api-Key=MY_GATEWAY_KEY`` runs and sends the header;
- ``name=../../../x`` is refused with the default run directory: nothing lands outside ``outputs/``;
- ``.hydra/`` is trustsim's record: config.yaml, hydra.yaml, overrides.yaml, written from the redacted config.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from trustsim.llm.fake_server import FakeServer

from .helpers import REPO, TRACEBACK, cli_env, manifest, run_batch

BAYES = ["agent=bayes", "game.games=1"]
KEY = "sk-cnryPreflightKey0123456789"


def _model_file(folder: Path, name: str, **extra: object) -> Path:
    """A model option ``name`` under ``folder/model/`` (the openai_compatible preset plus ``extra``)."""
    base = yaml.safe_load((REPO / "conf/model/openai_compatible.yaml").read_text())
    (folder / "model").mkdir(parents=True, exist_ok=True)
    path = folder / "model" / f"{name}.yaml"
    path.write_text(yaml.safe_dump({**base, "name": name, **extra}))
    return path


@pytest.fixture(scope="module")
def drill(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("preflight")
    plugin = tmp / "plugin_conf"
    _model_file(plugin, "gateway", api_base="http://127.0.0.1:9/v1")
    evil = tmp / "evil_conf"
    _model_file(evil, "evil_header", params={"extra_headers": {"Authorization": f"Bearer {KEY}"}})
    _model_file(evil, "evil_custom", params={"extra_headers": {"X-Trace": KEY}})
    _model_file(evil, "evil_url", api_base="https://gw.example/v1?api_key=cnryQueryValue42")
    llm = ["agent=llm", "game.games=1", "llm.max_retries=0", f"llm.store_path={tmp / 'store.sqlite'}"]
    with FakeServer() as server:
        cases = {
            "header_in_file": ["--config-dir", str(evil), *llm, "model=evil_header"],
            "custom_header_in_file": ["--config-dir", str(evil), *llm, "model=evil_custom"],
            "query_in_file": ["--config-dir", str(evil), *llm, "model=evil_url"],
            "searchpath_header": [*llm, f"hydra.searchpath=[file://{evil}]", "model=evil_header"],
            "sweep_header_in_file": [
                "-m",
                "--config-dir",
                str(evil),
                *llm,
                "model=openai_compatible,evil_header",
            ],
            "config_dir_option": ["--config-dir", str(plugin), *BAYES, "model=gateway"],
            "searchpath_option": [*BAYES, f"hydra.searchpath=[file://{plugin}]", "model=gateway"],
            "config_dir_unknown": ["--config-dir", str(plugin), *BAYES, "model=gatewy"],
            "headers_env": [
                *llm,
                "model=openai_compatible",
                f"model.api_base={server.api_base}",
                "+model.headers_env.X-Api-Key=MY_GATEWAY_KEY",
            ],
            "record": [*BAYES, "+model.params.user=someone", "seed=4"],
        }
        batch = []
        for name, args in cases.items():
            dirs = [f"hydra.run.dir={tmp / name}", f"hydra.sweep.dir={tmp / name}"]
            batch.append({"args": [*args, *dirs], "set": {"MY_GATEWAY_KEY": "cnryGatewayValue77"}})
        batch.append({"args": [*BAYES, "name=../../../escaped"], "set": {}})
        batch.append({"args": [*BAYES, "name=a/b"], "set": {}})
        out = run_batch(batch, tmp / "cwd")
        sent = list(server.headers)
    results = dict(zip([*cases, "name_escape", "name_nested"], out, strict=True))
    return {"tmp": tmp, "results": results, "sent": sent}


@pytest.mark.slow
@pytest.mark.parametrize(
    ("case", "key"),
    [
        ("header_in_file", "model.params.extra_headers.Authorization"),
        ("custom_header_in_file", "model.params.extra_headers.X-Trace"),
        ("query_in_file", "model.api_base"),
        ("searchpath_header", "model.params.extra_headers.Authorization"),
        ("sweep_header_in_file", "model.params.extra_headers.Authorization"),
    ],
)
def test_a_key_in_a_config_file_is_refused_before_anything_is_written(drill, case, key) -> None:
    res = drill["results"][case]
    assert res["code"] == 2, res["stderr"][-2000:]
    assert (
        f"config error at '{key}'" in res["stderr"] and "refused before anything was written" in res["stderr"]
    )
    assert TRACEBACK not in res["stderr"]
    assert not (drill["tmp"] / case).exists()  # no run directory, no .hydra/, no sweep dir, no multirun.yaml
    assert KEY not in res["stderr"] + res["stdout"] and "cnryQueryValue42" not in res["stderr"]


def test_options_on_hydras_search_path_are_known(drill) -> None:
    for case in ("config_dir_option", "searchpath_option"):
        res = drill["results"][case]
        assert res["code"] == 0, (case, res["stderr"][-2000:])
        assert manifest(drill["tmp"] / case)["status"] == "complete"
    res = drill["results"]["config_dir_unknown"]
    assert res["code"] == 2 and "did you mean model=gateway?" in res["stderr"], res["stderr"]


def test_the_documented_custom_header_runs_and_sends_the_header(drill) -> None:
    res = drill["results"]["headers_env"]
    assert res["code"] == 0, res["stderr"][-2000:]
    assert drill["sent"] and all(h.get("x-api-key") == "cnryGatewayValue77" for h in drill["sent"])
    run_dir = drill["tmp"] / "headers_env"
    m = manifest(run_dir)
    assert m["config"]["model"]["headers_env"] == {"X-Api-Key": "MY_GATEWAY_KEY"}  # a name, kept
    assert "- +model.headers_env.X-Api-Key=MY_GATEWAY_KEY" in (run_dir / ".hydra/overrides.yaml").read_text()
    for path in run_dir.rglob("*"):
        assert not path.is_file() or b"cnryGatewayValue77" not in path.read_bytes(), path


def test_a_name_is_a_label_not_a_path(drill) -> None:
    for case in ("name_escape", "name_nested"):
        res = drill["results"][case]
        assert res["code"] == 2 and "config error at 'name'" in res["stderr"], res["stderr"]
    assert not (drill["tmp"] / "escaped").exists() and not list(drill["tmp"].rglob("*escaped*"))
    assert not (drill["tmp"] / "cwd" / "outputs" / "runs").exists()


def test_hydra_record_is_written_by_trustsim(drill) -> None:
    run_dir = drill["tmp"] / "record"
    assert drill["results"]["record"]["code"] == 0
    record = run_dir / ".hydra"
    assert sorted(p.name for p in record.iterdir()) == ["config.yaml", "hydra.yaml", "overrides.yaml"]
    config = yaml.safe_load((record / "config.yaml").read_text())
    assert config["seed"] == 4 and config["name"] == manifest(run_dir)["config"]["name"]
    hydra = yaml.safe_load((record / "hydra.yaml").read_text())["hydra"]
    assert hydra["output_subdir"] is None and hydra["runtime"]["choices"]["agent"] == "bayes"
    assert yaml.safe_load((record / "overrides.yaml").read_text())[-1] == "seed=4"


BYPASS = "import sys; sys.argv = ['trustsim', *sys.argv[1:]]; from trustsim.__main__ import _job; _job()"


@pytest.mark.parametrize("launcher", ["trustsim", "basic"])
def test_past_the_preflight_nothing_written_holds_the_key(tmp_path, launcher) -> None:
    """Defence in depth: Hydra's entry called without the preflight (as a library caller might), a sweep over a
    model file that carries a key. trustsim's launcher refuses the sweep before any job starts (exit 2, naming
    each job and the key); under the basic launcher each job refuses it (exit 2, failed manifest). Neither
    ``multirun.yaml`` (the sweeper saves a redacted copy) nor a job's ``.hydra/`` (trustsim's record) nor any
    other file holds it."""
    conf = tmp_path / "conf"
    _model_file(conf, "leaky", params={"extra_headers": {"X-Trace": KEY}, "api_token": "cnryBypassTok9"})
    sweep = tmp_path / "sweep"
    args = ["-m", "--config-dir", str(conf), "agent=llm", "game.games=1", "model=leaky", "seed=1,2",
            f"llm.store_path={tmp_path / 's.sqlite'}", f"hydra.sweep.dir={sweep}",
            f"hydra/launcher={launcher}"]  # fmt: skip
    done = subprocess.run([sys.executable, "-c", BYPASS, *args], cwd=tmp_path, env=cli_env(), capture_output=True,
                          text=True, timeout=300)  # fmt: skip
    assert TRACEBACK not in done.stderr, done.stderr[-3000:]
    jobs = sorted(p for p in sweep.iterdir() if p.is_dir())
    assert (sweep / "multirun.yaml").is_file()
    if launcher == "trustsim":
        assert done.returncode == 2 and not jobs
        assert done.stderr.count("config error at 'model.params") == 2, done.stderr[-3000:]
        assert KEY not in done.stderr and "cnryBypassTok9" not in done.stderr
    else:
        assert len(jobs) == 2
    for job in jobs:
        m = manifest(job)
        assert m["status"] == "failed" and "model.params" in m["failure"]["reason"]
        assert (job / ".hydra" / "config.yaml").is_file()
    for path in [p for p in sweep.rglob("*") if p.is_file()]:
        data = path.read_bytes()
        assert KEY.encode() not in data and b"cnryBypassTok9" not in data, path
