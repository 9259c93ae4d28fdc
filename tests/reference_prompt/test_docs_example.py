"""docs/prompts.md shows both prompt styles for one state: the texts there are what the agent sends."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np

from agents.escape_room.llm_agent import LLMAgent
from games.escape_room.options import EscapeRoomGame
from games.escape_room.policy import Services
from games.escape_room.types import CapsuleView, Observation, Puzzle, RoundReport, VerificationReport
from trustsim.llm import ChatRequest, ChatResponse

DOC = Path(__file__).resolve().parents[2] / "docs" / "prompts.md"
MODEL = {"name": "gpt-5.4-mini", "litellm_model": "openai/gpt-5.4-mini-2026-03-17"}


class Client:
    def __init__(self) -> None:
        self.requests: list[ChatRequest] = []

    async def complete(self, req: ChatRequest) -> ChatResponse:
        self.requests.append(req)
        text = "DECISION: Verify: Q4\nREASONING: Q4 is unverified."
        if req.messages[0]["role"] == "system":
            text = '{"action": "verify", "target": 4, "reasoning": "Q4 is unverified."}'
        return ChatResponse(text, 1, 1, 0.0, False, 0.0)


def caps(q4: tuple[CapsuleView, ...]) -> dict[int, tuple[CapsuleView, ...]]:
    base = {k: (CapsuleView(f"Q{k}-{s}", (s,)),) for k, s in zip((1, 2, 3), "ABC", strict=True)}
    return {**base, 4: q4}


def obs(rnd: int, capsules: dict, coins: dict, alive: tuple[str, ...]) -> Observation:
    return Observation(
        seat="B", game=1, round=rnd, max_rounds=4, puzzle=Puzzle(2, "What is 54 ÷ 6?", 9), coins=coins,
        alive=alive, capsules=capsules, owners={1: "A", 2: "B", 3: "C", 4: "D"}, history=(),
    )  # fmt: skip


def example(style: str) -> list[dict[str, str]]:
    client = Client()
    agent = LLMAgent(prompt=style)
    agent.start_session(
        "B", np.random.default_rng(0), Services(llm=client, model=MODEL, game=EscapeRoomGame(coins=4))
    )
    first = obs(1, caps((CapsuleView("Q4-D", ("D",)),)), dict.fromkeys("ABCD", 4), ("A", "B", "C", "D"))
    agent.start_game(first)
    asyncio.run(agent.adecide(first))
    report = RoundReport(
        game=1, round=1, actions={"A": "Verify: Q4", "B": "Verify: Q4", "C": "Pass", "D": "Pass"},
        verifications=(VerificationReport("A", 4, "Q4-A", True), VerificationReport("B", 4, "Q4-A", False)),
        volunteers=(), chosen_volunteer=None, password=None, password_correct=None,
        deaths=(("C", "no_volunteer"),), escaped=False,
    )  # fmt: skip
    agent.observe(report)
    q4 = (CapsuleView("Q4-D", ("D",)), CapsuleView("Q4-A", ("A", "B")))
    second = obs(2, caps(q4), {"A": 3, "B": 3, "C": 4, "D": 4}, ("A", "B", "D"))
    asyncio.run(agent.adecide(second))
    return client.requests[-1].messages


def test_reference_example_in_docs_is_what_the_agent_sends() -> None:
    (message,) = example("reference")
    assert message["role"] == "user"
    assert f"```text\n{message['content']}```" in DOC.read_text()


def test_trustsim_example_in_docs_is_what_the_agent_sends() -> None:
    system, user = example("trustsim")
    shown = f"--- system\n{system['content']}\n--- user\n{user['content']}\n```"
    assert shown in DOC.read_text()
