"""Schema-guided decoding for the embedded model, with per-prompt-prefix KV state reuse.

llama.cpp's JSON-schema grammar samples every token of an answer, the JSON punctuation and key names
included, and checks the grammar against the whole vocabulary at each step. Here the answer schema is
compiled into a plan: text the schema fixes (``{"action": ``, ``, "confidence": {"Q1": ``) is appended
without sampling and evaluated in one batch; only the choices (an enum value, a ``oneOf`` branch, a free
string, a number) are sampled, each restricted to the tokens that keep the answer valid. The answer is the
same JSON object the grammar allows (canonical spacing, no escapes in free strings), decoded with the
same sampling settings (temperature, top_k, top_p, min_p, seed).

Prompt prefixes are reused: the live context keeps its longest common prefix with the next prompt, and a
RAM cache of saved KV states (one per recent prompt; ``local.state_cache_mb``) lets each agent resume from
its own previous prompt when agents interleave. :class:`CallStats` counts what each call evaluated.

Schemas outside the supported subset (``$ref``, arrays, patterns, ...) raise :class:`Unsupported`; the
caller then falls back to llama.cpp's grammar. What the public ``Llama`` API does not offer (KV truncation
and states, the last logits, special tokens) comes from :mod:`trustsim.llm.llama_internals`, which checks
the llama-cpp-python version.
"""

from __future__ import annotations

import json
import math
import time
from collections import OrderedDict
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from trustsim.llm import llama_internals as internals

TOP_K, TOP_P, MIN_P = 40, 0.95, 0.05  # llama-cpp-python's create_chat_completion defaults


class Unsupported(ValueError):
    """The schema uses a construct the planner does not handle (use the grammar instead)."""


@dataclass
class CallStats:
    """What one call cost: prompt tokens, how many came from the KV cache, answer tokens sampled and
    forced (appended without sampling), and where the time went."""

    prompt_tokens: int = 0
    reused_tokens: int = 0  # prompt tokens served from the live context or a saved state
    evaluated_tokens: int = 0  # prompt tokens run through the model
    sampled_tokens: int = 0
    forced_tokens: int = 0
    state_loads: int = 0
    prefill_s: float = 0.0
    decode_s: float = 0.0
    state_s: float = 0.0  # saving and loading KV states

    @property
    def completion_tokens(self) -> int:
        return self.sampled_tokens + self.forced_tokens

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


# -- plan ---------------------------------------------------------------------------------------------
@dataclass
class Choice:
    """Pick one of several JSON texts (enum values, consts of oneOf branches)."""

    options: list[str]
    branches: list[list[Any]] | None = None  # the plan to continue with, per option (oneOf)


@dataclass
class FreeString:
    max_chars: int
    min_chars: int = 0


@dataclass
class FreeNumber:
    integer: bool
    minimum: float | None = None
    maximum: float | None = None

    def viable(self, text: str) -> bool:
        """Whether some number that starts with ``text`` lies within the bounds."""
        lo = -math.inf if self.minimum is None else float(self.minimum)
        hi = math.inf if self.maximum is None else float(self.maximum)
        if text in ("", "-"):
            return text == "" or lo < 0
        sign = -1.0 if text.startswith("-") else 1.0
        body = text.lstrip("-")
        spans: list[tuple[float, float]] = []
        if "." in body:
            whole, frac = body.split(".", 1)
            base = float(f"{whole}.{frac or 0}")
            spans.append((base, base + 10.0 ** -len(frac)))
        else:
            base = float(body)
            spans.append((base, base + (0 if self.integer else 1)))
            if body != "0":
                spans += [(base * 10**k, base * 10**k + 10**k - 1) for k in range(1, 13 - len(body))]
        for a, b in spans:
            a, b = sorted((sign * a, sign * b))
            if a <= hi and b >= lo:
                return True
        return False

    def complete(self, text: str) -> bool:
        """Whether ``text`` is a finished number within the bounds."""
        if not text or not text[-1].isdigit():
            return False
        value = float(text)
        return (self.minimum is None or value >= self.minimum) and (
            self.maximum is None or value <= self.maximum
        )


Step = str | Choice | FreeString | FreeNumber


def _type(node: dict[str, Any]) -> str | None:
    t = node.get("type")
    return t if isinstance(t, str) or t is None else None


def plan(schema: dict[str, Any]) -> list[Step]:
    """The steps that write an answer valid under ``schema`` (a flat list; ``Choice`` may branch)."""
    out: list[Step] = []
    _plan(schema, out)
    return _merge(out)


def _plan(node: dict[str, Any], out: list[Any]) -> None:
    if not isinstance(node, dict):
        raise Unsupported(f"schema node {node!r}")
    if "const" in node:
        out.append(json.dumps(node["const"], ensure_ascii=False))
        return
    if "enum" in node:
        values = node["enum"]
        if not values:
            raise Unsupported("empty enum")
        out.append(Choice([json.dumps(v, ensure_ascii=False) for v in values]))
        return
    alternatives = node.get("oneOf") or node.get("anyOf")
    if alternatives:
        out.append(_branching(alternatives))
        return
    kind = _type(node)
    if kind == "object" or (kind is None and "properties" in node):
        _object(node, out)
    elif kind == "string":
        if any(k in node for k in ("pattern", "format")):
            raise Unsupported("string pattern/format")
        out.append('"')
        out.append(FreeString(int(node.get("maxLength", 400)), int(node.get("minLength", 0))))
        out.append('"')
    elif kind in ("integer", "number"):
        if any(k in node for k in ("exclusiveMinimum", "exclusiveMaximum", "multipleOf")):
            raise Unsupported("exclusive bounds / multipleOf")
        out.append(FreeNumber(kind == "integer", node.get("minimum"), node.get("maximum")))
    elif kind == "boolean":
        out.append(Choice(["true", "false"]))
    elif kind == "null":
        out.append("null")
    else:
        raise Unsupported(f"schema type {kind!r}")


def _object(node: dict[str, Any], out: list[Any]) -> None:
    props = node.get("properties") or {}
    required = node.get("required") or []
    if node.get("additionalProperties") not in (None, False) and not props:
        raise Unsupported("free-form object")
    keys = [k for k in props if k in required] + [k for k in required if k not in props]
    if any(k not in props for k in keys):
        raise Unsupported("required key without a property schema")
    out.append("{")
    for i, key in enumerate(keys):
        out.append((", " if i else "") + json.dumps(key, ensure_ascii=False) + ": ")
        _plan(props[key], out)
    out.append("}")


def _branching(alternatives: list[dict[str, Any]]) -> Any:
    """``oneOf`` objects told apart by a leading const property (the decision schemas' ``action``)."""
    first_keys = set()
    options, branches = [], []
    for alt in alternatives:
        props = alt.get("properties") or {}
        required = alt.get("required") or []
        keys = [k for k in props if k in required]
        if not keys or "const" not in props[keys[0]]:
            raise Unsupported("oneOf without a leading const discriminator")
        first_keys.add(keys[0])
        rest: list[Any] = []
        _object({**alt, "properties": {k: props[k] for k in keys[1:]}, "required": keys[1:]}, rest)
        # rest is '{' ... '}'; the branch continues after the discriminator value
        body = rest[1:]
        if len(body) > 1:
            body[0] = ", " + body[0]
        options.append(json.dumps(props[keys[0]]["const"], ensure_ascii=False))
        branches.append(_merge(body))
    if len(first_keys) != 1:
        raise Unsupported("oneOf branches with different discriminators")
    key = first_keys.pop()
    return _Branch("{" + json.dumps(key, ensure_ascii=False) + ": ", Choice(options, branches))


@dataclass
class _Branch:
    prefix: str
    choice: Choice


def _merge(steps: list[Any]) -> list[Any]:
    """Join adjacent texts; unfold a branching oneOf into its prefix and choice."""
    out: list[Any] = []
    for step in steps:
        if isinstance(step, _Branch):
            out.extend(_merge([step.prefix]))
            step = step.choice
        if isinstance(step, str) and out and isinstance(out[-1], str):
            out[-1] += step
        else:
            out.append(step)
    return out


# -- the vocabulary ------------------------------------------------------------------------------------
class Vocab:
    """Token pieces and masks for free strings and numbers (built once per model)."""

    def __init__(self, llama: Any) -> None:
        self.n = llama.n_vocab()
        self.pieces: list[bytes] = [llama.detokenize([t]) for t in range(self.n)]
        self.eog, control = internals.special_tokens(llama)
        self.texts: list[str | None] = []
        for t, piece in enumerate(self.pieces):
            try:
                text = None if self.eog[t] or control[t] or not piece else piece.decode("utf-8")
            except UnicodeDecodeError:
                text = None
            self.texts.append(text)
        safe = np.zeros(self.n, dtype=bool)
        closing = np.zeros(self.n, dtype=bool)
        digits = np.zeros(self.n, dtype=bool)
        for t, text in enumerate(self.texts):
            if text is None:
                continue
            head = text.split('"', 1)[0]
            ok_head = not any(c == "\\" or ord(c) < 0x20 or c == "\x7f" for c in head)
            if '"' in text:
                closing[t] = ok_head
            else:
                safe[t] = ok_head
            digits[t] = text.isascii() and text.isdigit()
        self.string_safe = safe
        self.string_closing = closing
        self.digits = digits
        self.minus = np.array([t == "-" for t in self.texts], dtype=bool)
        self.dot = np.array([t == "." for t in self.texts], dtype=bool)
        # the token ids a free string may continue with (index arrays: a sampler need not search a mask)
        self.string_inner = np.flatnonzero(safe).astype(np.intc)
        self.string_any = np.flatnonzero(safe | closing).astype(np.intc)
        self.number_parts = {
            integer: np.flatnonzero(digits | self.minus | (digits if integer else self.dot))
            for integer in (True, False)
        }


# -- the engine ---------------------------------------------------------------------------------------
class Engine:
    """Decodes prompts on one ``Llama`` instance (calls are serialised by the caller)."""

    def __init__(self, llama: Any, state_cache_mb: int) -> None:
        internals.check_version()
        self.llama = llama
        self.capacity = state_cache_mb << 20
        self.states: OrderedDict[tuple[int, ...], Any] = OrderedDict()  # prompt tokens -> KV state buffer
        self._vocab: Vocab | None = None
        self._tokens: dict[str, list[int]] = {}
        self.formatter = internals.chat_formatter(llama)

    @property
    def vocab(self) -> Vocab:
        if self._vocab is None:
            self._vocab = Vocab(self.llama)
        return self._vocab

    # -- prompt and KV reuse -------------------------------------------------------------------------
    def prompt_tokens(self, messages: list[dict[str, Any]]) -> list[int]:
        if self.formatter is None:
            raise Unsupported("the model has no chat template")
        prompt = self.formatter(messages=messages).prompt
        return self.llama.tokenize(prompt.encode("utf-8"), add_bos=False, special=True)

    def _live_prefix(self, tokens: list[int]) -> int:
        n = min(self.llama.n_tokens, len(tokens))
        return _common(self.llama.input_ids[:n], tokens)

    def prefill(self, tokens: list[int], stats: CallStats) -> None:
        """Make the context hold ``tokens``, reusing the longest cached prefix; logits ready to sample."""
        start = time.perf_counter()
        live = self._live_prefix(tokens)
        best_key, best = None, live
        for key in self.states:
            n = _common(np.asarray(key[: len(tokens)], dtype=np.intc), tokens)
            if n > best:
                best_key, best = key, n
        if best_key is not None:
            t0 = time.perf_counter()
            self._load(best_key)
            stats.state_loads += 1
            stats.state_s += time.perf_counter() - t0
        keep = min(best, len(tokens) - 1)  # at least one token is evaluated: fresh logits
        self._truncate(keep)
        self.llama.eval(tokens[keep:])
        stats.prompt_tokens = len(tokens)
        stats.reused_tokens = keep
        stats.evaluated_tokens = len(tokens) - keep
        if self.capacity > 0:
            t0 = time.perf_counter()
            self._save(tuple(tokens))
            stats.state_s += time.perf_counter() - t0
        stats.prefill_s = time.perf_counter() - start - stats.state_s

    def _truncate(self, n: int) -> None:
        internals.truncate(self.llama, n)

    def _save(self, key: tuple[int, ...]) -> None:
        """Save the KV state after the prompt ``key`` (the context holds exactly it); oldest dropped first."""
        self.states.pop(key, None)
        self.states[key] = internals.save_state(self.llama)
        total = sum(len(b) for b in self.states.values())
        while total > self.capacity and len(self.states) > 1:
            _, old = self.states.popitem(last=False)
            total -= len(old)

    def _load(self, key: tuple[int, ...]) -> None:
        self.states.move_to_end(key)
        internals.load_state(self.llama, self.states[key], key)

    # -- sampling ------------------------------------------------------------------------------------
    def _logits(self) -> np.ndarray:
        return internals.last_logits(self.llama)

    def _eval(self, tokens: list[int], stats: CallStats) -> None:
        if tokens:
            t0 = time.perf_counter()
            self.llama.eval(tokens)
            stats.decode_s += time.perf_counter() - t0

    def _tok(self, text: str) -> list[int]:
        toks = self._tokens.get(text)
        if toks is None:
            toks = self.llama.tokenize(text.encode("utf-8"), add_bos=False, special=False)
            self._tokens[text] = toks
        return toks

    def complete(
        self, messages: list[dict[str, Any]], schema: dict[str, Any] | None, params: dict[str, Any]
    ) -> tuple[str, str, CallStats]:
        """The answer text, the finish reason and the call's stats. ``schema`` None: free text."""
        steps = plan(schema) if schema is not None else None  # Unsupported before any work
        stats = CallStats()
        tokens = self.prompt_tokens(messages)
        if len(tokens) >= self.llama.n_ctx():
            raise ValueError(
                f"prompt of {len(tokens)} tokens exceeds the context window ({self.llama.n_ctx()})"
            )
        self.prefill(tokens, stats)
        sampler = Sampler(params)
        if steps is None:
            text, finish = self._free_text(sampler, params, stats)
        else:
            writer = _Writer(self, sampler, stats, int(params.get("max_tokens") or 0))
            writer.run(steps)
            text, finish = writer.text(), "stop"
        return text, finish, stats

    def _free_text(self, sampler: Sampler, params: dict[str, Any], stats: CallStats) -> tuple[str, str]:
        limit = int(params.get("max_tokens") or 256)
        stops = params.get("stop") or []
        stops = [stops] if isinstance(stops, str) else list(stops)
        out = b""
        room = self.llama.n_ctx() - self.llama.n_tokens - 1
        for _ in range(min(limit, room)):
            tok = sampler.sample(self._logits(), None)
            stats.sampled_tokens += 1
            if self.vocab.eog[tok]:
                return out.decode("utf-8", errors="ignore"), "stop"
            out += self.vocab.pieces[tok]
            text = out.decode("utf-8", errors="ignore")
            for s in stops:
                if s and s in text:
                    return text[: text.index(s)], "stop"
            self._eval([tok], stats)
        return out.decode("utf-8", errors="ignore"), "length"


def _common(a: np.ndarray, b: list[int]) -> int:
    n = min(len(a), len(b))
    if n == 0:
        return 0
    eq = np.asarray(a[:n]) == np.asarray(b[:n], dtype=np.intc)
    return n if eq.all() else int(np.argmin(eq))


def _number(params: dict[str, Any], key: str, default: float) -> float:
    """``params[key]`` as a float; ``default`` when it is missing or null."""
    value = params.get(key)
    return float(value) if value is not None else default


class Sampler:
    """temperature / top_k / top_p / min_p sampling over an allowed token set, seeded."""

    def __init__(self, params: dict[str, Any]) -> None:
        self.temperature = _number(params, "temperature", 0.2)
        self.top_k = int(params.get("top_k") or TOP_K)
        self.top_p = _number(params, "top_p", TOP_P)
        self.min_p = _number(params, "min_p", MIN_P)
        self.rng = np.random.default_rng(int(params.get("seed") or 0))

    def sample(self, logits: np.ndarray, allowed: np.ndarray | None) -> int:
        """A token id; ``allowed``: a boolean mask or an index array (None: any token)."""
        if allowed is None:
            idx = np.arange(len(logits))
        elif allowed.dtype == bool:
            idx = np.flatnonzero(allowed)
        else:
            idx = allowed
        if len(idx) == 0:
            raise RuntimeError("no token can continue the answer")
        vals = logits[idx]  # float32: the top k are chosen on the same order as in float64
        if self.temperature <= 0 or len(idx) == 1:
            return int(idx[int(np.argmax(vals))])
        k = min(self.top_k, len(idx)) if self.top_k > 0 else len(idx)
        if k < len(idx):
            part = np.argpartition(-vals, k - 1)[:k]
            idx, vals = idx[part], vals[part]
        vals = vals.astype(np.float64)
        order = np.argsort(-vals, kind="stable")
        idx, vals = idx[order], vals[order]
        probs = np.exp(vals - vals[0])
        probs /= probs.sum()
        if self.top_p < 1.0:
            cut = int(np.searchsorted(np.cumsum(probs), self.top_p)) + 1
            idx, vals, probs = idx[:cut], vals[:cut], probs[:cut]
        if self.min_p > 0:
            keep = probs >= self.min_p * probs[0]
            idx, vals = idx[keep], vals[keep]
        scaled = np.exp((vals - vals[0]) / self.temperature)
        scaled /= scaled.sum()
        return int(idx[int(self.rng.choice(len(idx), p=scaled))])


class _Writer:
    """Walks a plan. The answer's text is kept, and before each sampled token the context is brought to
    the text's own tokenisation (what the model would have read had it written the text itself): forced
    text is evaluated in one batch, and a token boundary that text appended later changes (``"`` then
    ``,`` is ``",``) is re-evaluated from the first differing token."""

    def __init__(self, engine: Engine, sampler: Sampler, stats: CallStats, max_tokens: int) -> None:
        self.e = engine
        self.sampler = sampler
        self.stats = stats
        self.parts: list[str] = []
        self.base = engine.llama.n_tokens  # the prompt's length
        self.kv: list[int] = []  # answer tokens in the context (evaluated) or queued
        self.n_eval = 0
        self.budget = max_tokens if max_tokens > 0 else 10**9  # sampled tokens inside free strings

    def text(self) -> str:
        return "".join(self.parts)

    def _target(self, target: list[int]) -> None:
        """Queue ``target`` as the answer's tokens, dropping evaluated tokens it does not share."""
        p = _common(np.asarray(self.kv, dtype=np.intc), target)
        if p < self.n_eval:
            self.n_eval = p
            self.e._truncate(self.base + p)
        self.kv = list(target)

    def _logits(self) -> np.ndarray:
        if self.n_eval == len(self.kv) and self.e.llama.n_tokens != self.base + self.n_eval:
            self.n_eval -= 1  # rolled back with nothing new: refresh the last token's logits
            self.e._truncate(self.base + self.n_eval)
        if len(self.kv) > self.n_eval:
            self.e._eval(self.kv[self.n_eval :], self.stats)
            self.n_eval = len(self.kv)
        return self.e._logits()

    def _sync(self) -> None:
        self._target(self.e._tok(self.text()) if self.parts else [])

    def _sampled(self, tok: int) -> None:
        self.stats.sampled_tokens += 1
        self.kv.append(tok)

    def run(self, steps: list[Any]) -> None:
        self._steps(steps)
        self.stats.forced_tokens = max(0, len(self.e._tok(self.text())) - self.stats.sampled_tokens)

    def _steps(self, steps: list[Any]) -> None:
        for step in steps:
            if isinstance(step, str):
                self.parts.append(step)
            elif isinstance(step, Choice):
                i = self.choose(step.options)
                if step.branches is not None:
                    self._steps(step.branches[i])
            elif isinstance(step, FreeString):
                self.string(step)
            else:
                self.number(step)

    def choose(self, options: list[str]) -> int:
        """Sample one option token by token over the trie of the answer's tokenisations with each option
        appended (the text before it ends as the model would have tokenised it). Where an option is
        complete but longer ones continue (``0.0`` / ``0.05``), ending it competes as the model's best
        token outside the trie."""
        text = self.text()
        seqs = [self.e._tok(text + o) for o in options]
        p0 = min(_common(np.asarray(seqs[0], dtype=np.intc), q) for q in seqs)
        self._target(seqs[0][:p0])
        alive = list(range(len(options)))
        pos = p0
        while True:
            done = [i for i in alive if len(seqs[i]) == pos]
            nexts = sorted({seqs[i][pos] for i in alive if len(seqs[i]) > pos})
            if not nexts:
                break
            if len(nexts) == 1 and not done:
                tok = nexts[0]
                self.kv.append(tok)
            else:
                logits = self._logits()
                allowed = np.array(nexts, dtype=np.intc)
                if done:
                    outside = logits.copy()
                    outside[allowed] = -np.inf
                    allowed = np.append(allowed, np.intc(int(np.argmax(outside))))
                tok = self.sampler.sample(logits, allowed)
                if tok not in nexts:
                    alive = done
                    break
                self._sampled(tok)
            alive = [i for i in alive if len(seqs[i]) > pos and seqs[i][pos] == tok]
            pos += 1
        chosen = min(alive, key=lambda i: len(seqs[i]))
        self.parts.append(options[chosen])
        return chosen

    def string(self, step: FreeString) -> None:
        v = self.e.vocab
        self._sync()
        chars = 0
        out: list[str] = []
        while chars < step.max_chars and self.budget > 0:
            allowed = v.string_any if chars >= step.min_chars else v.string_inner
            tok = self.sampler.sample(self._logits(), allowed)
            self.budget -= 1
            self.stats.sampled_tokens += 1
            text = v.texts[tok] or ""
            if v.string_closing[tok]:
                out.append(text.split('"', 1)[0][: step.max_chars - chars])
                break
            piece = text[: step.max_chars - chars]
            out.append(piece)
            chars += len(piece)
            if piece == text:
                self.kv.append(tok)
        self.parts.append("".join(out))

    def number(self, step: FreeNumber) -> None:
        """An integer or decimal number (at most 12 characters) within the schema's bounds; it ends where
        the model prefers a token that is not part of a number (once the number is complete)."""
        v = self.e.vocab
        self._sync()
        out = ""
        candidates = v.number_parts[step.integer]
        while len(out) < 12:
            ok = [t for t in candidates if self._extends(out, v.texts[t] or "", step)]
            can_end = step.complete(out)
            if len(ok) == 1 and not can_end:  # one way on (``1.`` within [0, 1]): no logits needed
                out += v.texts[ok[0]] or ""
                self.kv.append(int(ok[0]))
                continue
            logits = self._logits()
            allowed = np.array(ok, dtype=np.intc)
            if can_end:
                outside = logits.copy()
                outside[candidates] = -np.inf
                allowed = np.append(allowed, np.intc(int(np.argmax(outside))))
            if len(allowed) == 0:
                break
            tok = self.sampler.sample(logits, allowed)
            if tok not in ok:
                break
            out += v.texts[tok] or ""
            self._sampled(tok)
        if not step.complete(out):
            out = self._nearest(out, step)
        self.parts.append(out)

    @staticmethod
    def _extends(out: str, text: str, step: FreeNumber) -> bool:
        new = out + text
        if text == "-" and out:
            return False
        if text == "." and ("." in out or not out or not out[-1].isdigit()):
            return False
        body = new.lstrip("-")
        if len(body) > 1 and body[0] == "0" and body[1].isdigit():
            return False  # no leading zeros
        return step.viable(new)

    @staticmethod
    def _nearest(out: str, step: FreeNumber) -> str:
        """Finish a number cut at 12 characters or left incomplete (rare): the bound it is closest to."""
        try:
            value = float(out.rstrip(".-") or 0)
        except ValueError:
            value = 0.0
        if step.minimum is not None:
            value = max(value, float(step.minimum))
        if step.maximum is not None:
            value = min(value, float(step.maximum))
        return str(int(value)) if step.integer or (value.is_integer() and "." not in out) else repr(value)
