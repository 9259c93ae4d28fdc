"""The Mesa model: one conversation (a scenario, or one side of a controlled-history pair).

``await model.collect()`` asks the decision maker; ``model.step()`` resolves one stage: it checks the
answer, draws the stage's outcome and feedback from the generative model with the shared generator of
(scenario, history), moves to the next reference node and records the decision row.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import mesa
import numpy as np

from games.reliance.beliefs import draw, sample_initial, step
from games.reliance.items import Item
from games.reliance.policy import Choice, DecisionView, ReliancePolicy
from games.reliance.solver import Node, Solution
from games.reliance.text import observation_text, posterior_text, rules_text
from trustsim.llm.config import ModelConfig
from trustsim.mesa_base import Agent
from trustsim.seeding import Seeder

INFO_KINDS = ("test", "disclose", "message")


def history_key(history: tuple[tuple[str, str], ...] | list[tuple[str, str]]) -> str:
    """Canonical text of a public history: ``action>observation|action>observation``."""
    return "|".join(f"{a}>{o}" for a, o in history)


@dataclass
class Services:
    """What policies may use: the LLM client, the model config, the replicate index (cache sample)."""

    llm: Any = None  # the job's LLM client (trustsim.llm.LLMClient) or None
    model: ModelConfig | None = None
    sample: int = 0


class DecisionMaker(Agent):
    """The agent under test."""

    def __init__(self, model: RelianceModel, policy: ReliancePolicy) -> None:
        super().__init__(model)
        self.policy = policy


class RelianceModel(mesa.Model):
    """Plays one item; ``await play()`` returns the decision rows."""

    def __init__(
        self,
        *,
        seed: int,
        item: Item,
        item_index: int,
        solution: Solution,
        policy: ReliancePolicy,
        feedback: Seeder,
        show_posterior: bool,
        services: Services,
        base_row: dict[str, Any],
        recorder: Any = None,
        agent_seed: int | None = None,
    ) -> None:
        """``agent_seed``: the policy's own stream (the job's seed tree); None = the model seed."""
        super().__init__(seed=seed)
        self.item = item
        self.item_index = item_index
        self.sol = solution
        self.comp = solution.compiled
        self.scn = solution.scenario
        self.feedback = feedback
        self.show_posterior = show_posterior
        self.recorder = recorder
        self.base_row = base_row
        self.maker = DecisionMaker(self, policy)
        policy.start_item(np.random.default_rng(seed if agent_seed is None else agent_seed), services)
        self.history: list[tuple[str, str]] = list(item.prefix)
        node: Node | None = solution.root
        for a, o in self.history:
            assert node is not None
            node = solution.child(node, a, o)
        if node is None:
            raise ValueError(f"item {item.id}: the fixed history ends the scenario")
        self.node: Node | None = node
        if item.pair is None:
            self.state = sample_initial(self.comp, feedback.rng("initial", self.scn.id))
        else:  # the true state is drawn from the posterior at the pair's node
            b = node.belief
            self.state = draw(np.cumsum(b), feedback.rng("pair", item.id))
        self.decisions_left = 1 if item.pair is not None else len(self.scn.stages)
        self.rows: list[dict[str, Any]] = []
        self.choice: Choice | None = None
        self.last_obs: str | None = None
        self.over = False

    # -- prompts -----------------------------------------------------------------------------------------
    def prompt(self, node: Node) -> tuple[str, bool]:
        stage = self.scn.stages[node.stage - 1]
        first = not self.rows
        parts: list[str] = []
        if first:
            parts.append(rules_text(self.scn))
            if self.history:
                parts.append("Earlier stages (already decided):")
                parts.extend(
                    f"- Stage {i}: you chose {a}; observed: {observation_text(self.scn, o)}."
                    for i, (a, o) in enumerate(self.history, 1)
                )
        else:
            parts.append(f"Stage {node.stage - 1} result: {observation_text(self.scn, self.last_obs or '')}.")
        loss = f"a failure costs {stage.loss:g}" if stage.loss > 0 else "no job at this stage"
        parts.append(f"Stage {node.stage} of {len(self.scn.stages)}: {stage.job} ({loss}).")
        if self.show_posterior:
            parts.append(
                "Exact posterior over the partners' modes given everything so far: "
                + posterior_text(
                    self.scn, self.comp.marginals(node.belief), self.comp.joint_posterior(node.belief)
                )
                + "."
            )
        parts.append(f"Options: {', '.join(node.actions)}. Answer with the JSON object.")
        return "\n".join(parts), first

    def view(self) -> DecisionView:
        assert self.node is not None
        node = self.node
        text, first = self.prompt(node)
        p_exact = {a: p for a in node.actions if (p := self.sol.success_prob(node, a)) is not None}
        return DecisionView(
            scenario=self.scn,
            stage=node.stage,
            actions=node.actions,
            history=tuple(self.history),
            prompt=text,
            first_turn=first,
            posterior=self.comp.marginals(node.belief) if self.show_posterior else None,
            reference=node,
            p_exact=p_exact,
        )

    # -- one stage ---------------------------------------------------------------------------------------
    async def collect(self) -> None:
        policy = self.maker.policy
        view = self.view()
        self.choice = await policy.adecide(view) if policy.is_async else policy.decide(view)

    def step(self) -> None:
        node = self.node
        choice = self.choice
        assert node is not None and choice is not None
        action = choice.action if choice.action in node.actions else None
        reason = choice.invalid_reason or ("illegal_action" if choice.action is not None else "invalid")
        row = self._row(node, choice, action, "" if action else reason)
        if action is None:
            self.over = True
        else:
            rng = self.feedback.rng("feedback", self.scn.id, history_key(self.history), action)
            res = step(self.comp, node.stage, action, self.state, rng)
            self.state = res.next_state
            row.update(outcome=res.success, observation=res.obs, cost=res.cost)
            self.history.append((action, res.obs))
            self.last_obs = res.obs
            self.node = self.sol.child(node, action, res.obs)
            self.decisions_left -= 1
            self.over = self.node is None or self.decisions_left == 0
        self.rows.append(row)
        if self.recorder is not None:
            self.recorder.event(
                "stage",
                session=self.base_row["session"],
                item=self.item.id,
                scenario=self.scn.id,
                stage=node.stage,
                node=node.id,
                history=row["history"],
                raw=choice.raw,
                action=action,
                valid=action is not None,
                invalid_reason=row["invalid_reason"],
                optimal=row["optimal"],
                confidence=choice.confidence,
                reasoning=choice.reasoning,
                observation=row.get("observation"),
                latency_s=choice.latency_s,
                tokens=[choice.prompt_tokens, choice.completion_tokens],
                cached=choice.cached,
                **({"request": choice.request_key} if choice.request_key else {}),
            )

    def _row(self, node: Node, choice: Choice, action: str | None, invalid: str) -> dict[str, Any]:
        sol = self.sol
        acts = self.scn.actions
        opt = node.optimal
        tests = [a for a in node.actions if acts[a].counterpart is not None]
        benefits = {a: sol.test_benefit(node, a) for a in tests}
        supports = [a for a in node.actions if acts[a].kind == "support"]
        protective = [a for a in node.actions if acts[a].kind == "backup"]
        kind = acts[action].kind if action else ""
        bench = benefits.get(action) if action else None
        regret = node.regret(action) if action else float("nan")
        pair = self.item.pair
        return {
            **self.base_row,
            "item": self.item.id,
            "item_index": self.item_index,
            "scenario": self.scn.id,
            "blueprint": self.scn.blueprint,
            "category": self.scn.category,
            "process": self.scn.process,
            "pair": pair.id if pair else None,
            "pair_side": self.item.side or None,
            "pair_stable": pair.stable if pair else None,
            "stage": node.stage,
            "n_stages": len(self.scn.stages),
            "node": node.id,
            "history": history_key(self.history),
            "show_posterior": self.show_posterior,
            "actions": ";".join(node.actions),
            "action": action,
            "raw_action": choice.raw[:200],
            "valid": action is not None,
            "invalid_reason": invalid or None,
            "action_kind": kind or None,
            "optimal": bool(action and action in opt),
            "optimal_actions": ";".join(opt),
            "n_optimal": len(opt),
            "myopic_actions": ";".join(node.myopic),
            "myopic": bool(action and action in node.myopic),
            "learning_pays": not (set(opt) & set(node.myopic)),
            "q_values": ";".join(f"{a}={q:.6f}" for a, q in zip(node.actions, node.q, strict=True)),
            "q_chosen": node.qof(action) if action else None,
            "v_star": node.v,
            "q_max": float(node.q.max()),
            "value_range": node.value_range,
            "regret": None if math.isnan(regret) else regret,
            "immediate_cost": float(node.imm[node.actions.index(action)]) if action else None,
            "is_test": bool(action and (acts[action].counterpart is not None or kind in INFO_KINDS)),
            "test_benefit": bench,
            "zero_benefit_test": bool(bench is not None and abs(bench) < 1e-8),
            "useful_test_available": any(a in opt and (b or 0) > 1e-8 for a, b in benefits.items()),
            "support_optimal": bool(set(supports) & set(opt)),
            "support_target_wrong": bool(
                kind == "support" and set(supports) & set(opt) and action not in opt
            ),
            "protective": bool(action and kind == "backup"),
            "protective_optimal": bool(set(protective) & set(opt)),
            "confidence": choice.confidence,
            "p_exact": sol.success_prob(node, action) if action else None,
            "outcome": None,
            "observation": None,
            "cost": None,
            "latency_s": choice.latency_s,
            "prompt_tokens": choice.prompt_tokens,
            "completion_tokens": choice.completion_tokens,
        }

    async def play(self) -> list[dict[str, Any]]:
        while not self.over:
            await self.collect()
            self.step()
        return self.rows
