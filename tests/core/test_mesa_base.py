"""The shared Mesa base: a finished model is freed, and memory stays flat in every game (tracemalloc peak
at N and 10 N games, matches or scenarios)."""

from __future__ import annotations

import asyncio
import gc
import tracemalloc
import weakref
from collections.abc import Callable
from typing import Any

import mesa
import pytest

from trustsim.mesa_base import Agent, PerModelCounters


def test_ids_are_per_model_and_do_not_keep_the_model_alive() -> None:
    class Probe(Agent):
        pass

    class Other(Agent):
        pass

    model = mesa.Model(seed=1)
    ids = [Probe(model).unique_id, Other(model).unique_id, Probe(model).unique_id]
    assert ids == [1, 2, 3]
    assert Probe(mesa.Model(seed=2)).unique_id == 1
    ref = weakref.ref(model)
    del model
    gc.collect()
    assert ref() is None
    assert all(m is not ref() for m in mesa.Agent._ids)


def test_plain_mesa_agents_would_keep_models_alive() -> None:
    """The leak this base fixes (if Mesa ever fixes it, this test says so and the base can go)."""
    model = mesa.Model(seed=1)
    mesa.Agent(model)
    ref = weakref.ref(model)
    del model
    gc.collect()
    assert ref() is not None
    del mesa.Agent._ids[ref()]
    gc.collect()
    assert ref() is None


def test_counters_forget_finished_models() -> None:
    counters = PerModelCounters()
    models = [mesa.Model(seed=i) for i in range(5)]
    assert [next(counters[m]) for m in models] == [1] * 5 and next(counters[models[0]]) == 2
    del models
    gc.collect()
    assert len(counters) == 0


# -- every game ----------------------------------------------------------------------------------------
def _escape_room() -> tuple[Callable[[int], Any], type]:
    from agents.escape_room.partner import ScriptedPartner
    from agents.escape_room.scripted import Consensus
    from games.escape_room.model import EscapeRoomModel, Seat
    from tests.escape_room.helpers import make_options, start_all

    options = make_options("TTTFFTTTTTT")
    policies: dict[str, Any] = {s: Consensus(memory="none") for s in "ABC"}
    policies["D"] = ScriptedPartner()
    start_all(policies, 0)

    def play(i: int) -> Any:
        game = i % len(options.d_correct) + 1
        model = EscapeRoomModel(seed=i, game=game, options=options, policies=policies, partner_puzzle=4)
        asyncio.run(model.play())
        return model

    return play, Seat


def _arena() -> tuple[Callable[[int], Any], type]:
    from agents.arena.scripted import RandomPlayer, TitForTat
    from games.arena.model import ArenaModel, PlayerAgent
    from games.arena.rules import Payoffs
    from trustsim.horizon import Horizon

    def play(i: int) -> Any:
        model = ArenaModel(
            seed=i, players=(TitForTat(), RandomPlayer()), payoffs=Payoffs(), horizon=Horizon(20)
        )
        model.play()
        return model

    return play, PlayerAgent


def _reliance() -> tuple[Callable[[int], Any], type]:
    from agents.reliance.oracle import OracleAgent
    from games.reliance.items import Item
    from games.reliance.library import default_library
    from games.reliance.model import DecisionMaker, RelianceModel, Services
    from trustsim.seeding import Seeder

    lib = default_library()
    sid = "worked_example"
    scn, sol = lib.scenario(sid), lib.solution(sid)

    def play(i: int) -> Any:
        model = RelianceModel(
            seed=i,
            item=Item(sid, "main", scn),
            item_index=i,
            solution=sol,
            policy=OracleAgent(),
            feedback=Seeder(f"t{i}"),
            show_posterior=False,
            services=Services(),
            base_row={"run_id": "r", "session": 0, "set": "main", "agent": "oracle", "model": "scripted"},
        )
        asyncio.run(model.play())
        return model

    return play, DecisionMaker


def _trust_game() -> tuple[Callable[[int], Any], type]:
    from agents.trust_game.scripted import Fair
    from games.trust_game.model import RoleAgent, TrustGameModel
    from games.trust_game.rules import Stakes
    from trustsim.horizon import Horizon

    def play(i: int) -> Any:
        players = [(Fair(), Fair()) for _ in range(4)]
        model = TrustGameModel(seed=i, players=players, stakes=Stakes(), horizon=Horizon(5))
        model.play()
        return model

    return play, RoleAgent


GC_EVERY = 5
GAMES = {
    "escape_room": (_escape_room, 15),
    "arena": (_arena, 15),
    "reliance": (_reliance, 15),
    "trust_game": (_trust_game, 15),
}


def _peak(play: Callable[[int], Any], n: int, start: int) -> int:
    """Traced peak while playing ``n`` more models (each dropped when done; a full collection every
    ``GC_EVERY`` models, the same at N and 10 N, so cyclic garbage does not blur the measure)."""
    tracemalloc.reset_peak()
    for i in range(start, start + n):
        play(i)
        if (i - start) % GC_EVERY == GC_EVERY - 1:
            gc.collect()
    return tracemalloc.get_traced_memory()[1]


@pytest.mark.parametrize("game", sorted(GAMES))
def test_every_game_agent_uses_the_base_and_frees_its_model(game: str) -> None:
    play, agent_cls = GAMES[game][0]()
    assert issubclass(agent_cls, Agent), (
        f"{game}: {agent_cls.__name__} must derive from trustsim.mesa_base.Agent"
    )
    ref = weakref.ref(play(0))
    gc.collect()
    assert ref() is None, f"{game}: a finished model is still referenced"


@pytest.mark.slow
@pytest.mark.parametrize("game", sorted(GAMES))
def test_memory_stays_flat(game: str) -> None:
    build, n = GAMES[game]
    play, _ = build()
    play(0)  # imports, caches, first-use allocations
    gc.collect()
    tracemalloc.start()
    try:
        small = _peak(play, n, 1)
        large = _peak(play, 10 * n, 1 + n)
    finally:
        tracemalloc.stop()
    # A model kept alive per game costs tens of KiB: 9 N more of them would add megabytes.
    assert large < 1.5 * small + 64 * 1024, f"{game}: peak {small} B at N={n}, {large} B at 10 N"
