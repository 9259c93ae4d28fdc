"""The "add a game" checklist tried for real (docs/architecture.md, "Adding a game").

A two-player public-goods game lives only in ``tests/public_goods``: its package in ``plugin/`` (found through
the ``trustsim.plugins`` and ``trustsim.analysis`` entry points of the distribution installed there) and its
configs in ``conf/`` (found through Hydra's search path, which its example job names). It passes the contract
tests every game inherits, and it shows in the viewer and on the trust card by its own declaration.
"""

from __future__ import annotations

import importlib
import inspect
import json
import sys
from pathlib import Path

import pytest

from analysis import family_registry as analysis_families
from tests.contract import test_contract, test_units
from trustsim import api, contract

PLUGIN = Path(__file__).resolve().parent / "plugin"
GAME = "public_goods"
CONTRACT_TESTS = [
    *(f for n, f in inspect.getmembers(test_contract, inspect.isfunction) if n.startswith("test_")),
    test_units.test_every_game_declares_its_unit_of_play,
    test_units.test_the_unit_of_play_matches_what_the_game_writes,
]
CONTRACT_TESTS = [f for f in CONTRACT_TESTS if "game" in inspect.signature(f).parameters]


@pytest.fixture(scope="module", autouse=True)
def installed():
    """The plugin installed (its directory on ``sys.path``, as pip would put it) and the registries discovered
    again; everything it registered is removed afterwards."""
    sys.path.insert(0, str(PLUGIN))
    importlib.invalidate_caches()
    for registry in (contract, analysis_families):
        with registry._LOCK:
            registry._discovered = False
        registry.discover()
    try:
        yield
    finally:
        with contract._LOCK:
            contract._GAMES.pop(GAME, None)
            contract._AGENTS.pop(GAME, None)
        analysis_families.unregister_family(GAME)
        sys.path.remove(str(PLUGIN))


@pytest.fixture(scope="module")
def played(tmp_path_factory) -> Path:
    """The game's example job, played once."""
    result = api.run(
        None, [*contract.games()[GAME].example, "progress=false"], tmp_path_factory.mktemp("pg") / "run"
    )
    assert result.status == "complete", result.failure
    return result.run_dir


def test_the_plugin_is_found_and_touches_nothing_else():
    spec = contract.games()[GAME]
    assert Path(inspect.getfile(spec.run)).is_relative_to(PLUGIN)
    assert set(contract.agents_for(GAME)) == {"pg_conditional", "pg_free_rider", "pg_full"}
    assert GAME in analysis_families.families()
    repo = PLUGIN.parents[2]
    assert not (repo / "conf" / "game" / f"{GAME}.yaml").exists() and not (repo / "games" / GAME).exists()


@pytest.mark.slow
@pytest.mark.parametrize("check", CONTRACT_TESTS, ids=lambda f: f.__name__)
def test_the_game_passes_the_contract(check, request, tmp_path, played):
    """Every contract test (tests/contract) with this game as its parameter."""
    wanted = inspect.signature(check).parameters
    given = {"game": GAME, "tmp_path": tmp_path, "runs": {GAME: played}}
    if "monkeypatch" in wanted:
        given["monkeypatch"] = request.getfixturevalue("monkeypatch")
    check(**{name: given[name] for name in wanted})


def test_the_run_reads_as_its_rules_say(played):
    manifest = json.loads((played / "manifest.json").read_text())
    assert manifest["counts"]["groups"] == 2 * 4 and manifest["cell"]["agent"] == "pg_conditional"
    rounds = api.load(played).table("rounds")
    # two conditional cooperators open with half and then copy each other: half the endowment throughout
    assert set(rounds["contribution"]) == {5} and set(rounds["payoff"]) == {10 - 5 + 1.5 * 10 / 2}


def test_it_shows_in_the_viewer_by_its_declaration(played, tmp_path):
    from analysis.view.site import build_site

    stats = build_site([played], tmp_path / "viewer")
    assert stats.runs == 1 and not stats.problems
    index = (tmp_path / "viewer" / "data" / "index.js").read_text()
    assert f'"family":"{GAME}"' in index
    (page,) = (tmp_path / "viewer" / "data" / "r").glob("*/run.js")
    data = json.loads(page.read_text().split(",", 1)[1].rsplit(")", 1)[0])
    (table,) = data["tables"]
    assert (
        table["name"] == "rounds" and table["total"] == 2 * 4 * 5 * 2 and "contribution" in table["columns"]
    )


def test_it_has_a_section_on_the_trust_card_by_its_declaration(played, tmp_path):
    from analysis.card.collect import collect
    from analysis.card.render import card_html, cards_table, figure_keys

    assert "pg_contribution" in figure_keys()
    (subject,) = collect([played], resamples=200)
    figure = subject.figures["pg_contribution"]
    assert figure.status == "ok" and figure.estimate == pytest.approx(0.5)
    html = card_html(subject, generated="now")
    assert f'data-family="{GAME}"' in html and "Public goods" in html
    assert cards_table([subject]).iloc[0]["pg_contribution"] == pytest.approx(0.5)
