"""Preview (``preview=true``): nothing is sent, no key is needed, no store row or run directory is written,
and the requests, tokens and cost it reports are the real run's."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from trustsim import api
from trustsim.llm.fake_server import FakeServer
from trustsim.preview import Estimate, estimate
from trustsim.preview.lengths import MIN_OBSERVED, REASONED_ANSWER_TOKENS, AnswerLengths, Central
from trustsim.preview.report import lines as preview_lines

REPO = Path(__file__).resolve().parents[2]
PRICE = "model.price={input_per_mtok: 2.0, output_per_mtok: 8.0}"


def fake_model(server: FakeServer, *extra: str) -> list[str]:
    """A model config pointing at the counting fake server, with a declared price."""
    return ["agent=llm", "model=openai_compatible", f"model.api_base={server.api_base}", f"+{PRICE}", *extra]


def rows(store: Path) -> int:
    if not store.exists():
        return 0
    with sqlite3.connect(store) as conn:
        return int(conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])


def test_preview_sends_nothing_to_a_counting_server_and_prices_the_requests(tmp_path: Path) -> None:
    store = tmp_path / "store.sqlite"
    with FakeServer() as server:
        cfg = api.compose(
            "mid2strike",
            [*fake_model(server), "game.games=2", f"llm.store_path={store}", "agent.prompt=trustsim"],
        )
        est = estimate(cfg)
        assert server.requests == []  # the counting server received nothing
    assert not store.exists()  # no store created, no row written
    assert est.decisions > 0 and est.cached == 0 and est.to_send == est.requests
    assert est.invalid == 0
    assert est.prompt_tokens > 0 and est.completion_tokens > 0
    assert est.game_length == "range"
    # The study preset asks as the study did (game.own_answer/verifier auto -> llm for this model): each
    # seat solves its own puzzle once per game, and in the longest play every decision verifies.
    assert est.requests == est.decisions + 2 * 3 + est.decisions
    assert est.requests_low == 2 * 3 + 2 * 3  # an escape in each game's first round: one decision each
    assert est.cost_high == pytest.approx((est.prompt_tokens * 2.0 + est.completion_tokens_high * 8.0) / 1e6)
    assert est.cost_low == pytest.approx(
        (est.prompt_tokens_low * 2.0 + est.completion_tokens_low * 8.0) / 1e6
    )
    assert 0 < est.cost_low < est.cost_high


def test_preview_of_a_finished_run_finds_every_request_in_the_store_and_touches_no_row(
    tmp_path: Path,
) -> None:
    store = tmp_path / "store.sqlite"
    with FakeServer() as server:
        overrides = [*fake_model(server), "game.games=2", f"llm.store_path={store}", "agent.prompt=trustsim"]
        result = api.run("mid2strike", overrides, tmp_path / "run")
        assert result.exit_code == 0
        sent = len(server.requests)
        stored, mtime = rows(store), store.stat().st_mtime_ns
        est = estimate(api.compose("mid2strike", overrides))
        assert len(server.requests) == sent  # nothing more was sent
    assert rows(store) == stored and store.stat().st_mtime_ns == mtime
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    calls = manifest["llm"]["calls_sent"] + manifest["llm"]["cache_hits"]
    # The preview follows the stored answers, so it asks exactly the run's requests, all of them free.
    assert est.requests == calls and est.cached == manifest["llm"]["calls_sent"]
    assert est.to_send == 0 and est.prompt_tokens == 0 and est.cost_high == 0


def test_the_stand_in_renders_the_real_requests(tmp_path: Path) -> None:
    """The preview's requests have the keys of the real run's: a run after the preview finds none stored,
    and a second preview after the run finds every one of the first preview's requests stored."""
    store = tmp_path / "store.sqlite"
    with FakeServer(
        reply='{"action": "pass", "confidence": {"Q1": 1.0, "Q2": 1.0, "Q3": 1.0, "Q4": 1.0}, '
        '"reasoning": "preview stand-in answer"}'
    ) as server:
        overrides = [
            *fake_model(server, "model.structured_output=schema"),
            "game.games=1",
            f"llm.store_path={store}",
            "agent.prompt=trustsim",
            "game.verifier=exact",  # the server passes, as the stand-in then does (own answers still asked)
        ]
        before = estimate(api.compose("mid2strike", overrides))
        assert api.run("mid2strike", overrides, tmp_path / "run").exit_code == 0
        after = estimate(api.compose("mid2strike", overrides))
    assert after.cached == len(server.requests) > 0
    assert before.requests == after.requests


@pytest.mark.parametrize(
    ("experiment", "overrides"),
    [
        ("mid2strike", ["game.games=2", "agent.prompt=reference"]),
        (
            "mid2strike",
            [
                "game.games=2",
                "agent.prompt=trustsim",
                "model.structured_output=schema",
                "game.verifier=llm",
                "game.own_answer=llm",
                "memory=reflection",
            ],
        ),
        ("reliance_pairs", []),
        ("ipd", []),
        ("trust_game", ["game.pairs=4"]),
        ("trust_game_repeated", ["game.pairs=2", "model.structured_output=json_object"]),
    ],
)
def test_every_game_family_previews_with_valid_stand_in_answers(
    tmp_path: Path, experiment: str, overrides: list[str]
) -> None:
    with FakeServer() as server:
        cfg = api.compose(
            experiment, [*fake_model(server), f"llm.store_path={tmp_path / 's.sqlite'}", *overrides]
        )
        est = estimate(cfg)
        assert server.requests == []
    assert est.requests > 0 and est.decisions > 0 and est.invalid == 0
    assert est.prompt_tokens > 0 and est.cost_high is not None and est.cost_high > 0
    if experiment.startswith("trust_game"):  # the responder is asked only when something was sent
        assert est.game_length == "range" and 0 < est.requests_low < est.requests
    elif experiment in ("reliance_pairs", "ipd"):
        assert est.game_length == "fixed" and est.requests_low == est.requests


def test_a_local_model_costs_nothing_and_a_model_without_price_is_unknown(tmp_path: Path) -> None:
    store = f"llm.store_path={tmp_path / 's.sqlite'}"
    local = estimate(api.compose("mid2strike", ["agent=llm", "model=smollm2", "game.games=1", store]))
    assert local.requests > 0 and local.cost_low == local.cost_high == 0.0
    unpriced = estimate(api.compose("mid2strike", ["agent=llm", "model=ollama", "game.games=1", store]))
    assert unpriced.requests > 0 and unpriced.cost_low is None and unpriced.cost_high is None
    assert "set model.price" in unpriced.prices[0]
    scripted = estimate(api.compose("mid2strike", ["agent=bayes"]))
    assert scripted.requests == 0 and scripted.cost_high == 0.0


def test_the_embedded_model_gets_an_expected_time_from_its_measured_pace(tmp_path: Path) -> None:
    from trustsim.llm.store import RequestStore, StoredResponse

    path = tmp_path / "s.sqlite"
    cfg = api.compose("mid2strike", ["agent=llm", "model=smollm2", "game.games=1", f"llm.store_path={path}"])
    first = estimate(cfg)
    assert first.local_s is None and "no answers of it in the request store" in first.local_pace[0]
    assert any(line.startswith("  time on the embedded model unknown") for line in preview_lines(first))
    store = RequestStore(path)
    for i, seconds in enumerate([1.0, 2.0, 3.0, 4.0, 100.0]):  # another job's answers: median 3 s per call
        response = StoredResponse("x", 10, 5, 0.0, seconds)
        store.put(f"k{i}", model="trustsim/smollm2", api_base=None, sample=0, purpose="p", canonical="{}",
                  response=response)  # fmt: skip
    store.close()
    timed = estimate(cfg)
    assert timed.to_send == first.to_send > 0
    assert timed.local_s == pytest.approx(3.0 * timed.to_send)
    assert "3.00 s per call, the median of 5 stored answers" in timed.local_pace[0]
    shown = next(line for line in preview_lines(timed) if "time on the embedded model" in line)
    assert "≈ " in shown and "one call after another" in shown
    priced = estimate(
        api.compose("mid2strike", ["agent=llm", "model=gpt-5.1", "game.games=1", f"llm.store_path={path}"])
    )
    assert priced.local_pace == () and not any("embedded" in line for line in preview_lines(priced))


def test_estimates_add_up_and_survive_json() -> None:
    a = Estimate(
        decisions=3,
        requests=4,
        cached=1,
        prompt_tokens=10,
        completion_tokens=5,
        cost_low=0.1,
        cost_high=0.5,
        game_length="range",
        prices=("a",),
    )
    b = Estimate(
        decisions=1,
        requests=1,
        prompt_tokens=2,
        completion_tokens=1,
        cost_low=None,
        cost_high=None,
        prices=("b",),
    )
    total = a + b
    assert (total.decisions, total.requests, total.cached, total.jobs) == (4, 5, 1, 2)
    assert total.cost_low is None and total.game_length == "range" and total.prices == ("a", "b")
    assert Estimate.from_dict(json.loads(json.dumps(a.to_dict()))) == a


@pytest.mark.slow
def test_cli_preview_of_a_sweep_needs_no_key_and_writes_no_run(tmp_path: Path) -> None:
    """The issue's command, cut to two seeds: no key set, nothing sent, a total printed."""
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "trustsim",
            "-m",
            "+experiment=smooth,1strike",
            "model=gpt-5.1",
            "seed=range(2)",
            "preview=true",
            "progress=false",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = proc.stdout
    assert "trustsim: preview (nothing sent) of" not in out  # no block per job: the sweep ends in one table
    assert "preview total over 4 jobs" in out
    table = out[out.index("  job ") :].splitlines()
    assert len(table) == 1 + 4 + 1 and table[-1].lstrip().startswith("total ")
    assert all("seed=" in row for row in table[1:5]) and len(out.splitlines()) < 25
    assert "cost ≈ $" in out and " expected ($" in out
    assert "price gpt-5.1: $1.25 in / $10 out / $0.125 cache read per Mtok" in out
    assert "with prompt caching: ≈ $" in out
    assert "requests 264–" in out  # at the least 4 jobs × 11 games × 3 seats × (a decision + an own answer)
    outputs = tmp_path / "outputs"
    assert sorted(p.name for p in outputs.iterdir()) == ["previews"]  # no runs, sweeps or request store
    jobs = list(outputs.glob("previews/*/*/*/preview.json"))
    assert len(jobs) == 4
    assert all(json.loads(p.read_text())["status"] == "complete" for p in jobs)
    (sweep,) = outputs.glob("previews/*/*/preview.json")
    total = json.loads(sweep.read_text())
    assert total["jobs"] == 4 and total["failed"] == [] and total["estimate"]["jobs"] == 4
    assert total["estimate"]["requests"] == sum(
        json.loads(p.read_text())["estimate"]["requests"] for p in jobs
    )


def test_a_stand_in_answer_the_game_cannot_use_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from games.escape_room.plan import STANDIN_ANSWERS
    from trustsim.preview.report import lines

    monkeypatch.setitem(STANDIN_ANSWERS, "decision", "no decision line here")
    cfg = api.compose(
        "mid2strike",
        [
            "agent=llm",
            "model=gpt-5.1",
            "agent.prompt=reference",
            "game.games=1",
            "game.verifier=exact",  # else the longest play's stand-in verifies instead of the patched answer
            f"llm.store_path={tmp_path / 's'}",
        ],
    )
    est = estimate(cfg)
    assert est.invalid == est.decisions > 0  # the game recorded every stand-in decision invalid
    assert any("refused" in line for line in lines(est))


def test_a_mixed_team_previews_each_seats_model_and_sends_to_neither_server(tmp_path: Path) -> None:
    with FakeServer() as first, FakeServer() as second:
        cfg = api.compose(
            "mixed_team",
            [
                *fake_model(first),
                "game.games=1",
                f"llm.store_path={tmp_path / 's.sqlite'}",
                f"+game.seats.B.model={{preset: openai_compatible, name: second, api_base: '{second.api_base}', "
                "price: {input_per_mtok: 100, output_per_mtok: 100}}",
            ],
        )
        est = estimate(cfg)
        assert first.requests == [] and second.requests == []
    assert est.requests > 0 and est.invalid == 0
    assert len(est.prices) == 2 and any(p.startswith("second: $100 in") for p in est.prices)


def test_preview_reads_every_shard_of_a_store_directory_and_claims_none(tmp_path: Path) -> None:
    shards = tmp_path / "shards"
    with FakeServer() as server:
        overrides = [
            *fake_model(server),
            "game.games=1",
            f"++llm.store_dir={shards}",
            "agent.prompt=trustsim",
        ]
        assert api.run("mid2strike", overrides, tmp_path / "run").exit_code == 0
        sent = len(server.requests)
        before = sorted((p.name, p.stat().st_mtime_ns) for p in shards.iterdir())
        est = estimate(api.compose("mid2strike", overrides))
        assert len(server.requests) == sent
    assert (
        sorted((p.name, p.stat().st_mtime_ns) for p in shards.iterdir()) == before
    )  # no shard, lock or write
    assert est.cached == sent > 0 and est.to_send == 0


@pytest.mark.parametrize("prompt", ["reference", "trustsim"])
def test_with_an_llm_verifier_every_decision_may_verify(tmp_path: Path, prompt: str) -> None:
    """Upper figures: the stand-in verifies at every decision (one verification call each); lower figures:
    an escape in round 1 and no verification call."""
    cfg = api.compose(
        "mid2strike",
        [
            "agent=llm",
            "model=gpt-5.1",
            f"agent.prompt={prompt}",
            "game.games=2",
            "game.verifier=llm",
            "game.own_answer=exact",
            f"llm.store_path={tmp_path / 's'}",
        ],
    )
    est = estimate(cfg)
    assert est.invalid == 0
    assert est.requests == 2 * est.decisions  # each decision's verification call
    assert est.requests_low == est.decisions_low == 2 * 3


def test_the_expected_cost_uses_the_stores_median_answer_after_a_pilot(tmp_path: Path) -> None:
    """Before any answer of the model is stored the expected completion tokens come from the priors; after a
    one-game pilot, from the median stored answer of the model and purpose (trustsim.preview.lengths)."""
    store = tmp_path / "store.sqlite"
    with FakeServer() as server:
        common = [
            *fake_model(server),
            f"llm.store_path={store}",
            "agent.prompt=trustsim",
            "game.own_answer=exact",  # decisions only: the pilot measures their lengths
            "game.verifier=exact",
        ]
        before = estimate(api.compose("mid2strike", [*common, "seed=1", "game.games=2"]))
        assert before.completion_basis == ("prior",) and before.completion_observed == 0
        assert before.cost_low < before.cost_estimate < before.cost_high
        assert api.run("mid2strike", [*common, "game.games=1"], tmp_path / "pilot").exit_code == 0
        after = estimate(api.compose("mid2strike", [*common, "seed=1", "game.games=2"]))
        assert server.requests  # the pilot's
    with sqlite3.connect(store) as conn:
        stored = sorted(r[0] for r in conn.execute("SELECT completion_tokens FROM responses"))
    median = (stored[(len(stored) - 1) // 2] + stored[len(stored) // 2]) / 2
    assert after.completion_basis == ("observed",) and after.completion_observed == after.to_send > 0
    assert after.completion_tokens == after.to_send * round(median)
    assert after.cost_estimate == pytest.approx((after.prompt_tokens * 2 + after.completion_tokens * 8) / 1e6)
    assert "the median answer of this model in the request store" in "\n".join(preview_lines(after))


def test_expected_answer_lengths_stay_between_the_stand_in_and_the_bound() -> None:
    class Store:
        def __init__(self, lengths: list[int]) -> None:
            self.lengths = lengths

        def answer_lengths(self, model: str, purpose: str) -> list[int]:
            return self.lengths if purpose == "decision" else []

    few = AnswerLengths(Store([900] * (MIN_OBSERVED - 1)), short=frozenset({"solve"}))  # too few: the prior
    few._reasons["m"] = True
    assert few.central("m", "decision", 10, 16384) == Central(REASONED_ANSWER_TOKENS, "prior", True)
    assert few.central("m", "decision", 10, 50) == Central(50, "prior", False)  # the cap bounds it
    assert few.central("m", "solve", 2, 50) == Central(2, "prior", True)  # declared short: the stand-in's
    assert few.central("m", "other", 2, 16384) == Central(REASONED_ANSWER_TOKENS, "prior", True)
    many = AnswerLengths(Store([100, 300, 900, 2000, 4000]))
    assert many.central("m", "decision", 10, 16384) == Central(900, "observed", False)
    assert many.central("m", "decision", 10, 500) == Central(500, "observed", False)
    assert AnswerLengths(None).central("m", "reflection", 5, 100) == Central(100, "prior", False)


def test_a_game_declares_its_short_answers_for_the_preview() -> None:
    from games.escape_room.options import EscapeRoomGame
    from trustsim.contract import game_spec
    from trustsim.preview.report import play_for

    play = play_for(game_spec("escape_room"), EscapeRoomGame())
    assert play.short == {"solve", "own_answer"}  # puzzle answers are numbers; reflections are reasoned


@pytest.mark.slow
def test_preview_prices_the_providers_prompt_caches(tmp_path: Path) -> None:
    """OpenAI caches repeated prefixes by itself; Anthropic only the prefix ``model.prompt_cache`` marks."""
    from trustsim.llm.config import parse_model_config
    from trustsim.llm.pricing import price_of
    from trustsim.preview.report import lines

    common = ["agent=llm", "agent.prompt=trustsim", f"llm.store_path={tmp_path / 's.sqlite'}"]
    openai = estimate(api.compose("mid2strike", [*common, "model=gpt-5.1"]))
    price = price_of(parse_model_config(api.compose(None, ["model=gpt-5.1"])["model"]))
    assert openai.cached_tokens > 0 and openai.cache_write_tokens == 0
    assert openai.cost_cached_estimate == pytest.approx(
        price.cost(openai.prompt_tokens, openai.completion_tokens, openai.cached_tokens)
    )
    assert openai.cost_cached_estimate < openai.cost_estimate
    expected = f"≈ ${openai.cost_cached_estimate:.2f} expected"
    assert any(line.startswith(f"  with prompt caching: {expected}") for line in lines(openai))
    plain = estimate(api.compose("mid2strike", [*common, "model=claude-sonnet-4-6"]))
    assert plain.cached_tokens == 0 and plain.cost_cached_high == plain.cost_high
    marked = estimate(
        api.compose("mid2strike", [*common, "model=claude-sonnet-4-6", "+model.prompt_cache=true"])
    )
    assert marked.cached_tokens > 0 and marked.cache_write_tokens > 0
    assert marked.cost_cached_estimate < marked.cost_estimate
