"""Every shell command shown in README.md and docs/*.md runs as written (offline ones; the rest are skipped
with a stated reason).

Commands come from fenced ``bash`` blocks (continuation lines joined, comment lines dropped). Each document
gets its own scratch workspace — a folder with links to the checkout's code, configs and ``.venv`` and a few
quick offline runs under ``outputs/`` — and its commands run there in document order with ``.venv/bin``
first on ``PATH``, so a command may use what an earlier one wrote and nothing lands in the checkout.

What is skipped and why is the visible table ``SKIP_RULES`` below (first matching rule wins): commands
that need an API key or a model server, runs of the embedded language model (minutes each), ``make``
targets (they rebuild ``.venv`` or run this suite), benchmarks, long-running servers. ``SLOW_RULES`` (the
offline sweeps) and repeats of a command already run for an earlier document run only with
``TRUSTSIM_DOC_COMMANDS=all``.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCUMENTS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
ESCAPE_ROOM_PRESETS = "smooth|1strike|2strike|3strike|mid2strike|recur|anchor|anchor_dwrong"
SKIP_RULES: list[tuple[str, str]] = [
    # (regular expression searched in the command, without its comment; reason it is not run here)
    (r"^make (run|bench)\b", "make run/bench: minutes of embedded-model runs or benchmarks"),
    (r"^make test\b", "make test runs this test suite itself"),
    (r"^make\b", "make targets reinstall .venv when pyproject.toml is newer than it (CI runs ruff directly)"),
    (r"\bpip install\b", "installs packages (network)"),
    (r"[A-Z][A-Z0-9_]*_API_KEY=", "needs an API key and network"),
    # a preview (preview=true) sends nothing and needs no key or server: it runs
    # (analysis commands read files; `analysis plan --where model=gpt-5.1` sends nothing)
    (
        r"^(?!.*\bpreview=true\b)(?!python -m analysis\b).*\bmodel=\S*(gpt|claude|gemini)",
        "needs an API key and network",
    ),
    (r"\bmodel=(openai_compatible|vllm|ollama)\b", "needs a running model server"),
    (r"\bhydra/launcher=submitit_slurm\b", "needs a SLURM cluster"),
    (r"\btrustsim\.llm\.fake_server\b", "starts a server that runs until stopped"),
    (r"\s--serve\b", "serves the site until stopped"),
    (r"\btrustsim\.extract\b", "runs an extractor model over many texts (embedded: minutes; API: a key)"),
    (r"\bextracted/", "reads the output of trustsim.extract (skipped above)"),
    (
        r"^(?!.*\bpreview=true\b).*\bagent=llm\b",
        "plays the embedded language model (minutes per run on 2 cores)",
    ),
    (r"\bgame\.(trustor|trustee)=llm\b", "plays the embedded language model (minutes per run on 2 cores)"),
    (
        rf"^python -m trustsim (?!.*\b(agent|preview)=)(?:\S+ )*\+experiment=({ESCAPE_ROOM_PRESETS})(\s|$)",
        "the escape-room presets default to agent=llm on the embedded model (5-7 min)",
    ),
    (
        r"^python -m trustsim -m \+experiment=trustcard\s",
        "the trust-card battery plays a language model (minutes)",
    ),
    (r"tests/benchmarks/", "a benchmark (minutes; prints numbers)"),
    (r"^sqlite3\b", "reads the request store of an LLM run"),
    (r"^python -m trustsim\.store_cli\b", "reads or prunes the request store of an LLM run"),
    (r"^(?!.*\bpreview=true\b).*\+plan=", "runs a plan's jobs (its models need API keys)"),
    (
        r"^inspect (eval|eval-set|eval-retry|score)\b(?!.*--model mockllm/)",
        "an Inspect eval of a real model: needs an API key and network",
    ),
    (r"^inspect view\b", "serves Inspect's log viewer until stopped"),
    (r"\b(logs_card|card_runs)\b", "reads the trust-card eval of a real model (skipped above)"),
]
if importlib.util.find_spec("inspect_ai") is None and not os.environ.get("CI"):  # CI installs the extra
    SKIP_RULES.append(
        (r"^inspect\b|\bfrom-inspect\b|\binspect_", "inspect-ai is not installed (make setup installs it)")
    )
SLOW_RULES: list[tuple[str, str]] = [
    # offline but long (about a minute each on 2 busy cores): run only with TRUSTSIM_DOC_COMMANDS=all
    (r"^python -m trustsim -m .*agent=bayes", "a sweep of 20-40 offline jobs (about a minute)"),
    (
        r"^python -m analysis plan --reference (?!.*--where).*--model",
        "prices all 21 reference cells (a minute or two)",
    ),
    (
        r"^python -m analysis yardstick --reference",
        "scores all 1,786 reference games with the exact model and its Monte Carlo check (a minute or two)",
    ),
]
RUN_ALL = os.environ.get("TRUSTSIM_DOC_COMMANDS") == "all"
SEED_RUNS = [
    # quick offline runs every workspace starts with, so analysis commands have input
    ["+experiment=mid2strike", "agent=bayes"],
    ["+experiment=reliance", "agent=oracle", "game.limit=5"],
    ["+experiment=ipd"],
]
TIMEOUT_S = 240


@dataclass(frozen=True)
class Command:
    """One shell command of a document."""

    doc: Path
    line: int
    text: str

    @property
    def name(self) -> str:
        return f"{self.doc.relative_to(REPO)}:{self.line}: {self.text[:70]}"


def strip_comment(line: str) -> str:
    """The line without a trailing ``# comment`` (a ``#`` outside quotes, at a word start)."""
    quote = ""
    for i, ch in enumerate(line):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip()
    return line.rstrip()


def extract_commands(doc: Path) -> list[Command]:
    """Commands of the fenced ``bash``/``sh``/``shell`` blocks of one Markdown file."""
    out: list[Command] = []
    lines = doc.read_text(encoding="utf-8").splitlines()
    fence: str | None = None
    pending, start = "", 0
    for no, raw in enumerate(lines, start=1):
        stripped = raw.strip()
        if fence is None:
            m = re.match(r"^(```+|~~~+)\s*(\w*)", stripped)
            if m:
                fence = m.group(1) if m.group(2) in ("bash", "sh", "shell") else "skip:" + m.group(1)
            continue
        if stripped.startswith(fence.removeprefix("skip:")) and not stripped.strip("`~"):
            fence = None
            continue
        if fence.startswith("skip:"):
            continue
        text = strip_comment(stripped)
        if not pending:
            start = no
        if text.endswith("\\"):
            pending += text[:-1].rstrip() + " "
            continue
        text = (pending + text).strip()
        pending = ""
        if text:
            out.append(Command(doc, start, text))
    return out


def skip_reason(cmd: Command) -> str | None:
    """The reason of the first matching rule in SKIP_RULES (and SLOW_RULES unless TRUSTSIM_DOC_COMMANDS=all),
    or None when the command runs here."""
    for pattern, reason in [*SKIP_RULES, *([] if RUN_ALL else SLOW_RULES)]:
        if re.search(pattern, cmd.text):
            return reason + (
                "" if (pattern, reason) in SKIP_RULES else "; set TRUSTSIM_DOC_COMMANDS=all to run it"
            )
    return None


ALL = [c for doc in DOCUMENTS for c in extract_commands(doc)]
FIRST: dict[str, Command] = {}
for _c in ALL:
    FIRST.setdefault(_c.text, _c)


def _env(cache: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("CI", None)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    env["TRUSTSIM_CACHE"] = str(cache)
    return env


def _link_checkout(ws: Path) -> None:
    for item in REPO.iterdir():
        if item.name in (".git", "outputs") or item.name.startswith(("report", "extracted")):
            continue
        (ws / item.name).symlink_to(item, target_is_directory=item.is_dir())
    venv = Path(sys.prefix)
    if not (ws / ".venv").exists() and (venv / "bin" / "python").exists():
        (ws / ".venv").symlink_to(venv, target_is_directory=True)


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``outputs/`` with the seed runs, made once and copied into every workspace."""
    ws = tmp_path_factory.mktemp("seed")
    _link_checkout(ws)
    cache = tmp_path_factory.getbasetemp() / "trustsim-cache"
    for i, overrides in enumerate(SEED_RUNS):
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "trustsim",
                *overrides,
                f"hydra.run.dir=outputs/runs/seed/{i}",
                "progress=false",
            ],
            cwd=ws,
            env=_env(cache),
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
    return ws / "outputs"


_WORKSPACES: dict[Path, Path] = {}


@pytest.fixture
def workspace(seeded: Path, tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Path:
    """The scratch workspace of the command's document (one per document, shared by its commands)."""
    doc: Path = request.node.callspec.params["cmd"].doc
    if doc not in _WORKSPACES:
        ws = tmp_path_factory.mktemp(doc.stem)
        _link_checkout(ws)
        shutil.copytree(seeded, ws / "outputs", symlinks=True)
        _WORKSPACES[doc] = ws
    return _WORKSPACES[doc]


@pytest.mark.slow  # every offline command of every document, each in its own shell
@pytest.mark.parametrize("cmd", ALL, ids=[c.name for c in ALL])
def test_command_runs_as_written(
    cmd: Command, workspace: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    reason = skip_reason(cmd)
    if reason:
        pytest.skip(reason)
    first = FIRST[cmd.text]
    if first is not cmd and not RUN_ALL:
        pytest.skip(f"the same command as {first.doc.relative_to(REPO)}:{first.line} (run there)")
    t0 = time.perf_counter()
    proc = subprocess.run(
        ["bash", "-c", cmd.text],
        cwd=workspace,
        env=_env(tmp_path_factory.getbasetemp() / "trustsim-cache"),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    took = time.perf_counter() - t0
    assert proc.returncode == 0, (
        f"{cmd.name}\nexit {proc.returncode} after {took:.1f} s\n--- stdout\n{proc.stdout[-3000:]}"
        f"\n--- stderr\n{proc.stderr[-3000:]}"
    )
    assert "Traceback (most recent call last)" not in proc.stderr, proc.stderr[-3000:]


def test_extraction_finds_commands_in_every_document() -> None:
    for doc in DOCUMENTS:
        text = doc.read_text(encoding="utf-8")
        if "```bash" in text:
            assert extract_commands(doc), doc
    runnable = [c for c in ALL if skip_reason(c) is None]
    assert len(runnable) >= 15, "almost every documented command is skipped: check SKIP_RULES"


def test_extractor_joins_continuations_and_drops_comments(tmp_path: Path) -> None:
    doc = tmp_path / "x.md"
    doc.write_text(
        "text\n```bash\n# a comment\npython -m a b \\\n    c=1   # why\necho 'x # y'\n```\n"
        '```json\n{"not": "a command"}\n```\n```bash\nls\n```\n',
        encoding="utf-8",
    )
    assert [(c.line, c.text) for c in extract_commands(doc)] == [
        (4, "python -m a b c=1"),
        (6, "echo 'x # y'"),
        (12, "ls"),
    ]


@pytest.mark.parametrize(
    ("text", "skipped"),
    [
        ("make run", True),
        ("python -m trustsim +experiment=mid2strike", True),
        ("python -m trustsim +experiment=mid2strike agent=bayes", False),
        (
            "python -m trustsim -m '+experiment=glob(*strike)' agent=bayes,consensus seed='range(5)'",
            not RUN_ALL,
        ),
        ("python -m trustsim +experiment=reliance agent=oracle", False),
        ("python -m trustsim +experiment=ipd agent=llm model=smollm2", True),
        ("OPENAI_API_KEY=... python -m trustsim +experiment=1strike agent=llm model=gpt-5.1", True),
        ("python -m analysis trust --reference --out report/", False),
        ("python -m analysis view outputs/runs --out site/ --serve 8000", True),
        ("inspect eval trustsim/escape_room -T runs=5 --model openai/gpt-5.1", True),
        (
            "inspect eval trustsim/escape_room --model mockllm/model",
            importlib.util.find_spec("inspect_ai") is None,
        ),
        ("inspect view --log-dir logs_card", True),
        (
            "python -m trustsim -m +experiment=smooth,1strike model=gpt-5.1 seed='range(5)' preview=true",
            False,
        ),
        ("python -m trustsim +experiment=ipd agent=llm model=smollm2 preview=true", False),
        ("python -m trustsim +experiment=smooth preview=true", False),
        ("python -m trustsim -m +plan=outputs/plan/plan.csv seed=1", True),
        ("python -m trustsim -m +plan=outputs/plan/plan.csv preview=true", False),
        ("python -m analysis plan --reference --measure volume --width 0.25 --model gpt-5.1", not RUN_ALL),
        (
            "python -m analysis plan --reference --measure volume --where model=gpt-5.1 --width 1 --model own",
            False,
        ),
    ],
)
def test_skip_rules(text: str, skipped: bool) -> None:
    assert (skip_reason(Command(REPO / "README.md", 1, text)) is not None) is skipped
