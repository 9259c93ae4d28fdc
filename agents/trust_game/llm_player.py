"""The LLM trust-game player: one stateless call per decision through the decision kit (the prompt carries
the history)."""

from __future__ import annotations

from typing import Any, ClassVar

from agents.trust_game.base import TrustPlayer
from agents.trust_game.parse import Parsed, trustee_parser, trustee_schema, trustor_parser, trustor_schema
from agents.trust_game.prompt import messages, trustee_message, trustor_message
from games.trust_game.rules import Amount
from games.trust_game.types import Decision, TrusteeView, TrustorView


class LLMTrustPlayer(TrustPlayer):
    """Asks a language model for the amount and its native confidence.

    The sender answers ``send``, ``expected_return`` and ``p_return_at_least_sent``; the responder answers
    ``return`` and, when a next round may follow, ``p_next_send_at_least``. An invalid amount is recorded
    (``valid=False`` with the raw text and reason) and resolved as 0; an invalid confidence is recorded missing.
    How the model decodes (JSON schema, JSON mode, none) follows the model config (the decision kit).
    Provider errors are not caught here: the LLM layer retries them and a persistent failure stops the run.

    Args:
        model: model name sent in requests (None: the job's ``model`` group). Lets the two roles of a pair
            use different models: ``game.trustee={name: llm, model: <litellm id>}``.
        params: extra generation parameters for every request (e.g. ``mock_response`` in tests).
    """

    name = "llm"
    classifier: ClassVar[dict[str, Any]] = {
        "stochastic": True,
        "uses_llm": True,
        "confidence_roles": ("trustor", "trustee"),
    }
    is_async = True

    def __init__(self, model: str | None = None, params: dict[str, Any] | None = None) -> None:
        super().__init__()
        self.model = model
        self.params = dict(params or {})
        self.kit: Any = None

    def bind(self, client: Any, model_cfg: Any, sample: int = 0) -> None:
        """Attach the job's LLM client and model config (a decision kit) with this player's sample index."""
        from trustsim.llm.decision import DecisionKit

        self.kit = DecisionKit(client, model_cfg, sample=sample, request_model=self.model, params=self.params)
        self.model = self.kit.request_model

    @property
    def model_name(self) -> str:
        return self.model or "unknown"

    def send(self, view: TrustorView) -> Decision:
        raise RuntimeError("the LLM player is asynchronous; use asend")

    def give_back(self, view: TrusteeView) -> Decision:
        raise RuntimeError("the LLM player is asynchronous; use agive_back")

    async def _decide(self, text: str, parse: Any, schema: dict[str, Any], name: str) -> Decision:
        if self.kit is None:
            raise RuntimeError("LLM player used before bind(client, model_cfg)")
        ans = await self.kit.decide(messages(text), parse, schema=schema, name=name)
        parsed: Parsed = ans.value
        if not isinstance(parsed, Parsed):  # empty or unparseable: nothing could be read
            why = ans.invalid_reason
            parsed = Parsed(Amount(0, False, "", why), expected_error=why, p_error=why)
        amount = parsed.amount
        if not amount.valid and not amount.raw:  # nothing usable: the whole answer is the raw text
            amount = Amount(0, False, ans.raw, amount.reason or ans.invalid_reason)
        return Decision(
            amount,
            expected=parsed.expected,
            p=parsed.p,
            reasoning=parsed.reasoning,
            raw=ans.raw,
            expected_invalid_reason=parsed.expected_error,
            p_invalid_reason=parsed.p_error,
            latency_s=ans.latency_s,
            prompt_tokens=ans.prompt_tokens,
            completion_tokens=ans.completion_tokens,
            cached=ans.cached,
            request_key=ans.request_key,
        )

    async def asend(self, view: TrustorView) -> Decision:
        st = view.info.stakes
        schema = trustor_schema(st.endowment, st.multiplier, self.kit and self.kit.reasoning_max_chars)
        parse = trustor_parser(st.endowment, st.multiplier)
        return await self._decide(trustor_message(view), parse, schema, "trust_game_send")

    async def agive_back(self, view: TrusteeView) -> Decision:
        schema = trustee_schema(view.received, view.asks_next, self.kit and self.kit.reasoning_max_chars)
        parse = trustee_parser(view.received, view.asks_next)
        return await self._decide(trustee_message(view), parse, schema, "trust_game_return")
