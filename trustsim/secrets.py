"""Keep secrets out of everything a run writes or prints.

Secrets are redacted by *value*: the value of every environment variable whose name looks like a credential
(which covers every provider key variable litellm reads: ``OPENAI_API_KEY``, ``HF_TOKEN``,
``AWS_SECRET_ACCESS_KEY``, ...) and of every variable registered with :func:`register_secret_env` (the model's
``api_key_env``, whatever its name). Config that carries a secret (a token in ``model.params``, an
``Authorization`` header) is refused: keys come from the environment only.
"""

from __future__ import annotations

import logging
import os
import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

REDACTED = "***redacted***"
MIN_SECRET_LEN = 8  # shorter values are not redacted (they would mangle ordinary text)
# Environment variable names whose values are secrets (every provider key variable litellm knows matches).
_SECRET_ENV = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)", re.IGNORECASE)
# ... except names that hold a location or a setting, not a secret.
_NOT_SECRET_ENV = re.compile(r"_(FILE|DIR|PATH|URL|ENDPOINT|VERSION|ENABLED|SOCK|BASE|REGION)$")
# Config keys (params, headers, override paths) that carry a secret. Word-bounded: max_tokens is not a token.
_SECRET_PARAM = re.compile(
    r"(^|[^a-z])(api[_-]?key|apikey|access[_-]?key|secret|token|passw(or)?d|authorization|bearer"
    r"|credentials?|cookie|private[_-]?key|subscription[_-]?key)($|[^a-z])"
)
# Values shaped like provider keys (OpenAI/Anthropic sk-, Google AIza, Hugging Face hf_, Groq gsk_, xAI, ...).
_KEY_SHAPED = re.compile(r"^(Bearer[ _])?(sk-|sk_|AIza|hf_|gsk_|xai-|pplx-|r8_|ghp_|github_pat_)[\w-]{12,}$")
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
_CONVENTIONAL_ENV = re.compile(r"^[A-Z_][A-Z0-9_]{0,63}$")
HOW_TO_PASS_KEYS = (
    "keys are taken only from environment variables: put the key in one "
    "(export MY_KEY=...) and name it with model.api_key_env=MY_KEY "
    "(model.headers_env.<Header-Name>=MY_VAR for a custom header)"
)

_registered: set[str] = set()
_log_secrets: list[str] = []


def register_secret_env(name: str | None) -> None:
    """Treat the value of variable ``name`` as a secret whatever its name (e.g. the model's api_key_env)."""
    if isinstance(name, str) and ENV_NAME.match(name):
        _registered.add(name)
        _refresh_log_secrets()


def is_secret_env(name: str) -> bool:
    """Whether the value of environment variable ``name`` is treated as a secret."""
    return name in _registered or (
        bool(_SECRET_ENV.search(name)) and not _NOT_SECRET_ENV.search(name.upper())
    )


def secret_values() -> list[str]:
    """Current secret values in the environment, longest first (so a key is redacted before its prefix)."""
    values = {
        v
        for k, v in os.environ.items()
        if len(v) >= MIN_SECRET_LEN and is_secret_env(k) and not v.startswith(("/", "~"))
    }
    values |= {os.environ[k] for k in _registered if len(os.environ.get(k, "")) >= MIN_SECRET_LEN}
    return sorted(values, key=len, reverse=True)


def redact_text(text: str, secrets: Iterable[str] | None = None) -> str:
    """``text`` with every secret value replaced by ``***redacted***``."""
    for value in secret_values() if secrets is None else secrets:
        if value in text:
            text = text.replace(value, REDACTED)
    return text


def redact(obj: Any, secrets: list[str] | None = None) -> Any:
    """Copy of a config-like structure with secret-named keys and secret values redacted.

    Keys that name an environment variable (``*_env``) are kept: they hold a name, not a secret.
    """
    secrets = secret_values() if secrets is None else secrets
    if isinstance(obj, dict):
        out = {}
        for key, value in obj.items():
            if is_secret_param(str(key)) and isinstance(value, str) and value:
                out[key] = REDACTED
            else:
                out[key] = redact(value, secrets)
        return out
    if isinstance(obj, list | tuple):
        return [redact(v, secrets) for v in obj]
    if isinstance(obj, str):
        return redact_text(obj, secrets)
    return obj


def is_secret_param(name: str) -> bool:
    """Whether a config key (a param, a header, one part of an override path) names a secret."""
    lower = name.lower()
    return not lower.endswith("_env") and bool(_SECRET_PARAM.search(lower))


def looks_like_key(value: str) -> bool:
    """Whether a config value is shaped like a provider API key (``sk-...``, ``AIza...``, ``hf_...``)."""
    return bool(_KEY_SHAPED.match(value.strip()))


def _plausible_env_name(name: str) -> bool:
    """A variable name, not a pasted key: set in the environment, or conventional (``MY_KEY``)."""
    if not ENV_NAME.match(name) or looks_like_key(name) or name in secret_values():
        return False
    return name in os.environ or bool(_CONVENTIONAL_ENV.match(name))


def describe_env_name(name: str) -> str:
    """How to name variable ``name`` in a message: itself when it looks like one, never a pasted key."""
    if _CONVENTIONAL_ENV.match(name) and name not in secret_values():
        return name
    return "named in model.api_key_env (not shown: it does not look like a variable name; is it a key?)"


_ASSIGNMENT = re.compile(
    r"(?P<key>[\w.\-]*?(?P<word>api[_-]?key|apikey|secret|token|passw(?:or)?d|authorization|bearer|credentials?)"
    r"(?![a-zA-Z])(?!_env)[\w\-]*)(?P<sep>\s*[:=]\s*)(?P<value>[^\s,}\]]+)",
    re.IGNORECASE,
)


def redact_assignments(text: str) -> str:
    """Redact ``api_key: value`` / ``model.api_key=value`` assignments (YAML or Hydra overrides)."""

    def sub(m: re.Match[str]) -> str:
        if m["key"].lower().endswith("_env") or not is_secret_param(m["key"].split(".")[-1]):
            return m[0]
        return f"{m['key']}{m['sep']}{REDACTED}"

    return _ASSIGNMENT.sub(sub, text)


def scrub_files(paths: Iterable[Path]) -> None:
    """Rewrite files in place with secrets removed (e.g. Hydra's saved config and overrides)."""
    secrets = secret_values()
    for path in paths:
        if path.is_file():
            text = path.read_text(encoding="utf-8", errors="replace")
            clean = redact_assignments(redact_text(text, secrets))
            if clean != text:
                path.write_text(clean, encoding="utf-8")


def protect_run(cfg: Mapping[str, Any], run_dir: Path) -> None:
    """At job start: register the model's key variable, redact logs, scrub what Hydra wrote before us.

    Hydra saves ``.hydra/{config,hydra,overrides}.yaml`` (and a sweep's ``multirun.yaml``) before the job
    function runs; secret values and secret-named assignments in them are replaced.
    """
    model = cfg.get("model")
    if isinstance(model, Mapping):
        register_secret_env(model.get("api_key_env"))
        headers_env = model.get("headers_env")
        for var in headers_env.values() if isinstance(headers_env, Mapping) else ():
            register_secret_env(var)
    install_log_redaction()
    paths = sorted((Path(run_dir) / ".hydra").glob("*.yaml"))
    sweep = _sweep_dir()
    if sweep is not None:
        paths += sorted(sweep.glob("*.yaml")) + sorted(sweep.glob(".hydra/*.yaml"))
    scrub_files(paths)


def _sweep_dir() -> Path | None:
    try:
        from hydra.core.hydra_config import HydraConfig
        from hydra.types import RunMode

        if not HydraConfig.initialized():
            return None
        hc = HydraConfig.get()
        return Path(hc.sweep.dir) if hc.mode == RunMode.MULTIRUN else None
    except Exception:  # pragma: no cover - Hydra absent or not configured
        return None


class _RedactingFilter(logging.Filter):
    """Formats a record's message (and traceback) now, with secret values replaced."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not _log_secrets:
            return True
        try:
            message = record.getMessage()
        except Exception:  # pragma: no cover - a broken format string: leave it to logging
            return True
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        record.exc_info = None
        record.msg, record.args = redact_text(message, _log_secrets), None
        if record.exc_text:
            record.exc_text = redact_text(record.exc_text, _log_secrets)
        return True


_FILTER = _RedactingFilter()


def _refresh_log_secrets() -> None:
    _log_secrets[:] = secret_values()


def install_log_redaction() -> None:
    """Redact secret values from every log record any configured handler writes (files and consoles)."""
    _refresh_log_secrets()
    loggers = [logging.getLogger()] + [
        lg for lg in logging.Logger.manager.loggerDict.values() if isinstance(lg, logging.Logger)
    ]
    for logger in loggers:
        for handler in logger.handlers:
            if _FILTER not in handler.filters:
                handler.addFilter(_FILTER)


def override_problem(arg: str) -> tuple[str, str] | None:
    """Why a command-line override must be refused before Hydra writes it anywhere: ``(key, reason)``."""
    if arg.startswith("-") or "=" not in arg:
        return None
    key, _, value = arg.lstrip("+~").partition("=")
    key = key.strip()
    if key.startswith("hydra.") or key.startswith("hydra/"):
        return None
    value = value.strip().strip("'\"")
    parts = key.split(".")
    if parts[-1].endswith("_env"):
        names = [v for v in re.split(r"[,\s]+", value.strip("[]")) if v and v != "null"]
        if any(not _plausible_env_name(v) for v in names):
            return key, (
                "must be the NAME of a set environment variable (e.g. OPENAI_API_KEY), not a key value "
                "(the value given is not shown); " + HOW_TO_PASS_KEYS
            )
        return None
    if parts[-1] == "api_base" and re.match(r"^[a-z][a-z0-9+.-]*://[^/@]*:[^/@]*@", value, re.IGNORECASE):
        return key, "credentials in the URL are not accepted; " + HOW_TO_PASS_KEYS
    if any(is_secret_param(p) for p in parts):
        return key, "secrets are not accepted in config; " + HOW_TO_PASS_KEYS
    if value and (value in secret_values() or any(s in value for s in secret_values())):
        return key, "this value is a secret from the environment; " + HOW_TO_PASS_KEYS
    if looks_like_key(value):
        return key, "this value looks like an API key; " + HOW_TO_PASS_KEYS
    return None


def refuse_secret_overrides(argv: list[str]) -> None:
    """Exit with code 2 before Hydra starts (so nothing is written) when an override carries a secret."""
    for arg in argv:
        problem = override_problem(arg)
        if problem is not None:
            key, reason = problem
            print(
                f"trustsim: config error at '{key}': {reason} (refused before anything was written)",
                file=sys.stderr,
            )
            sys.exit(2)
