"""The ``trustsim`` prompt style: a rules message shared by every seat (so a local model can reuse its KV
prefix), then the seat's memory and the current state, and a JSON answer with per-puzzle confidence.

(The ``reference`` style, the study's exact texts, is in ``reference_prompt.py``; docs/prompts.md compares
them.)"""

from __future__ import annotations

from typing import Any

from games.escape_room.types import Observation, Puzzle, RoundReport

CONFIDENCE_GRID = tuple(round(i / 20, 2) for i in range(21))  # 0, 0.05, ..., 1 for constrained decoding


def rules_text(coins: int, max_rounds: int | None, compact: bool = False) -> str:
    """The rules message: identical for every seat and game of a run (``compact``: the same rules in
    fewer words, for small local models; ``model.prompt_compact``)."""
    rounds = f"after round {max_rounds}" if max_rounds else "after the last round"
    if compact:
        return _compact_rules(coins, rounds)
    return (
        "You play a cooperative escape-room game with four players A, B, C, D. Each player owns one "
        "arithmetic puzzle (Q1-Q4) and sealed its answer in a capsule labelled Q<k>-<owner>. Everyone sees "
        "each capsule's label and its endorsers (players who vouch for it), never the number inside.\n"
        "Each round every living player picks one action at the same time:\n"
        "- pass: do nothing.\n"
        "- verify: pay 1 coin and solve puzzle Q<target> yourself. A matching answer adds you as an "
        "endorser of that capsule; a different answer opens a new capsule Q<target>-<you>. You cannot "
        "verify your own puzzle or verify with 0 coins.\n"
        "- volunteer: submit a password naming one capsule per puzzle. If all four capsules are right, "
        "every living player escapes; if any is wrong, the volunteer dies.\n"
        "Verifications resolve first. If several players volunteer, one is picked at random. If nobody "
        "volunteers, one random living player (any of A-D) is eliminated. The game ends on escape, when "
        f"everyone is dead, or {rounds}. Everyone starts each game with {coins} coins. Your score is your "
        "remaining coins if the team escapes and you survive, else 0.\n"
        'Answer with one JSON object: {"action": "pass" | "verify" | "volunteer", "target": <puzzle number, '
        'verify only>, "password": {"Q1": "<label>", "Q2": "<label>", "Q3": "<label>", "Q4": "<label>"} '
        '(volunteer only), "confidence": {"Q1": p, "Q2": p, "Q3": p, "Q4": p}, "reasoning": "<brief>"}. '
        "confidence: your probability (0 to 1) that the capsule you trust most for each puzzle holds the "
        "right answer."
    )


def _compact_rules(coins: int, rounds: str) -> str:
    return (
        "Cooperative escape room, players A, B, C, D. Each owns one arithmetic puzzle (Q1-Q4) and sealed its "
        "answer in capsule Q<k>-<owner>. All see each capsule's label and endorsers (players vouching for "
        "it), never its number.\n"
        "Each round every living player acts at once:\n"
        "- pass.\n"
        "- verify: pay 1 coin, solve Q<target> yourself; a match endorses that capsule, a different answer "
        "opens capsule Q<target>-<you>. Not your own puzzle, not with 0 coins.\n"
        "- volunteer: submit a password naming one capsule per puzzle; all four right: every living player "
        "escapes; any wrong: the volunteer dies.\n"
        "Verifications resolve first. Several volunteers: one is picked at random. No volunteer: a random "
        f"living player (any of A-D) is eliminated. A game ends on escape, when all are dead, or {rounds}. "
        f"Each game everyone starts with {coins} coins. Score: your remaining coins if the team escapes and "
        "you survive, else 0.\n"
        'Answer one JSON object: {"action": "pass" | "verify" | "volunteer", "target": <puzzle number, '
        'verify only>, "password": {"Q1": "<label>", ..., "Q4": "<label>"} (volunteer only), "confidence": '
        '{"Q1": p, ..., "Q4": p}, "reasoning": "<brief>"}. confidence: your probability (0 to 1) that the '
        "capsule you trust most for each puzzle is right."
    )


def announcement_text(report: RoundReport, announce_passes: bool = False) -> str:
    """A round's public announcement. Passes are listed only with ``game.announce_passes`` (the reference
    never announced them; listing the partner's "Pass" every round tells agents that D never acts)."""
    return report.text(announce_passes)


def state_text(obs: Observation, memory: str, history: list[str] | None = None, compact: bool = False) -> str:
    """The seat's view now (:func:`state_parts`, joined)."""
    return "".join(state_parts(obs, memory, history, compact))


def state_parts(
    obs: Observation, memory: str, history: list[str] | None = None, compact: bool = False
) -> tuple[str, str]:
    """The seat's view now, from the most to the least stable part, split where it stops being the same all
    game: (memory context, identity and puzzle; capsules and coins, which change only when someone verifies,
    this game's events (``history``: this game's announcements; default: the observation's), the round and
    who is alive). Consecutive prompts of a seat share a long prefix: a provider's prompt cache (and the
    embedded model's KV cache) reuses it. ``compact``: the same facts in fewer words."""
    if compact:
        return _compact_state(obs, memory, history)
    stable = ["Memory from earlier play:", memory, ""] if memory else []
    stable += [
        f"You are player {obs.seat}.",
        f"Your puzzle {obs.puzzle.slot}: {obs.puzzle.text} Your answer: {obs.puzzle.answer}.",
    ]
    lines = ["Capsules (label [endorsers]):"]
    for k in sorted(obs.capsules):
        caps = "; ".join(f"{c.label} [{','.join(c.endorsers)}]" for c in obs.capsules[k])
        lines.append(f"Q{k} (owner {obs.owners[k]}): {caps}")
    lines.append("Coins: " + " ".join(f"{s}={c}" for s, c in obs.coins.items()) + ".")
    events = list(obs.history) if history is None else history
    if events:
        lines.append("This game so far:")
        lines += events
    lines.append(f"Game {obs.game}, round {obs.round} of {obs.max_rounds}. Alive: {', '.join(obs.alive)}.")
    lines.append("Your move, as JSON:")
    return "\n".join(stable) + "\n", "\n".join(lines)


def _compact_state(obs: Observation, memory: str, history: list[str] | None) -> tuple[str, str]:
    stable = ["Earlier games:", memory, ""] if memory else []
    stable.append(
        f"You are {obs.seat}; your puzzle {obs.puzzle.slot}: {obs.puzzle.text} Your answer: {obs.puzzle.answer}."
    )
    lines = ["Capsules (owner: label [endorsers]):"]  # changes only when someone verifies
    for k in sorted(obs.capsules):
        caps = "; ".join(f"{c.label} [{','.join(c.endorsers)}]" for c in obs.capsules[k])
        lines.append(f"Q{k} {obs.owners[k]}: {caps}")
    lines.append("Coins: " + " ".join(f"{s}={c}" for s, c in obs.coins.items()) + ".")
    events = list(obs.history) if history is None else history
    if events:
        lines.append(f"Game {obs.game} so far:")
        lines += events
    lines.append(
        f"Now: game {obs.game}, round {obs.round} of {obs.max_rounds}. Alive: {','.join(obs.alive)}."
    )
    lines.append("Your move, as JSON:")
    return "\n".join(stable) + "\n", "\n".join(lines)


def decision_messages(
    rules: str, obs: Observation, memory: str, history: list[str] | None = None, compact: bool = False
) -> list[dict[str, str]]:
    return decision_request(rules, obs, memory, history, compact)[0]


def decision_request(
    rules: str, obs: Observation, memory: str, history: list[str] | None = None, compact: bool = False
) -> tuple[list[dict[str, str]], int]:
    """The decision messages (the rules, then the seat's view) and the length of the view's stable head:
    with the rules, the prefix that stays the same all game (``ChatRequest.stable_chars``)."""
    stable, rest = state_parts(obs, memory, history, compact)
    return [{"role": "system", "content": rules}, {"role": "user", "content": stable + rest}], len(stable)


def decision_schema(obs: Observation, reasoning_max_chars: int) -> dict[str, Any]:
    """JSON schema of the answer for constrained decoding: one variant per action kind, so every answer
    is well formed; capsule labels come from this state's table."""
    slots = [f"Q{k}" for k in sorted(obs.capsules)]
    labels = {f"Q{k}": {"enum": [c.label for c in obs.capsules[k]]} for k in sorted(obs.capsules)}
    conf = {"type": "number", "enum": list(CONFIDENCE_GRID)}
    tail = {
        "confidence": {"type": "object", "properties": dict.fromkeys(slots, conf), "required": slots},
        "reasoning": {"type": "string", "maxLength": reasoning_max_chars},
    }
    variants: list[dict[str, Any]] = [
        {"action": {"const": "pass"}},
        {"action": {"const": "verify"}, "target": {"enum": sorted(obs.capsules)}},
        {
            "action": {"const": "volunteer"},
            "password": {"type": "object", "properties": labels, "required": slots},
        },
    ]
    return {
        "oneOf": [{"type": "object", "properties": {**v, **tail}, "required": [*v, *tail]} for v in variants]
    }


def response_format(schema: dict[str, Any], mode: str) -> dict[str, Any] | None:
    """The ``response_format`` param for a structured-output mode (schema | json_object | none)."""
    if mode == "schema":
        return {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema, "strict": False}}
    if mode == "json_object":
        return {"type": "json_object"}
    return None


def solve_messages(puzzle: Puzzle) -> list[dict[str, str]]:
    """A stateless puzzle-solving call (``verifier: llm`` / ``own_answer: llm``)."""
    return [{"role": "user", "content": f"{puzzle.text} Reply with the integer answer only."}]


SOLVE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"answer": {"type": "integer"}},
    "required": ["answer"],
}


def reflection_messages(rules: str, previous: str, game_log: str, max_words: int) -> list[dict[str, str]]:
    """Ask for a reflection that replaces the previous one."""
    prior = f"Your previous reflection:\n{previous}\n\n" if previous else ""
    return [
        {"role": "system", "content": rules},
        {
            "role": "user",
            "content": (
                f"{prior}The game that just ended:\n{game_log}\n\nWrite a reflection of at most {max_words} "
                "words on what you learned about the other players and how to play the next game. It replaces "
                "your previous reflection; only it will be carried into the next game."
            ),
        },
    ]
