"""Keep secrets out of everything a run writes or prints.

Secrets are redacted by *value*: the value of every environment variable whose name looks like a credential
(which covers every provider key variable litellm reads: ``OPENAI_API_KEY``, ``HF_TOKEN``,
``AWS_SECRET_ACCESS_KEY``, ...) and of every variable the config names as a key or header source (any
``*_env`` key: the model's ``api_key_env`` and ``headers_env``, whatever the variable's name; see
:func:`register_key_sources`). A value that cannot be a key (a word, or shorter than :data:`MIN_KEY_LEN`) is not
redacted inside text, which it would corrupt: only where a config value is that whole value, with a warning.
Config that carries a secret (a token in ``model.params``, an ``Authorization`` header, a key-shaped name or
value, a URL with credentials or a query value) is refused: keys come from the environment only.
"""

from __future__ import annotations

import logging
import os
import re
import sys
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl, urlsplit

REDACTED = "***redacted***"
MIN_KEY_LEN = 12  # no provider key is shorter; redacting a shorter value mangles ordinary text
# A value made of words only (no digit; each word lower, upper or capitalised): ``volunteer``, ``changeme``,
# ``not-a-key``, ``EMPTY``. No key looks like this (a random one mixes cases or digits).
_WORD = r"(?:[a-z]+|[A-Z][a-z]*|[A-Z]+)"
_WORDLIKE = re.compile(rf"^{_WORD}(?:[-_. ]{_WORD})*$")
# Variable names of provider keys: a weak value in one of them gets a warning even when the run does not use it.
_PROVIDER_KEY_ENV = re.compile(r"(API_?KEY|API_TOKEN|ACCESS_KEY|SECRET_KEY)$", re.IGNORECASE)
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
_KEY_PREFIX = r"(sk-|sk_|AIza|hf_|gsk_|xai-|pplx-|r8_|ghp_|github_pat_)[\w-]{12,}"
_KEY_SHAPED = re.compile(rf"^(Bearer[ _])?{_KEY_PREFIX}$")
_KEY_IN_TEXT = re.compile(rf"(?<![\w-]){_KEY_PREFIX}")
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
_CONVENTIONAL_ENV = re.compile(r"^[A-Z_][A-Z0-9_]{0,63}$")
HOW_TO_PASS_KEYS = (
    "keys are taken only from environment variables: put the key in one "
    "(export MY_KEY=...) and name it with model.api_key_env=MY_KEY "
    "(model.headers_env.<Header-Name>=MY_VAR for a custom header)"
)

_registered: set[str] = set()
_log_secrets: list[str] = []
_warned: set[str] = set()


def register_secret_env(name: str | None) -> None:
    """Treat the value of variable ``name`` as a secret whatever its name (e.g. the model's api_key_env)."""
    if isinstance(name, str) and ENV_NAME.match(name):
        _registered.add(name)
        _refresh_log_secrets()


def key_sources(tree: Any) -> set[str]:
    """Every variable a config names as a key or header source: the values under ``*_env`` keys at any depth
    (``model.api_key_env``, each value of ``model.headers_env``, a seat's model's too)."""
    found: set[str] = set()

    def walk(node: Any, names: bool) -> None:
        if isinstance(node, Mapping):
            for key, value in node.items():
                walk(value, names or str(key).lower().endswith("_env"))
        elif isinstance(node, list | tuple):
            for value in node:
                walk(value, names)
        elif names and isinstance(node, str) and ENV_NAME.match(node):
            found.add(node)

    walk(tree, False)
    return found


def register_key_sources(tree: Any) -> None:
    """Treat every variable the config names as a key or header source as a secret (:func:`key_sources`)."""
    for name in key_sources(tree):
        register_secret_env(name)


def is_secret_env(name: str) -> bool:
    """Whether the value of environment variable ``name`` is treated as a secret."""
    return name in _registered or (
        bool(_SECRET_ENV.search(name)) and not _NOT_SECRET_ENV.search(name.upper())
    )


def can_be_key(value: str) -> bool:
    """Whether a secret value can be a real key: at least :data:`MIN_KEY_LEN` characters and not just words.
    Only such values are redacted inside text (a word would be redacted out of ordinary data)."""
    return len(value) >= MIN_KEY_LEN and (looks_like_key(value) or not _WORDLIKE.match(value))


def _secret_env_values() -> dict[str, str]:
    """The secret variables that are set: name -> value (a location such as ``/path`` of a secret-named
    variable is no secret; a registered variable's value always is)."""
    return {
        name: value
        for name, value in os.environ.items()
        if value.strip() and is_secret_env(name) and (name in _registered or not value.startswith(("/", "~")))
    }


def secret_values() -> list[str]:
    """Current secret values in the environment that can be keys, longest first (so a key is redacted before
    its prefix). These are redacted wherever they appear, inside any text."""
    values = {v for v in _secret_env_values().values() if can_be_key(v)}
    return sorted(values, key=len, reverse=True)


def weak_key_values() -> set[str]:
    """Values of key sources (:func:`register_key_sources`) that cannot be keys (``volunteer``): redacted only
    where a config value is that whole value, never inside text."""
    return {v for k, v in _secret_env_values().items() if k in _registered and not can_be_key(v)}


def warn_weak_keys() -> None:
    """Warn once per variable, on stderr, that a key source or provider key variable holds no real key (its
    value not shown): such a value is not redacted inside what the run writes."""
    for name, value in sorted(_secret_env_values().items()):
        weak = not can_be_key(value) and (name in _registered or _PROVIDER_KEY_ENV.search(name))
        if weak and name not in _warned:
            _warned.add(name)
            why = f"{len(value)} characters" if len(value) < MIN_KEY_LEN else "a word, not a key"
            print(
                f"trustsim: warning: {describe_env_name(name)} does not hold a real API key ({why}); "
                "it is not redacted inside what the run writes (that would corrupt ordinary text), only where "
                "a config value is that whole value",
                file=sys.stderr,
            )


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
    return _redact(obj, secrets, weak_key_values(), env_names=False)


def _redact(obj: Any, secrets: list[str], weak: set[str], *, env_names: bool) -> Any:
    if isinstance(obj, Mapping):
        out = {}
        for key, value in obj.items():
            names = env_names or str(key).lower().endswith("_env")
            shown = key if shown_name(str(key), secrets) == str(key) else REDACTED
            if not names and is_secret_param(str(key)) and _is_set(value):
                out[shown] = REDACTED
            else:
                out[shown] = _redact(value, secrets, weak, env_names=names)
        return out
    if isinstance(obj, list | tuple):
        return [_redact(v, secrets, weak, env_names=env_names) for v in obj]
    if isinstance(obj, str):
        if not env_names and (obj in weak or _key_shaped_part(obj) or url_problem(obj, secrets)):
            return REDACTED
        return redact_text(obj, secrets)
    return obj


def shown_name(name: str, secrets: Iterable[str] | None = None) -> str:
    """A config key as it may be written or printed: ``***redacted***`` when it is shaped like a key or holds a
    secret (``+model.sk-...=1``), else itself."""
    secrets = secret_values() if secrets is None else secrets
    return REDACTED if _key_shaped_part(name) or any(s in name for s in secrets) else name


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
    """Whether ``text`` is, or holds as one of its words, a value shaped like a key (``token sk-...``); inside a
    path or URL (``openai/sk-...``), a key-shaped segment with a digit (``/hf_models_folder`` is a folder)."""
    return (
        looks_like_key(text)
        or any(looks_like_key(w) for w in _WORDS.split(text) if len(w) >= 12)
        or any(
            looks_like_key(w) and any(c.isdigit() for c in w) for w in _SEGMENTS.split(text) if len(w) >= 12
        )
    )


def scrub(text: str) -> str:
    """A message as it may be printed: secrets from the environment and key-shaped words redacted."""
    return _KEY_IN_TEXT.sub(REDACTED, redact_text(text))


_WORDS = re.compile(r"[\s,;:=\"'{}\[\]()<>]+")
_SEGMENTS = re.compile(r"[\s,;:=\"'{}\[\]()<>/\\?&#@|+]+")
# Query-string (and fragment) parameters of a URL known to carry no secret; every other value is one.
SAFE_QUERY_NAMES = ("api-version", "api_version", "version", "alt", "format", "stream", "region", "location")
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s\"'<>]*")
_PLAIN_NAME = re.compile(r"^[A-Za-z][\w.-]{0,31}$")


def url_problem(text: str, secrets: Iterable[str] | None = None) -> str | None:
    """Why a text holding a URL may not be written anywhere (None when it holds no URL, or none with a secret):
    credentials before the host (``user:password@``), a value in the query string or fragment whose name is
    not in :data:`SAFE_QUERY_NAMES` (``?key=``, ``code=``, ``X-Amz-Signature=``), a key-shaped name or value
    there, or a key-shaped or secret path segment. Every URL in the text is checked, up to the first space."""
    if "://" not in text:
        return None
    secrets = secret_values() if secrets is None else list(secrets)
    for url in _URL.findall(text):
        reason = _one_url_problem(url, secrets)
        if reason is not None:
            return reason
    return None


def _one_url_problem(url: str, secrets: list[str]) -> str | None:
    try:
        parts = urlsplit(url)
    except ValueError:  # e.g. an unbalanced '[': its credentials and query cannot be read apart
        if "@" in url or "?" in url or "#" in url:
            return "a URL that cannot be parsed, with '@', '?' or '#', is not accepted; " + HOW_TO_PASS_KEYS
        return None
    if "@" in parts.netloc:
        return "credentials in the URL (user:password@host) are not accepted; " + HOW_TO_PASS_KEYS
    for name, value in [*parse_qsl(parts.query, keep_blank_values=True),
                        *parse_qsl(parts.fragment, keep_blank_values=True)]:  # fmt: skip
        risky = _key_shaped_part(name) or any(s in name for s in secrets)
        if risky or (value and (name.lower() not in SAFE_QUERY_NAMES or value_problem(value, secrets))):
            shown = name if _PLAIN_NAME.match(name) and not risky else "a parameter"
            return (
                f"a value in the URL's query string or fragment ({shown}=...) is not accepted: every one is "
                f"taken for a secret except {', '.join(SAFE_QUERY_NAMES)}; " + HOW_TO_PASS_KEYS
            )
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
    None for a variable name (set, or shaped like one: ``MY_KEY``), else the reason (the value not shown)."""
    secrets = secret_values() if secrets is None else list(secrets)
    plausible = ENV_NAME.match(name) and not looks_like_key(name) and name not in secrets
    if plausible and (name in os.environ or _looks_like_var_name(name)):
        return None
    return (
        "must be the NAME of a set environment variable (e.g. OPENAI_API_KEY), not a key value "
        "(the value given is not shown); " + HOW_TO_PASS_KEYS
    )


def _looks_like_var_name(name: str) -> bool:
    """Whether an unset name reads as a variable name (``MY_GATEWAY_KEY``), not a pasted upper-case key
    (``AKIAIOSFODNN7EXAMPLE``): upper case, words of at most 16 characters, at most 4 digits."""
    return bool(_CONVENTIONAL_ENV.match(name)) and (
        all(len(word) <= 16 for word in name.split("_")) and sum(c.isdigit() for c in name) <= 4
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
            shown = shown_name(str(name), secrets)
            key = f"{path}.{shown}" if path else shown
            if shown != str(name):
                return key, "a config key name that is a key or a secret is not accepted; " + HOW_TO_PASS_KEYS
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
    if _looks_like_var_name(name) and name not in secret_values():
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
    """At job start: treat every variable the config names as a key or header source as a secret (whatever
    its name), warn about one that holds no real key, and redact secret values from every log record."""
    register_key_sources(cfg)
    warn_weak_keys()
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


def argument_problem(arg: str) -> tuple[str, str] | None:
    """Why a command-line argument must be refused before anything reads it: an override
    (:func:`override_problem`), a flag's value (``--config-name=sk-...``) or a bare word (the value of
    ``--config-name sk-...``) that is or holds a secret. ``(what to name, reason)``, never the value."""
    if arg.startswith("-"):
        flag, _, value = arg.partition("=")
        reason = value_problem(value or flag.lstrip("-"))
        return (shown_name(flag), reason) if reason else None
    if "=" not in arg:
        reason = value_problem(arg)
        return ("command line", reason) if reason else None
    return override_problem(arg)


def override_problem(arg: str) -> tuple[str, str] | None:
    """Why a command-line override must be refused before Hydra sees it: ``(key, reason)``; None when clean.

    A plain text check, so it needs no Hydra parse (whose error messages echo the value): secret-named keys,
    key-shaped key names (``+model.sk-...=1``), values that are or hold a key (each element of a list, sweep or
    mapping too), secrets from the environment, URLs carrying one; under ``*_env`` keys (``api_key_env``,
    ``headers_env.<Header>``) the values must be variable names. The key is named with any secret part of it
    shown as ``***redacted***``.
    """
    if arg.startswith("-") or "=" not in arg:
        return None
    key, _, value = arg.lstrip("+~").partition("=")
    key, value = key.strip(), value.strip()
    parts = re.split(r"[./@]", key)
    secrets = secret_values()
    shown = ".".join(shown_name(p, secrets) for p in parts)
    if shown != ".".join(parts):
        return shown, "a config key name that is a key or a secret is not accepted; " + HOW_TO_PASS_KEYS
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
