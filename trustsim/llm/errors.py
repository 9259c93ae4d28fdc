"""Errors of the LLM layer. Each carries the advice the run prints (``resume``) and its exit code.

Exit codes of ``python -m trustsim``: 2 configuration or environment, 3 provider error, 4 replay miss,
6 budget reached (:class:`trustsim.llm.budget.BudgetReached`), 130 interrupted (see docs/running.md, "Exit codes").
"""

from __future__ import annotations

from pathlib import Path

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


class DamagedStoreError(StoreError):
    """The request store file, or a shard of ``llm.store_dir``, is empty, not a store, or damaged. Nothing is
    sent (its answers would be bought again); the advice says how to restore or recover them."""

    def __init__(self, path: str | Path, problem: str, key: str = "llm.store_path") -> None:
        path = Path(path)
        super().__init__(
            f"the request store {path} {problem}", resume=recover_advice(path, problem, key), key=key
        )
        self.path = path


def recover_advice(path: Path, problem: str, key: str) -> str:
    """What to do about a damaged, emptied or foreign store file ``path`` (named by ``key``)."""
    if "empty" in problem:
        return (
            f"restore {path} from a backup if it held answers; to start a new store instead delete the empty file "
            f"(every request is then sent again) or point {key} at another file"
        )
    if "newer trustsim" in problem:
        return f"upgrade trustsim to use it, or point {key} at another store; {path} was left as it is"
    if "not a request store" in problem or "not a SQLite database" in problem:
        return f"point {key} at a request store (or at a new file); {path} was left as it is"
    recovered = path.with_name(f"{path.stem}-recovered{path.suffix}")
    if key == "llm.store_dir":
        return (
            f"copy its readable answers into a new shard: python -m trustsim.store_cli --path {path} recover "
            f"--out {recovered}, move the damaged shard out of the directory (mv {path} {path}.damaged), "
            "then re-run the same command: recovered answers are replayed"
        )
    return (
        f"copy its readable answers into a new store: python -m trustsim.store_cli --path {path} recover "
        f"--out {recovered}, then re-run the same command with {key}={recovered}: recovered answers are "
        "replayed, only the unreadable ones are sent again"
    )
