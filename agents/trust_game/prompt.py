"""The LLM player's prompts: the rules stated neutrally, the horizon, the history the role may see."""

from __future__ import annotations

from games.trust_game.types import PairInfo, TrusteeView, TrustorView

SYSTEM = (
    "You are a participant in an economic decision-making study with one other participant. Points are "
    "your earnings. Think briefly, then answer with one JSON object only."
)


def _horizon(info: PairInfo, round_: int) -> str:
    h = info.horizon
    if h.known and h.rounds == 1:
        return "You interact with the other participant once."
    if h.known:
        return (
            f"You interact with the same participant for exactly {h.rounds} rounds. This is round {round_}."
        )
    return (
        f"You interact with the same participant in rounds; after each round another round follows with "
        f"probability {h.continue_p:g}, so you do not know which round is the last. This is round {round_}."
    )


def _rules(info: PairInfo) -> list[str]:
    st = info.stakes
    return [
        f"The sender starts with {st.endowment} points and the responder with {st.trustee_endowment} points.",
        f"The sender chooses how many of its {st.endowment} points to send to the responder (a whole number "
        f"from 0 to {st.endowment}) and keeps the rest. Every point sent is multiplied by {st.multiplier}: "
        f"the responder receives {st.multiplier} times the amount sent.",
        "The responder then chooses how many of the received points to return to the sender (a whole number "
        "from 0 to all of them) and keeps the rest.",
        f"Earnings per round: sender {st.endowment} - sent + returned; responder {st.trustee_endowment} + "
        f"{st.multiplier} x sent - returned.",
    ]


def _past(view: TrustorView | TrusteeView) -> list[str]:
    if not view.past:
        return []
    lines = ["Earlier rounds with this participant (round: sent, received, returned):"]
    lines += [f"{x.round}: {x.sent}, {x.received}, {x.returned}" for x in view.past]
    return lines


def trustor_message(view: TrustorView) -> str:
    """The sender's user message."""
    info = view.info
    k = info.stakes.multiplier
    lines = ["You are the sender.", *_rules(info), _horizon(info, view.round)]
    if info.history == "population" and info.population:
        lines.append(
            "In an earlier group of senders in the same situation (sent: number of senders, average returned):"
        )
        lines += [f"{s}: {n}, {mean:.1f}" for s, n, mean in info.population]
    lines += _past(view)
    lines.append(
        f'Answer with JSON: {{"reasoning": "<one or two sentences>", "send": <points to send, 0 to '
        f'{info.stakes.endowment}>, "expected_return": <points you expect the responder to return, 0 to '
        f'{k} x send>, "p_return_at_least_sent": <your probability, 0 to 1, that the responder returns at '
        f"least as many points as you send>}}"
    )
    return "\n".join(lines)


def trustee_message(view: TrusteeView) -> str:
    """The responder's user message (asks for P(the sender sends at least as much next round) when a next
    round may follow)."""
    info = view.info
    lines = ["You are the responder.", *_rules(info), _horizon(info, view.round), *_past(view)]
    lines.append(
        f"This round the sender sent {view.sent} of {info.stakes.endowment} points, so you received "
        f"{view.received} points."
    )
    fields = f'"reasoning": "<one or two sentences>", "return": <points to return, 0 to {view.received}>'
    if view.asks_next:
        fields += (
            f', "p_next_send_at_least": <your probability, 0 to 1, that in the next round the sender sends at '
            f"least {view.sent} points>"
        )
    lines.append(f"Answer with JSON: {{{fields}}}")
    return "\n".join(lines)


def messages(text: str) -> list[dict[str, str]]:
    """Chat messages for one decision."""
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": text}]
