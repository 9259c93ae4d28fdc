"""Secrets drill: canaries in every provider key variable litellm knows and in a custom ``api_key_env``.

It runs the command line through a success path (a run and a sweep), a provider that echoes the key in a 401
and in an answer, a key passed in config (a header, a token param, a key pasted as a variable name, a key in
api_base's query string; in a --config-dir model file: a header value and a query string, as a run and as a
sweep), the documented custom header (``headers_env``: its value is sent, never written), error paths (an unreachable server, a missing variable), a replay, and the analysis of every run directory; then
it reads every byte written (run and sweep directories, Hydra's ``.hydra/`` files and logs, the request
store with its WAL, the analysis output, stdout and stderr) and requires that no canary appears.
"""

from __future__ import annotations

import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from trustsim.llm.fake_server import FakeServer
from trustsim.secrets import is_secret_env

from .helpers import REPO, cli_env, llm_overrides, manifest, run_cli

CUSTOM_ENV = "LLM_AUTH"  # a name that does not look secret: redacted because the model names it
_NAME = re.compile(r"""["']([A-Z][A-Z0-9_]*(?:API_KEY|APIKEY|_KEY|_TOKEN|_SECRET|CREDENTIALS?))["']""")


def litellm_key_variables() -> list[str]:
    """Every key variable named in litellm's source (``OPENAI_API_KEY``, ``HF_TOKEN``, ...)."""
    import litellm

    names: set[str] = set()
    for path in Path(litellm.__file__).parent.rglob("*.py"):
        names.update(_NAME.findall(path.read_text(encoding="utf-8", errors="replace")))
    return sorted(n for n in names if not n.startswith("LITELLM_") and n not in {"USE_LITELLM_PROXY_KEY"})


KEY_VARS = litellm_key_variables()


def _secret_config_dir(folder: Path, key: str, url_key: str) -> Path:
    """A --config-dir with two model options carrying a key: in a header value, in api_base's query string."""
    base = yaml.safe_load((REPO / "conf/model/openai_compatible.yaml").read_text())
    (folder / "model").mkdir()
    leaky = {**base, "params": {"extra_headers": {"Authorization": f"Bearer {key}", "X-Trace": key}}}
    (folder / "model" / "leaky_header.yaml").write_text(yaml.safe_dump({**leaky, "name": "leaky_header"}))
    url = {**base, "name": "leaky_url", "api_base": f"https://gw.example/v1?api_key={url_key}"}
    (folder / "model" / "leaky_url.yaml").write_text(yaml.safe_dump(url))
    return folder


def test_every_litellm_key_variable_is_treated_as_secret() -> None:
    assert len(KEY_VARS) > 100 and {"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"} <= set(KEY_VARS)
    assert [n for n in KEY_VARS if not is_secret_env(n)] == []


@pytest.fixture(scope="module")
def drill(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("secrets")
    canaries = {name: f"cnry{i:04d}Q{name.lower()[:6]}x9" for i, name in enumerate([*KEY_VARS, CUSTOM_ENV])}
    env = dict(canaries)
    header = "cnryHEADERx9z8y7"  # passed on the command line: must be refused before anything is written
    file_key = "sk-cnryFILEKEY0123456789ab"  # in a header value of a model config file
    url_key = "cnryURLQUERYx7y6"  # in api_base's query string (a config file, the command line)
    gateway_value = "cnryGATEWAYv5w4"  # the value of a headers_env variable: sent, never written
    pasted = "CnryPastedKeyAsName77"  # a key pasted where a variable name belongs
    outputs: list[str] = []
    store = tmp / "store.sqlite"

    def cli(args: list[str], name: str, **extra: str) -> subprocess.CompletedProcess[str]:
        done = run_cli([*args, f"hydra.run.dir={tmp / name}"], tmp, **{**env, **extra})
        outputs.extend([done.stdout, done.stderr])
        return done

    with FakeServer() as good:
        base = llm_overrides(good.api_base, store, "game.games=1", key_env=CUSTOM_ENV)
        ok = cli(base, "success")
        sent = [h.get("authorization", "") for h in good.headers]
        replay = cli(base, "replay")
        good.script("keyecho")
        echo_answer = cli([*base, "seed=1"], "echo_answer")
        sweep = run_cli(["-m", *base, "seed=2,3", f"hydra.sweep.dir={tmp / 'sweep'}"], tmp, **env)
        outputs.extend([sweep.stdout, sweep.stderr])
    with FakeServer(mix={"401echo": 1.0}) as bad:
        echo_401 = cli(llm_overrides(bad.api_base, store, "seed=4", key_env=CUSTOM_ENV), "echo_401")
    header_run = cli([*base, f"+model.params.extra_headers.Authorization=Bearer_{header}"], "header")
    token_run = cli([*base, f"+model.params.api_token={header}"], "token")
    pasted_run = cli([*base, f"model.api_key_env={pasted}"], "pasted")
    dead = [
        a if not a.startswith("model.api_base=") else "model.api_base=http://127.0.0.1:9/v1" for a in base
    ]
    unreachable = cli([*dead, "llm.max_retries=1", "seed=5"], "unreachable")
    missing = cli([*base, "model.api_key_env=DRILL_NOT_SET_ANYWHERE", "seed=6"], "missing")
    # Keys in config files (a model option in --config-dir: a header value, an api_base query string), in
    # api_base's query string on the command line, and in a sweep: refused before anything is written.
    conf = _secret_config_dir(tmp_path_factory.mktemp("secret_conf"), file_key, url_key)
    file_run = cli(["--config-dir", str(conf), *base, "model=leaky_header"], "file_header")
    own_base = [a for a in base if not a.startswith("model.api_base=")]  # the file's api_base, not ours
    url_file_run = cli(["--config-dir", str(conf), *own_base, "model=leaky_url"], "file_url")
    file_sweep = run_cli(
        ["-m", "--config-dir", str(conf), *base, "model=openai_compatible,leaky_header",
         f"hydra.sweep.dir={tmp / 'file_sweep'}"],
        tmp,
        **env,
    )  # fmt: skip
    outputs.extend([file_sweep.stdout, file_sweep.stderr])
    query_run = cli([*base, f"model.api_base=http://127.0.0.1:9/v1?key={url_key}"], "query")
    with FakeServer() as gateway:  # the documented custom header: a variable name; its value is a secret
        header_env = cli(
            [
                *llm_overrides(gateway.api_base, store, "seed=7", key_env=CUSTOM_ENV),
                "+model.headers_env.X-Api-Key=DRILL_GATEWAY_HEADER",
            ],
            "header_env",
            DRILL_GATEWAY_HEADER=gateway_value,
        )
        gateway_sent = [h.get("x-api-key", "") for h in gateway.headers]
    analysis = subprocess.run(
        [
            sys.executable,
            "-m",
            "analysis",
            "trust",
            str(tmp),
            "--out",
            str(tmp / "report"),
            "--include-incomplete",
        ],
        cwd=tmp,
        env=cli_env(**env),
        capture_output=True,
        text=True,
        timeout=600,
    )
    outputs.extend([analysis.stdout, analysis.stderr])
    return {
        "tmp": tmp,
        "canaries": {
            **canaries,
            "header": header,
            "pasted": pasted,
            "file_key": file_key,
            "url_key": url_key,
            "gateway": gateway_value,
        },
        "gateway_sent": gateway_sent,
        "outputs": outputs,
        "sent": sent,
        "runs": {
            "success": ok,
            "replay": replay,
            "echo_answer": echo_answer,
            "sweep": sweep,
            "echo_401": echo_401,
            "header": header_run,
            "token": token_run,
            "pasted": pasted_run,
            "unreachable": unreachable,
            "missing": missing,
            "file_header": file_run,
            "file_url": url_file_run,
            "file_sweep": file_sweep,
            "query": query_run,
            "header_env": header_env,
            "analysis": analysis,
        },
    }


@pytest.mark.slow
def test_the_drill_exercised_every_path(drill) -> None:
    runs, tmp = drill["runs"], drill["tmp"]
    assert any(drill["canaries"][CUSTOM_ENV] in h for h in drill["sent"])  # the key was really used
    for name in ("success", "replay", "echo_answer", "sweep"):
        assert runs[name].returncode == 0, (name, runs[name].stderr[-2000:])
    assert manifest(tmp / "replay")["llm"]["calls_sent"] == 0
    assert runs["echo_401"].returncode == 3 and "HTTP 401" in manifest(tmp / "echo_401")["failure"]["reason"]
    assert "***redacted***" in manifest(tmp / "echo_401")["failure"]["reason"]  # the echo was there
    for name in ("header", "token", "pasted", "file_header", "file_url", "file_sweep", "query"):
        assert runs[name].returncode == 2 and not (tmp / name).exists(), (name, runs[name].stderr[-2000:])
        assert "refused before anything was written" in runs[name].stderr, name
    assert runs["header_env"].returncode == 0, runs["header_env"].stderr[-2000:]
    assert drill["gateway_sent"] and set(drill["gateway_sent"]) == {drill["canaries"]["gateway"]}
    assert runs["unreachable"].returncode == 3
    assert runs["missing"].returncode == 2 and "DRILL_NOT_SET_ANYWHERE" in runs["missing"].stderr
    assert (tmp / "sweep").is_dir() and list((tmp / "sweep").rglob("manifest.json"))
    assert list((tmp / "success").rglob(".hydra/*.yaml")) and (tmp / "report").is_dir()
    conn = sqlite3.connect(tmp / "store.sqlite")
    echoed = conn.execute("SELECT COUNT(*) FROM responses WHERE text LIKE '%***redacted***%'").fetchone()[0]
    conn.close()
    assert echoed == 1  # the answer that quoted the key was stored, without it


@pytest.mark.slow  # the drill fixture: every secret path through the CLI
def test_no_canary_in_any_byte_written_or_printed(drill) -> None:
    canaries = drill["canaries"]
    files = [p for p in drill["tmp"].rglob("*") if p.is_file()]
    assert any(p.name.startswith("store.sqlite") for p in files) and len(files) > 30
    pattern = re.compile("|".join(re.escape(v) for v in canaries.values()).encode())
    leaks = []
    for path in files:
        for match in pattern.finditer(path.read_bytes()):
            leaks.append((str(path.relative_to(drill["tmp"])), match.group().decode()))
    for i, text in enumerate(drill["outputs"]):
        for match in pattern.finditer(text.encode()):
            leaks.append((f"output #{i}", match.group().decode()))
    assert leaks == []


@pytest.mark.slow  # the drill fixture: every secret path through the CLI
def test_repo_outputs_untouched(drill) -> None:
    """The drill wrote only under its temporary folder (every path was given explicitly)."""
    assert not (drill["tmp"] / "outputs").exists() or not any(
        (drill["tmp"] / "outputs").rglob("manifest.json")
    )
    assert REPO.is_dir()
