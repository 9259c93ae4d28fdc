"""The trust-card battery: its plan, the offline and model sweeps, resume, and bad settings."""

from __future__ import annotations

import csv

import pytest

from trustsim import battery

from .conftest import manifests, trustsim


@pytest.mark.slow  # composes every part of every battery size
def test_plan_covers_every_family_and_sizes_grow() -> None:
    plans = {size: battery.plan([f"card.size={size}"], estimate=False) for size in battery.SIZES}
    sizes = {size: sum(p.decisions for p in plan) for size, plan in plans.items()}
    assert sizes["smoke"] < sizes["small"] < sizes["full"]
    full = {p.part: p for p in plans["full"]}
    assert list(full) == list(battery.parts())
    assert {p.game for p in full.values()} == {"escape_room", "reliance", "arena", "trust_game"}
    # the study's run counts: anchor 5 x 10 memoryless games, smooth 5 runs, strike schedules 10 runs
    assert full["anchor"].units.startswith("runs=5 x 10 games")
    assert full["smooth"].units.startswith("runs=5 x 11 games")
    assert all(full[s].units.startswith("runs=10 x 11 games") for s in ("1strike", "mid2strike", "recur"))
    assert full["reliance"].units.endswith("385 main items") and full["reliance"].decisions == 3 * 385
    assert full["tg_trustor"].decisions == full["tg_trustee"].decisions == 100


@pytest.mark.slow  # a whole battery sweep
def test_offline_smoke_battery_runs_every_part_in_one_sweep(offline_sweep) -> None:
    sweep, stdout = offline_sweep
    assert "trust-card battery: size smoke, offline agents: 11 parts" in stdout
    with (sweep / "jobs.csv").open() as f:
        jobs = list(csv.DictReader(f))
    assert len(jobs) == 11 and {j["status"] for j in jobs} == {"complete"}
    found = manifests(sweep)
    parts = {m["config"]["card"]["part"]: m for m in found}
    assert set(parts) == set(battery.parts(offline=True)) == set(battery.parts())
    assert {m["config"]["card"]["size"] for m in found} == {"smoke"}
    plans = {p.part: p for p in battery.plan(["card.size=smoke"], offline=True, estimate=False)}
    for part, m in parts.items():  # planned decisions match what ran (escape room: an upper bound)
        if m["game"] in ("reliance", "trust_game"):
            assert (
                m["counts"]["decisions" if m["game"] == "reliance" else "exchanges"] == plans[part].decisions
            )
    assert parts["anchor"]["config"]["agent"]["name"] == "bayes"
    assert parts["reliance"]["config"]["agent"]["name"] == "oracle"


@pytest.mark.slow  # a whole battery sweep
def test_model_battery_prints_plan_and_resume_sends_nothing(fake_model_sweeps) -> None:
    first, second, stdout, sent_again = fake_model_sweeps
    assert "trust-card battery: size smoke, model openai_compatible: 11 parts" in stdout
    assert "decisions of the agent under test" in stdout
    assert "expected requests" in stdout and "(trustsim.preview)" in stdout  # printed before any job ran
    assert stdout.index("expected requests") < stdout.index("trustsim: card_anchor")
    ran = manifests(first)
    assert len(ran) == 11 and all(m["status"] == "complete" for m in ran)
    assert sum(m["llm"]["calls_sent"] for m in ran) > 0
    again = manifests(second)
    assert len(again) == 11 and all(m["status"] == "complete" for m in again)
    assert sent_again == 0 and sum(m["llm"]["calls_sent"] for m in again) == 0
    assert sum(m["llm"]["cache_hits"] for m in again) == sum(m["llm"]["calls_sent"] for m in ran)


@pytest.mark.slow  # a CLI subprocess per case
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["+experiment=trustcard", "agent=bayes"], "is a multirun"),
        (["-m", "+experiment=trustcard_offline", "card.size=huge"], "card.size"),
    ],
)
def test_bad_battery_commands_fail_at_start(tmp_path, args, message) -> None:
    proc = trustsim(*args, f"hydra.sweep.dir={tmp_path / 's'}", f"hydra.run.dir={tmp_path / 'r'}")
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert message in proc.stderr
    assert not list((tmp_path / "s").glob("*/manifest.json"))
