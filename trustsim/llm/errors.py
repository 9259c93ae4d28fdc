"""Errors of the LLM layer. Each carries the advice the run prints (``resume``) and its exit code.

Exit codes of ``python -m trustsim``: 2 configuration or environment, 3 provider error, 4 replay miss,
6 budget reached (:class:`trustsim.llm.budget.BudgetReached`), 130 interrupted (see the README's "Exit codes").
"""

from __future__ import annotations

from trustsim.errors import RESUME_HINT, ConfigError, TrustsimError

EXIT_CONFIG = 2
EXIT_PROVIDER = 3
EXIT_REPLAY_MISS = 4


class ProviderError(TrustsimError):
    """The provider failed for good: a non-retryable error, or the retry budget ran out.

    Never recorded as a model move; the run stops with a ``failed`` manifest naming ``cause``. The message
    holds no advice; ``resume`` says what to do (printed once by the job).
    """

    exit_code = EXIT_PROVIDER

    def __init__(
        self,
        cause: str,
        *,
        model: str = "",
        attempts: int = 0,
        retryable: bool = False,
        resume: str = RESUME_HINT,
    ) -> None:
        self.cause = cause
        self.model = model
        self.attempts = attempts
        self.retryable = retryable
        self.resume = resume
        where = f" for model '{model}'" if model else ""
        tries = f" after {attempts} attempt(s)" if attempts else ""
        super().__init__(f"LLM provider error{where}{tries}: {cause}")


class ReplayMissError(ProviderError):
    """``llm.replay_only`` is set and a request is not in the store: re-running the same command cannot help."""

    exit_code = EXIT_REPLAY_MISS

    def __init__(self, cause: str, *, model: str = "", store_path: str = "") -> None:
        where = f" ({store_path})" if store_path else ""
        super().__init__(
            cause,
            model=model,
            resume=(
                f"re-running the same command cannot help: the request is not in llm.store_path{where}. "
                "Run without llm.replay_only=true to send it, or point llm.store_path at the store that holds it"
            ),
        )


class MissingKeyError(ConfigError):
    """The model names a key variable (``model.api_key_env``) that is not set."""

    exit_code = EXIT_CONFIG

    def __init__(self, key: str, message: str, resume: str) -> None:
        super().__init__(key, message)
        self.resume = resume


class StoreError(ConfigError):
    """The request store cannot be opened or written (``llm.store_path``, or ``llm.store_dir``)."""

    exit_code = EXIT_CONFIG

    def __init__(self, message: str, resume: str, key: str = "llm.store_path") -> None:
        super().__init__(key, message)
        self.resume = resume
