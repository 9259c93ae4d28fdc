"""The LLM player's prompt: rules, horizon, opponent, recent history."""

from __future__ import annotations

from games.arena.types import View

SYSTEM = (
    "You are a player in a repeated two-player game. Each round both players choose at the same time to "
    "cooperate (C) or defect (D). Think briefly, then answer with one JSON object only: "
    '{"reasoning": "<one or two sentences>", "move": "C" or "D", '
    '"p_opponent_cooperates": <your probability, between 0 and 1, that the other player cooperates this round>}.'
)


def _payoff_lines(view: View) -> list[str]:
    p = view.info.payoffs
    return [
        "Points per round (you, other):",
        f"- both cooperate: {p.R:g}, {p.R:g}",
        f"- both defect: {p.P:g}, {p.P:g}",
        f"- you defect, other cooperates: {p.T:g}, {p.S:g}",
        f"- you cooperate, other defects: {p.S:g}, {p.T:g}",
    ]


def _horizon_line(view: View) -> str:
    info = view.info
    if info.announced_rounds is not None:
        return f"The game lasts exactly {info.announced_rounds} rounds. This is round {view.round}."
    return (
        f"After every round, another round follows with probability {info.horizon.continue_p:g}; "
        f"you do not know when the game ends. This is round {view.round}."
    )


def user_message(view: View, history_window: int) -> str:
    """The round's user message; the last ``history_window`` rounds are listed, older ones summarised."""
    info = view.info
    other = f"the other player ({info.opponent})" if info.opponent else "an anonymous other player"
    lines = [f"You play against {other}.", *_payoff_lines(view), _horizon_line(view)]
    if info.noise > 0:
        lines.append(
            f"Moves are noisy: with probability {info.noise:g} a chosen move is carried out as the opposite one. "
            "The history shows the moves as carried out."
        )
    n = len(view.own)
    if n == 0:
        lines.append("No rounds have been played yet.")
    else:
        start = max(0, n - history_window)
        if start > 0:
            coop = sum(m == "C" for m in view.opponent[:start])
            lines.append(f"Rounds 1-{start}: the other player cooperated {coop} of {start} times.")
        lines.append("Round: you, other")
        lines += [f"{i + 1}: {view.own[i]}, {view.opponent[i]}" for i in range(start, n)]
        lines.append(f"Total points so far: you {view.own_payoff:g}, other {view.opponent_payoff:g}.")
    lines.append("Your answer (JSON only):")
    return "\n".join(lines)


def messages(view: View, history_window: int) -> list[dict[str, str]]:
    """Chat messages for one decision."""
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": user_message(view, history_window)},
    ]
