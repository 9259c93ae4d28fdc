"""What a job (or a sweep) would ask and cost: :class:`Estimate`, built from a preview's requests.

Where a game's length depends on the model's choices (its :class:`~trustsim.contract.GameLength`) the
figures are a range: the stand-in plays the longest game (``upper_play``), and the lower figures leave out
the requests the shortest play would not make (``skipped_by_shortest_play``). For example, escape-room games
end on an escape or when every seat is dead (full-length games above, an escape in round 1 below); a
trust-game responder is asked only when the sender sent something. Games without one (reliance, arena)
ask a fixed number of questions. Costs are always a range: the low cost counts the lower requests with the
stand-in's short answers, the high cost every request with its completion-token cap (``max_tokens`` /
``max_completion_tokens``; hidden reasoning tokens are billed as completion tokens). Between them, the
central cost counts the upper requests at their expected answer lengths (:mod:`trustsim.preview.lengths`:
the store's median answer for the model and purpose, else a prior).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from trustsim.contract import GameSpec, game_spec
from trustsim.llm.pricing import Price
from trustsim.preview.client import Request
from trustsim.preview.standin import Play


def play_for(spec: GameSpec, options: Any) -> Play:
    """How the stand-in plays a job of the game ``spec`` with the typed ``game`` group ``options`` so that its
    figures are the upper ones (the game's :attr:`~trustsim.contract.GameLength.upper_play`; default: the
    stand-in's own choices), answering free-text requests as the game declares
    (:attr:`~trustsim.contract.GameSpec.standin_text`)."""
    length = spec.length
    play = length.upper_play(options) if length is not None and length.upper_play is not None else Play()
    return Play(prefer=play.prefer, text={**spec.standin_text, **play.text}, short=spec.short_answers)


@dataclass
class Estimate:
    """Requests, tokens and cost of one job or a sum of jobs (``a + b``). Upper figures unless ``_low``.

    Attributes:
        decisions: LLM decisions asked (requests with purpose ``decision``), stored ones included.
        requests: every LLM request (decisions, verifications, own answers, reflections).
        cached: requests already in the request store (free).
        repeats: requests repeating an earlier one of the same job (free: the store serves them).
        prompt_tokens: prompt tokens of the requests to send (litellm's token counter).
        completion_tokens: expected completion tokens of the requests to send (``completion_basis``).
        cached_tokens, cache_write_tokens: of those prompt tokens, the ones a provider's prompt cache would
            serve and write (the start each request shares with an earlier one of the job; trustsim.llm.caching).
        cost_low, cost_high: USD; None when a model's price is unknown (set ``model.price``).
        cost_estimate: USD at the expected completion tokens (the central figure).
        cost_cached_low, cost_cached_high, cost_cached_estimate: the same with the prompt cache's prices.
        decisions_low, requests_low, prompt_tokens_low, completion_tokens_low: the shortest play (equal to
            the upper figures where the game's length is fixed), with the stand-in's answers.
        completion_tokens_high: every request to send at its completion-token cap.
        completion_basis: where ``completion_tokens`` comes from: ``observed`` (the store's median answer of
            the model and purpose), ``prior`` (:mod:`trustsim.preview.lengths`) or both.
        completion_observed: requests to send whose expected length was observed in the store.
        reasoning_unmeasured: requests to send priced by a prior for a model that reasons (its hidden
            tokens are in no prior: a pilot run measures them).
        game_length: ``fixed`` or ``range`` (the game's length depends on the model's choices).
        invalid: stand-in answers the kit's parser or the game refused (0 in every shipped game).
        jobs: jobs summed; prices: one line per model priced.
        local_s, local_s_low: expected seconds of the requests to send to the embedded model, one call after
            another at its measured pace (None: not measured yet); local_pace: one line per such model.
    """

    decisions: int = 0
    requests: int = 0
    cached: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_low: float | None = 0.0
    cost_high: float | None = 0.0
    repeats: int = 0
    decisions_low: int = 0
    requests_low: int = 0
    prompt_tokens_low: int = 0
    completion_tokens_low: int = 0
    completion_tokens_high: int = 0
    completion_observed: int = 0
    reasoning_unmeasured: int = 0
    cost_estimate: float | None = 0.0
    cached_tokens: int = 0
    cached_tokens_low: int = 0
    cache_write_tokens: int = 0
    cache_write_tokens_low: int = 0
    cost_cached_low: float | None = 0.0
    cost_cached_high: float | None = 0.0
    cost_cached_estimate: float | None = 0.0
    completion_basis: tuple[str, ...] = ()
    game_length: str = "fixed"
    notes: tuple[str, ...] = ()
    prices: tuple[str, ...] = ()
    invalid: int = 0
    local_s: float | None = 0.0
    local_s_low: float | None = 0.0
    local_pace: tuple[str, ...] = ()
    jobs: int = 1
    failed: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def to_send(self) -> int:
        return self.requests - self.cached - self.repeats

    def __add__(self, other: Estimate) -> Estimate:
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            a, b = getattr(self, f.name), getattr(other, f.name)
            if f.name.startswith(("cost_", "local_s")):
                out[f.name] = None if a is None or b is None else a + b
            elif f.name == "game_length":
                out[f.name] = "range" if "range" in (a, b) else "fixed"
            elif f.name == "extra":
                out[f.name] = {}
            elif isinstance(a, tuple):
                out[f.name] = tuple(dict.fromkeys((*a, *b)))
            else:
                out[f.name] = a + b
        return Estimate(**out)

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["to_send"] = self.to_send
        for key in ("completion_basis", "notes", "prices"):
            data[key] = list(data[key])
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Estimate:
        names = {f.name for f in dataclasses.fields(cls)}
        values: dict[str, Any] = {
            k: (tuple(v) if isinstance(v, list) else v) for k, v in data.items() if k in names
        }
        return cls(**values)


def summarise(
    game: str,
    requests: Iterable[Request],
    price: Price | None,
    model_label: str,
    pace: tuple[float, int] | bool | None = False,
) -> Estimate:
    """The estimate of one client's requests in a job of ``game``. ``pace``: for the embedded model, its
    (median seconds per call, stored answers measured) from the request store, or None when not measured
    (``False``: not the embedded model)."""
    requests = list(requests)
    length = game_spec(game).length
    skipped = length.skipped_by_shortest_play if length is not None else (lambda req: False)
    est = Estimate(jobs=0)
    bases: list[str] = []
    for req in requests:
        lower = not skipped(req)
        decision = req.purpose == "decision"
        est.requests += 1
        est.decisions += decision
        est.requests_low += lower
        est.decisions_low += decision and lower
        if req.source == "store":
            est.cached += 1
        elif req.source == "repeat":
            est.repeats += 1
        elif req.call is not None:
            call = req.call
            central = call.central
            est.prompt_tokens += call.prompt_tokens
            est.completion_tokens += central.tokens if central is not None else call.completion_bound
            est.completion_tokens_high += call.completion_cap
            est.cached_tokens += call.cached_tokens
            est.cache_write_tokens += call.cache_write_tokens
            est.invalid += not call.valid
            bases.append(central.basis if central is not None else call.basis)
            est.completion_observed += central is not None and central.basis == "observed"
            est.reasoning_unmeasured += central is not None and central.unmeasured_reasoning
            if lower:
                est.prompt_tokens_low += call.prompt_tokens
                est.completion_tokens_low += call.completion_min
                est.cached_tokens_low += call.cached_tokens
                est.cache_write_tokens_low += call.cache_write_tokens
    est.completion_basis = tuple(dict.fromkeys(sorted(bases)))
    if pace is not False and est.to_send:
        send_low = sum(1 for r in requests if r.source == "send" and not skipped(r))
        if pace is None:
            est.local_s = est.local_s_low = None
            est.local_pace = (f"{model_label}: no answers of it in the request store to time yet",)
        elif isinstance(pace, tuple):
            seconds, n = pace
            est.local_s, est.local_s_low = est.to_send * seconds, send_low * seconds
            est.local_pace = (f"{model_label}: {seconds:.2f} s per call, the median of {n:,} stored answers",)
    if est.requests_low != est.requests:
        est.game_length = "range"
        est.notes = (
            length.note if length is not None else "the game's length depends on the model's choices",
        )
    if price is None:
        est.cost_low = est.cost_high = est.cost_estimate = None if est.to_send else 0.0
        est.cost_cached_low = est.cost_cached_high = est.cost_cached_estimate = est.cost_low
        est.prices = (f"{model_label}: price unknown (set model.price: {{input_per_mtok, output_per_mtok}})",)
    else:
        est.cost_low = price.cost(est.prompt_tokens_low, est.completion_tokens_low)
        est.cost_high = price.cost(est.prompt_tokens, est.completion_tokens_high)
        est.cost_estimate = price.cost(est.prompt_tokens, est.completion_tokens)
        low, high = (
            (est.cached_tokens_low, est.cache_write_tokens_low),
            (est.cached_tokens, est.cache_write_tokens),
        )
        est.cost_cached_low = price.cost(est.prompt_tokens_low, est.completion_tokens_low, *low)
        est.cost_cached_high = price.cost(est.prompt_tokens, est.completion_tokens_high, *high)
        est.cost_cached_estimate = price.cost(est.prompt_tokens, est.completion_tokens, *high)
        where = {
            "config": "model.price",
            "local": "local model",
            "litellm": f"litellm price map '{price.entry}'",
        }
        cache = "".join(
            f" / ${value:g} {what}"
            for value, what in (
                (price.cache_read_per_mtok, "cache read"),
                (price.cache_write_per_mtok, "cache write"),
            )
            if value is not None
        )
        est.prices = (
            f"{model_label}: ${price.input_per_mtok:g} in / ${price.output_per_mtok:g} out{cache} per Mtok "
            f"({where[price.source]})",
        )
    return est


def _span(low: float, high: float, fmt: str = "{:,.0f}") -> str:
    return fmt.format(high) if round(low, 6) == round(high, 6) else f"{fmt.format(low)}–{fmt.format(high)}"


def _money(value: float | None) -> str:
    if value is None:
        return "unknown"
    return f"${value:,.2f}" if value >= 0.01 or value == 0 else f"${value:.4f}"


BASES = {
    "observed": "the median answer of this model in the request store",
    "prior": "prior answer lengths",
    "schema": "the answer schema's bound",
    "max_tokens": "the token caps",
    "stand-in": "the stand-in answers",
}


def _basis(est: Estimate) -> str:
    """Where the expected completion tokens come from (several sources: how many requests each)."""
    to_send = est.to_send
    if est.completion_basis == ("observed", "prior") or len(est.completion_basis) > 1:
        return (
            f"{est.completion_observed:,} of {to_send:,} requests from {BASES['observed']}, the rest from "
            f"{BASES['prior']}"
        )
    return BASES.get(est.completion_basis[0], est.completion_basis[0]) if est.completion_basis else "-"


def lines(est: Estimate) -> list[str]:
    """The estimate as indented lines (per job or total)."""
    span = est.game_length == "range"
    out = [
        f"  decisions {_span(est.decisions_low, est.decisions)}, requests {_span(est.requests_low, est.requests)}"
        f": {est.cached:,} in the request store (free)"
        + (f", {est.repeats:,} repeated (free)" if est.repeats else "")
        + f", {_span(est.requests_low - est.cached - est.repeats, est.to_send) if span else f'{est.to_send:,}'}"
        " to send",
        f"  prompt tokens {_span(est.prompt_tokens_low, est.prompt_tokens)} (litellm's token counter; a floor "
        "where prompts quote the model's earlier answers, which the stand-in keeps short)",
        f"  completion tokens ≈ {est.completion_tokens:,} expected ({_basis(est)}); "
        f"{est.completion_tokens_low:,} (stand-in answers) to {est.completion_tokens_high:,} (token caps)",
    ]
    if est.cost_low is None or est.cost_high is None or est.cost_estimate is None:
        cost = "unknown"
    elif round(est.cost_low, 6) == round(est.cost_high, 6):
        cost = _money(est.cost_low)
    else:
        cost = f"≈ {_money(est.cost_estimate)} expected ({_money(est.cost_low)} to {_money(est.cost_high)})"
    out.append(f"  cost {cost}")
    if est.reasoning_unmeasured:
        out.append(
            f"    expected: {est.reasoning_unmeasured:,} requests priced by a prior for a model that reasons; "
            "its hidden reasoning tokens are not in the prior (the high end bounds them). A short pilot "
            "(e.g. game.games=1) stores answers whose median the next preview uses"
        )
    out.append(_cached_line(est))
    if est.local_pace:
        when = _time(est)
        when = when if when == "unknown" else f"≈ {when}"
        out.append(
            f"  time on the embedded model {when}, one call after another ({'; '.join(est.local_pace)})"
        )
    for price in est.prices:
        out.append(f"    price {price}")
    for note in est.notes:
        out.append(f"    range: {note}")
    if est.invalid:
        out.append(f"    warning: {est.invalid} stand-in answers were refused by the game's parser")
    return out


def _clock(seconds: float) -> str:
    s = round(seconds)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


def _cost(est: Estimate) -> str:
    """The expected cost, short (``unknown`` when a model has no price)."""
    return "unknown" if est.cost_estimate is None else _money(est.cost_estimate)


def _time(est: Estimate) -> str:
    if est.local_s is None or est.local_s_low is None:
        return "unknown"
    low, high = _clock(est.local_s_low), _clock(est.local_s)
    return high if low == high else f"{low}–{high}"


def table(rows: Sequence[tuple[str, Estimate]]) -> str:
    """One row per job (and a total row): requests, those to send, tokens, the expected cost and, for the
    embedded model, the expected time."""
    head: tuple[str, ...] = (
        "job",
        "decisions",
        "requests",
        "to send",
        "prompt tokens",
        "completion tokens",
        "cost",
    )
    timed = any(e.local_pace for _, e in rows)
    body = [
        (
            name,
            _span(e.decisions_low, e.decisions),
            _span(e.requests_low, e.requests),
            _span(e.requests_low - e.cached - e.repeats, e.to_send)
            if e.game_length == "range"
            else f"{e.to_send:,}",
            _span(e.prompt_tokens_low, e.prompt_tokens),
            f"≈ {e.completion_tokens:,}",
            _cost(e),
        )
        + ((_time(e),) if timed else ())
        for name, e in rows
    ]
    head += ("time (embedded)",) if timed else ()
    widths = [max(len(r[i]) for r in (head, *body)) for i in range(len(head))]
    return "\n".join(
        "  "
        + "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))
        )
        for r in (head, *body)
    )


def _cached_line(est: Estimate) -> str:
    """The cost with the providers' prompt caches: cached prompt tokens at the cache-read price (written ones
    at the cache-write price)."""
    low, high, central = est.cost_cached_low, est.cost_cached_high, est.cost_cached_estimate
    if low is None or high is None or central is None:
        return "  with prompt caching: unknown"
    if round(low, 6) == round(high, 6):
        cost = _money(low)
    else:
        cost = f"≈ {_money(central)} expected ({_money(low)} to {_money(high)})"
    if not est.cached_tokens and not est.cache_write_tokens:
        return f"  with prompt caching: {cost} (no prompt prefix this model's provider would cache and bill less)"
    written = f", {est.cache_write_tokens:,} written to it" if est.cache_write_tokens else ""
    return (
        f"  with prompt caching: {cost} ({_span(est.cached_tokens_low, est.cached_tokens)} prompt tokens repeat "
        f"the start of an earlier request: read from the provider's cache{written})"
    )
