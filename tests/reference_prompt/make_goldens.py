"""Capture golden requests from the reference study's own code (run by hand; the goldens are committed).

    python tests/reference_prompt/make_goldens.py --reference /path/to/Escape-room-v2

``--reference`` is a checkout of https://github.com/cyjabc2020/Escape-room-v2 at 74f0fd1 (its code is not
part of this repository). Its dependencies come from PyPI and are already in trustsim's environment
(openai, python-dotenv, pandas, numpy).

Steps:

1. trustsim plays ``+experiment=mid2strike agent=llm model=gpt-5.4-mini game.own_answer=llm
   game.verifier=llm`` (11 games, seed 0) against the fake OpenAI server answering with the scripted
   model in ``policy.py``; its events give each game's puzzles and the no-volunteer victims.
2. The reference runner (``run_experiment.run_experiment``) plays the same 11 games with the study's
   GPT-5.4-mini settings (direct OpenAI path, effort high, persistent ``max_allowed`` memory, window 100,
   3,000 tokens; D a dummy with the mid2strike schedule) against the same fake server, with its random
   draws replaced by trustsim's (the puzzles of each game; the eliminated seat). The OpenAI SDK is pointed
   at the fake server with ``OPENAI_BASE_URL``.
3. Every request body the reference sent is written as a digest; three whole bodies are kept as goldens
   (game 1 round 1; game 4 round 2, after D's wrong capsule opened a conflict; game 11 round 1, a long
   transcript), with seat A's event list at game 11 and the reference's own context window over it.

The ``study_default`` scenario repeats mid2strike with the study's default memory (``master_settings.py``:
``max_allowed`` context, ``evolving`` reflection; trustsim ``memory=transcript_reflection``) and keeps its
digests only (``--scenario study_default`` runs that one alone).

The two runs must agree on every game's outcome (checked here): the scripted model answers from the
request text alone, so equal requests give equal games.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))

from tests.reference_prompt.policy import reply  # noqa: E402
from trustsim.llm.fake_server import FakeServer  # noqa: E402

SEED = 0
COMMON_ARGS = ["agent=llm", "model=gpt-5.4-mini", "game.own_answer=llm", "game.verifier=llm", f"seed={SEED}"]
MID2STRIKE = [True] * 3 + [False] * 2 + [True] * 6
SCENARIOS = {
    # name: (trustsim overrides, reference games, D correct per game, reference context, reference reflection)
    "mid2strike": (["+experiment=mid2strike"], 11, MID2STRIKE, "max_allowed", "none"),
    "anchor": (["+experiment=anchor", "runs=1"], 10, [True] * 10, "current_game_only", "none"),
    # the study's default memory (master_settings.py): max_allowed context with the evolving reflection
    "study_default": (
        ["+experiment=mid2strike", "memory=transcript_reflection"],
        11,
        MID2STRIKE,
        "max_allowed",
        "evolving",
    ),
}
GOLDEN_STATES = {"g01_r1_A": (1, 1, "A"), "g04_r2": (4, 2, None), "g11_r1_A": (11, 1, "A")}


def digest(body: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def trustsim_args(scenario: str) -> list[str]:
    return [*SCENARIOS[scenario][0], *COMMON_ARGS]


def run_trustsim(api_base: str, work: Path, scenario: str) -> Path:
    run_dir = work / f"trustsim_{scenario}"
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "OPENAI_API_KEY": "sk-golden-dummy"}
    cmd = [
        sys.executable,
        "-m",
        "trustsim",
        *trustsim_args(scenario),
        f"+model.api_base={api_base}",
        f"llm.store_path={work / scenario}.sqlite",
        f"hydra.run.dir={run_dir}",
    ]
    subprocess.run(cmd, check=True, cwd=ROOT, env=env)
    return run_dir


def trustsim_world(run_dir: Path) -> tuple[dict[int, dict[str, Any]], dict[tuple[int, int], str]]:
    games: dict[int, dict[str, Any]] = {}
    victims: dict[tuple[int, int], str] = {}
    for line in (run_dir / "events.jsonl").read_text().splitlines():
        e = json.loads(line)
        if e.get("type") == "game_start":
            games[e["game"]] = e["puzzles"]
        elif e.get("type") == "death" and e.get("cause") == "no_volunteer":
            victims[(e["game"], e["round"])] = e["seat"]
    return games, victims


def settings(log_dir: Path, scenario: str) -> dict[str, Any]:
    """The study's settings file for GPT-5.4 mini (settings/ablation_d_schedule/*gpt5_mini*, and
    settings/baseline_memoryless/gpt5_mini_dcorrect.json for the anchor)."""
    _, games, d_correct, mode, reflection = SCENARIOS[scenario]
    model = "openai:gpt-5.4-mini-2026-03-17"
    persist = mode == "max_allowed"
    mem = {"mode": mode, "window": 100, "reflection": reflection, "persist_across_games": persist}
    return {
        "experiment_name": f"golden_{scenario}_gpt5_mini",
        "game_settings": {"num_players": 4, "num_games": games, "max_rounds_per_game": None,
                          "question_sets": ["basic_arithmetic.csv"]},
        "player_models": [model, model, model, "dummy"],
        "reasoning_effort_config": {"A": "high", "B": "high", "C": "high", "D": "none"},
        "memory_config": {"A": mem, "B": mem, "C": mem,
                          "D": {**mem, "mode": "current_game_only", "reflection": "none"}},
        "dummy_config": {"D": {"correctness_list": d_correct}},
        "output_settings": {"save_logs": True, "log_directory": str(log_dir), "print_progress": True},
    }  # fmt: skip


def run_reference(
    reference: Path, api_base: str, srv: FakeServer, work: Path, world: Any, scenario: str
) -> dict[str, Any]:
    """Run the reference runner with trustsim's draws; return what the goldens need."""
    games, victims = world
    code = reference / "code"
    # The reference's packages (games, agents, utils) shadow trustsim's of the same names.
    for name in [m for m in sys.modules if m.split(".")[0] in ("games", "agents", "utils", "run_experiment")]:
        del sys.modules[name]
    # Its packages have no __init__.py: a regular package of the same name anywhere on the path would win.
    sys.path[:] = [str(code / "src")] + [p for p in sys.path if Path(p or ".").resolve() != ROOT]
    os.chdir(code)
    os.environ.update(OPENAI_BASE_URL=api_base, OPENAI_API_KEY="sk-golden-dummy")
    import run_experiment  # the reference's runner
    from utils.question_bank import Question

    from games import escape_room as ref_game

    state: dict[str, Any] = {"game": 0, "round": 0, "marks": {}, "snapshot": None}
    real_sample, real_choice = random.sample, random.choice

    def sample(population: Any, k: int) -> Any:
        if k == 4 and population and isinstance(population[0], Question):
            state["game"] += 1
            g = games[state["game"]]
            by_seat = {p["owner"]: (p["text"], str(p["answer"])) for p in g.values()}
            return [Question(by_seat[s][0], by_seat[s][1]) for s in "ABCD"]
        return real_sample(population, k)

    def choice(seq: Any) -> Any:
        if isinstance(seq, list) and seq and all(isinstance(s, str) and len(s) == 1 for s in seq):
            return victims[(state["game"], state["round"])]
        return real_choice(seq)

    real_setup = ref_game.EscapeRoomGame.setup_game

    def setup_game(self: Any, *args: Any, **kwargs: Any) -> Any:
        agents = kwargs.get("persistent_agents") or {}
        if "A" in agents:
            state["marks"][state["game"] + 1] = len(agents["A"].memory)
        else:
            state["marks"][state["game"] + 1] = 0
        return real_setup(self, *args, **kwargs)

    real_decision = ref_game.EscapeRoomGame._get_agent_decision

    def get_decision(self: Any, agent_id: str) -> Any:
        state["round"] = self.moderator.round_number
        if (state["game"], state["round"], agent_id) == (11, 1, "A"):
            agent = self.agents["A"]
            state["snapshot"] = {"events": list(agent.memory), "context": agent.get_context()}
        return real_decision(self, agent_id)

    def tagged_reply(body: dict[str, Any]) -> str:
        body_tags.append((state["game"], state["round"]))
        return reply(body)

    body_tags: list[tuple[int, int]] = []
    srv.reply = tagged_reply
    srv.requests.clear()
    random.sample, random.choice = sample, choice
    ref_game.EscapeRoomGame.setup_game = setup_game
    ref_game.EscapeRoomGame._get_agent_decision = get_decision
    try:
        path = work / f"settings_{scenario}.json"
        path.write_text(json.dumps(settings(work / f"reference_{scenario}", scenario)))
        run_experiment.run_experiment(str(path))
    finally:
        random.sample, random.choice = real_sample, real_choice
    return {"requests": list(srv.requests), "tags": body_tags, "marks": state["marks"], **state}


def outcomes_trustsim(run_dir: Path) -> list[str]:
    import csv

    rows = list(csv.DictReader((run_dir / "games.csv").open()))
    return [
        {"escaped": "SUCCESS", "all_dead": "ALL_DEAD", "max_rounds": "MAX_ROUNDS"}[r["outcome"]] for r in rows
    ]


def outcomes_reference(work: Path, scenario: str) -> list[str]:
    import csv

    summary = next((work / f"reference_{scenario}").rglob("game_data_summary.csv"))
    return [r["outcome"] for r in csv.DictReader(summary.open())]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reference", type=Path, required=True, help="checkout of cyjabc2020/Escape-room-v2")
    ap.add_argument("--out", type=Path, default=HERE / "goldens")
    ap.add_argument("--scenario", action="append", choices=sorted(SCENARIOS), help="default: all")
    args = ap.parse_args()
    reference = args.reference.resolve()
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    cwd = os.getcwd()
    for scenario in args.scenario or SCENARIOS:
        os.chdir(cwd)
        with tempfile.TemporaryDirectory() as tmp, FakeServer(reply=reply) as srv:
            work = Path(tmp)
            run_dir = run_trustsim(srv.api_base, work, scenario)
            trustsim_requests = list(srv.requests)
            world = trustsim_world(run_dir)
            ts_outcomes = outcomes_trustsim(run_dir)
            ref = run_reference(reference, srv.api_base, srv, work, world, scenario)
            ref_outcomes = outcomes_reference(work, scenario)
        print(f"[{scenario}] trustsim outcomes: ", ts_outcomes)
        print(f"[{scenario}] reference outcomes:", ref_outcomes)
        if ts_outcomes != ref_outcomes:
            raise SystemExit("the two runs played different games: the goldens would be meaningless")
        bodies = ref["requests"]
        digests = sorted(digest(b) for b in bodies)
        (out / f"digests_{scenario}.json").write_text(json.dumps(digests, indent=0) + "\n")
        same = sorted(digest(b) for b in trustsim_requests) == digests
        print(
            f"[{scenario}] {len(bodies)} reference requests; trustsim sent {len(trustsim_requests)}; same: {same}"
        )
        if scenario == "mid2strike":
            write_states(out, ref)


def write_states(out: Path, ref: dict[str, Any]) -> None:
    bodies = ref["requests"]
    for name, (game, rnd, seat) in GOLDEN_STATES.items():
        found = None
        for body, (g, r) in zip(bodies, ref["tags"], strict=True):
            text = body["messages"][0]["content"]
            mine = seat is None or f"You are Player {seat} " in text
            if g == game and r == rnd and "You are Player" in text and mine:
                found = body
                if seat is not None or "\U0001f195" in text:
                    break
        if found is None:
            raise SystemExit(f"no request for golden state {name}")
        (out / f"{name}.json").write_text(json.dumps(found, indent=1, ensure_ascii=False) + "\n")
    snap = ref["snapshot"]
    (out / "memory_g11_A.json").write_text(
        json.dumps({"game_starts": ref["marks"], **snap}, indent=1, ensure_ascii=False) + "\n"
    )


if __name__ == "__main__":
    main()
