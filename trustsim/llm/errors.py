"""Errors of the LLM layer."""

from __future__ import annotations

from trustsim.errors import TrustsimError

RESUME_HINT = "re-run the same command to resume (stored responses are not sent again)"


class ProviderError(TrustsimError):
    """The provider failed for good: a non-retryable error, or the retry budget ran out.

    Never recorded as a model move; the run stops with a ``failed`` manifest naming ``cause``.
    """

    def __init__(self, cause: str, *, model: str = "", attempts: int = 0, retryable: bool = False) -> None:
        self.cause = cause
        self.model = model
        self.attempts = attempts
        self.retryable = retryable
        self.resume = RESUME_HINT
        where = f" for model '{model}'" if model else ""
        tries = f" after {attempts} attempt(s)" if attempts else ""
        super().__init__(f"LLM provider error{where}{tries}: {cause}; {RESUME_HINT}")


class ReplayMissError(ProviderError):
    """``llm.replay_only`` is set and a request is not in the store."""
