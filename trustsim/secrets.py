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
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl, urlsplit

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
    """Copy of a config-like structure with secrets replaced, each by ``***redacted***`` as a whole value.

    Replaced: the value of a secret-named key (``api_token``, ``Authorization``), a value that looks like a
    key (``sk-...``, ``Bearer sk-...``), a URL carrying credentials or a key in its query string, and every
    secret from the environment inside other text. Keys that name an environment variable (``*_env``, and
    the header names under ``headers_env``) are kept: they hold names, not secrets.
    """
    secrets = secret_values() if secrets is None else secrets
    return _redact(obj, secrets, env_names=False)


def _redact(obj: Any, secrets: list[str], *, env_names: bool) -> Any:
    if isinstance(obj, Mapping):
        out = {}
        for key, value in obj.items():
            names = env_names or str(key).lower().endswith("_env")
            if not names and is_secret_param(str(key)) and _is_set(value):
                out[key] = REDACTED
            else:
                out[key] = _redact(value, secrets, env_names=names)
        return out
    if isinstance(obj, list | tuple):
        return [_redact(v, secrets, env_names=env_names) for v in obj]
    if isinstance(obj, str):
        if not env_names and (_key_shaped_part(obj) or url_problem(obj, secrets)):
            return REDACTED
        return redact_text(obj, secrets)
    return obj


def _is_set(value: Any) -> bool:
    """A value that could be a secret: non-empty text, or a number (not a flag, not null, not a mapping)."""
    if isinstance(value, bool) or value is None:
        return False
    return bool(value) if isinstance(value, str) else isinstance(value, int | float)


def is_secret_param(name: str) -> bool:
    """Whether a config key (a param, a header, one part of an override path) names a secret."""
    lower = name.lower()
    return not lower.endswith("_env") and bool(_SECRET_PARAM.search(lower))


def looks_like_key(value: str) -> bool:
    """Whether a config value is shaped like a provider API key (``sk-...``, ``AIza...``, ``hf_...``)."""
    return bool(_KEY_SHAPED.match(value.strip()))


def _key_shaped_part(text: str) -> bool:
    """Whether ``text`` is, or holds as one of its words, a value shaped like a key (``token sk-...``)."""
    return looks_like_key(text) or any(looks_like_key(w) for w in _WORDS.split(text) if len(w) >= 12)


_WORDS = re.compile(r"[\s,;:=\"'{}\[\]()<>]+")
# Query-string (and fragment) parameters of a URL that carry a key, besides the secret-named ones.
_URL_KEY_PARAMS = frozenset({"key", "sig", "signature", "auth", "x-api-key", "pass", "pwd"})


def url_problem(text: str, secrets: Iterable[str] | None = None) -> str | None:
    """Why a URL may not be written anywhere (None when it is no URL or holds no secret): credentials before the
    host (``user:password@``), a key in the query string or fragment (``?key=``, ``api_key=``, ``token=``,
    ``sig=``...), or a key-shaped path segment."""
    text = text.strip()
    if "://" not in text or any(c.isspace() for c in text):
        return None
    try:
        parts = urlsplit(text)
    except ValueError:
        return None
    if not parts.scheme or not parts.netloc:
        return None
    if "@" in parts.netloc:
        return "credentials in the URL (user:password@host) are not accepted; " + HOW_TO_PASS_KEYS
    secrets = secret_values() if secrets is None else list(secrets)
    for name, value in [*parse_qsl(parts.query, keep_blank_values=True),
                        *parse_qsl(parts.fragment, keep_blank_values=True)]:  # fmt: skip
        if value and (
            is_secret_param(name)
            or name.lower() in _URL_KEY_PARAMS
            or _key_shaped_part(value)
            or value in secrets
        ):
            return f"a key in the URL's query string ('{name}=...') is not accepted; " + HOW_TO_PASS_KEYS
    if any(looks_like_key(seg) or seg in secrets for seg in parts.path.split("/") if seg):
        return "a key in the URL's path is not accepted; " + HOW_TO_PASS_KEYS
    return None


def value_problem(text: str, secrets: Iterable[str] | None = None) -> str | None:
    """Why a config value may not be written anywhere: it is (or holds) a key, a secret from the environment,
    or a URL carrying one. None for ordinary values."""
    secrets = secret_values() if secrets is None else list(secrets)
    if any(s in text for s in secrets):
        return "this value is a secret from the environment; " + HOW_TO_PASS_KEYS
    if _key_shaped_part(text):
        return "this value looks like an API key; " + HOW_TO_PASS_KEYS
    return url_problem(text, secrets)


def env_name_problem(name: str, secrets: Iterable[str] | None = None) -> str | None:
    """Why a value that must name an environment variable (``api_key_env``, a ``headers_env`` value) does not:
    None for a variable name (set, or conventional like ``MY_KEY``), else the reason (the value not shown)."""
    secrets = secret_values() if secrets is None else list(secrets)
    plausible = ENV_NAME.match(name) and not looks_like_key(name) and name not in secrets
    if plausible and (name in os.environ or _CONVENTIONAL_ENV.match(name)):
        return None
    return (
        "must be the NAME of a set environment variable (e.g. OPENAI_API_KEY), not a key value "
        "(the value given is not shown); " + HOW_TO_PASS_KEYS
    )


def config_problem(tree: Any, path: str = "") -> tuple[str, str] | None:
    """The first place in a config (plain containers) that carries a secret: ``(dotted key, reason)``.

    Refused: a secret-named key with a value (``api_token``, ``extra_headers.Authorization``), a value that
    is or holds a key (``Bearer sk-...``), a secret from the environment, a URL with credentials or a key in
    its query string, and a value under an ``*_env`` key (``api_key_env``, ``headers_env.<Header>``) that is
    not a variable name. None when the config is clean.
    """
    return _find_secret(tree, path, secret_values(), env_names=False)


def _find_secret(node: Any, path: str, secrets: list[str], *, env_names: bool) -> tuple[str, str] | None:
    if isinstance(node, Mapping):
        for name, value in node.items():
            key = f"{path}.{name}" if path else str(name)
            names = env_names or str(name).lower().endswith("_env")
            if not names and is_secret_param(str(name)) and _is_set(value):
                return key, "secrets are not accepted in config; " + HOW_TO_PASS_KEYS
            found = _find_secret(value, key, secrets, env_names=names)
            if found is not None:
                return found
        return None
    if isinstance(node, list | tuple):
        for i, value in enumerate(node):
            found = _find_secret(value, f"{path}[{i}]", secrets, env_names=env_names)
            if found is not None:
                return found
        return None
    if isinstance(node, str) and node:
        reason = env_name_problem(node, secrets) if env_names else value_problem(node, secrets)
        return (path, reason) if reason else None
    return None


def describe_env_name(name: str) -> str:
    """How to name variable ``name`` in a message: itself when it looks like one, never a pasted key."""
    if _CONVENTIONAL_ENV.match(name) and name not in secret_values():
        return name
    return "named in model.api_key_env (not shown: it does not look like a variable name; is it a key?)"


_ASSIGNMENT = re.compile(
    r"(?P<key>[\w.\-]*?(?P<word>api[_-]?key|apikey|secret|token|passw(?:or)?d|authorization|bearer|credentials?)"
    r"(?![a-zA-Z])(?!_env)[\w\-]*)(?P<sep>\s*[:=]\s*)"
    r"(?P<value>\"(?:[^\"\\\n]|\\.)*\"?|'[^'\n]*'?|[^,}\]\n]*[^,}\]\s])",
    re.IGNORECASE,
)


def redact_assignments(text: str) -> str:
    """Redact ``api_key: value`` / ``model.api_key=value`` assignments (YAML or Hydra overrides): the whole
    value (``Authorization: Bearer sk-...`` becomes ``Authorization: ***redacted***``)."""

    def sub(m: re.Match[str]) -> str:
        parts = m["key"].lower().split(".")
        if any(p.endswith("_env") for p in parts) or not is_secret_param(parts[-1]):
            return m[0]  # a variable name (api_key_env, headers_env.<Header>), or no secret
        return f"{m['key']}{m['sep']}{REDACTED}"

    return _ASSIGNMENT.sub(sub, text)


def redact_argument(arg: str) -> str:
    """A command-line argument as it may be written (the manifest's ``command``): secret assignments and
    values redacted whole."""
    key, sep, value = arg.partition("=")
    if sep and not arg.startswith("-") and value_problem(value.strip("'\"")) is not None:
        return f"{key}={REDACTED}"
    return redact_assignments(redact_text(arg))


def protect_run(cfg: Mapping[str, Any]) -> None:
    """At job start: treat the model's key variables as secrets (``api_key_env``, ``headers_env`` values,
    whatever their names) and redact secret values from every log record."""
    model = cfg.get("model")
    if isinstance(model, Mapping):
        register_secret_env(model.get("api_key_env"))
        headers_env = model.get("headers_env")
        for var in headers_env.values() if isinstance(headers_env, Mapping) else ():
            register_secret_env(var)
    install_log_redaction()


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
    """Why a command-line override must be refused before Hydra sees it: ``(key, reason)``; None when clean.

    A plain text check, so it needs no Hydra parse (whose error messages echo the value): secret-named keys,
    values that are or hold a key (each element of a list, sweep or mapping too), secrets from the
    environment, URLs carrying one; under ``*_env`` keys (``api_key_env``, ``headers_env.<Header>``) the values
    must be variable names.
    """
    if arg.startswith("-") or "=" not in arg:
        return None
    key, _, value = arg.lstrip("+~").partition("=")
    key, value = key.strip(), value.strip()
    parts = re.split(r"[./@]", key)
    secrets = secret_values()
    if any(p.lower().endswith("_env") for p in parts):  # variable names (a mapping of them: headers_env)
        names = re.findall(r":\s*([^,}\s]+)", value) if value.startswith("{") else _WORDS.split(value)
        for name in (n.strip("'\"") for n in names):
            if name and name != "null" and env_name_problem(name, secrets):
                return key, str(env_name_problem(name, secrets))
        return None
    if any(is_secret_param(p) for p in parts) and value.strip("'\"") not in ("", "null"):
        return key, "secrets are not accepted in config; " + HOW_TO_PASS_KEYS
    for piece in [value, *re.split(r"[,\s\[\]{}]+", value)]:
        reason = value_problem(piece.strip("'\""), secrets) if piece.strip("'\"") else None
        if reason is not None:
            return key, reason
    return None
