"""The reliance policy interface the game offers its agents: a policy sees a :class:`DecisionView` and returns
a :class:`Choice`. Agents subclass :class:`ReliancePolicy` and register in ``agents/reliance/__init__.py``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from games.reliance.rules import Scenario
from games.reliance.solver import Node


@dataclass(frozen=True)
class DecisionView:
    """What a policy is shown at one decision.

    Attributes:
        scenario: The scenario (its public rules).
        stage: 1-based stage.
        actions: Admissible action names.
        history: (action, observation key) of every earlier stage, in order.
        prompt: The rendered decision prompt for this stage (rules on the first turn, feedback after).
        first_turn: True when this is the first message of the conversation.
        posterior: Exact posterior per channel (belief-support variant), else None.
        reference: The exact reference node. Only reference policies (oracle, myopic) may use it.
        p_exact: Exact P(job success) per admissible action that carries out a job.
    """

    scenario: Scenario
    stage: int
    actions: tuple[str, ...]
    history: tuple[tuple[str, str], ...]
    prompt: str
    first_turn: bool
    posterior: dict[str, dict[str, float]] | None
    reference: Node
    p_exact: dict[str, float] = field(default_factory=dict)


@dataclass
class Choice:
    """A policy's answer. ``action`` is None when the answer is empty, ambiguous or illegal."""

    action: str | None
    confidence: float | None = None
    reasoning: str = ""
    raw: str = ""
    invalid_reason: str = ""
    latency_s: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached: bool = False
    request_key: str | None = None  # the request-store key of a model's answer (the viewer shows the request)

    @property
    def valid(self) -> bool:
        return self.action is not None


class ReliancePolicy:
    """Base class. One instance plays one scenario conversation at a time (``start_item`` resets it)."""

    name: ClassVar[str] = "base"
    classifier: ClassVar[dict[str, Any]] = {"uses_llm": False, "uses_reference": False, "stochastic": False}
    is_async: ClassVar[bool] = False

    def __init__(self) -> None:
        self.rng: np.random.Generator = np.random.default_rng(0)
        self.services: Any = None

    @property
    def model_name(self) -> str:
        return "scripted"

    def start_item(self, rng: np.random.Generator, services: Any = None) -> None:
        """A fresh conversation (scenario or pair side) begins."""
        self.rng = rng
        self.services = services

    def decide(self, view: DecisionView) -> Choice:
        raise NotImplementedError

    async def adecide(self, view: DecisionView) -> Choice:
        return self.decide(view)
