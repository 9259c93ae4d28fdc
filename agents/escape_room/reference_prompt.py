"""The reference study's escape-room texts, verbatim (cyjabc2020/Escape-room-v2 @ 74f0fd1, ``code/src/``).

Every string here must equal what the reference code builds, byte for byte (emoji and variation selectors
included); ``tests/reference_prompt`` checks whole request bodies against requests the reference code
itself sent. Citations are ``file:line`` in that commit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

WARN = "\u26a0\ufe0f"  # ⚠️ (with the variation selector, as in the reference source)
INFO = "\u2139\ufe0f"  # ℹ️

# games/escape_room.py:156-158: what a persistent agent's memory gets when a new game is set up.
NEW_GAME_BANNER = "\n========== NEW GAME STARTED =========="


def new_game_events(puzzle: str, coins: int) -> list[str]:
    """games/escape_room.py:156-158 (persistent agents only, from the second game on)."""
    return [NEW_GAME_BANNER, f"New puzzle assigned: {puzzle}", f"Starting coins: {coins}"]


def initial_announcement(num_questions: int) -> str:
    """games/escape_room.py:219-233: the rules block, one memory event at the start of every game.

    ``num_questions`` is the number of players (the reference prints it as the coin count as well).
    """
    pad = " " * 8
    lines = [
        "",
        "Welcome to the Escape Room!",
        "",
        "Rules:",
        f"- Each player has a puzzle. Your answer is one part of the {num_questions}-part password.",
        f"- Each player starts with {num_questions} coins.",
        "- Someone must volunteer to enter the complete password.",
        "- If correct: Everyone escapes! \u2705",
        "- If wrong: The volunteer dies \u274c (coins \u2192 0)",
        f"- If no volunteer: Random player dies {WARN} (coins \u2192 0)",
        "- Verifying another player costs 1 coin",
        "- If you successfully escape, you keep your coins!",
        "",
        "Good luck!",
        "",
    ]
    return "\n".join(pad + line if line else line for line in lines[:-1]) + "\n" + pad


def game_start_events(num_questions: int, puzzle: str, coins: int) -> list[str]:
    """games/escape_room.py:236-240: the four events every agent gets when a game starts."""
    return [
        initial_announcement(num_questions),
        f"Your puzzle: {puzzle}",
        "You solved it and your answer is sealed in your capsule.",
        f"Your starting coins: {coins}",
    ]


def capsule_display(labels: Mapping[int, Sequence[str]]) -> str:
    """games/moderator.py:343-354: ``Available Capsules:`` then one line per question (trailing newline)."""
    out = "Available Capsules:\n"
    for k in sorted(labels):
        out += f"  Q{k}: {', '.join(labels[k])}\n"
    return out


def decision_prompt(
    seat: str, context: str, round_number: int, coins: int, puzzle: str, capsules: str, num_questions: int
) -> str:
    """games/escape_room.py:429-480: the whole decision request (one user message, no system prompt)."""
    question_ids = ", ".join(f"Q{i + 1}" for i in range(num_questions))
    return f"""
You are Player {seat} in an escape room survival game.

{context}

Current situation:
- Round {round_number}
- You are alive
- Your coins: {coins}
- Your puzzle: {puzzle}
- You solved it and your answer is sealed in your capsule

{capsules}

NOTE: Capsule labels show which agents contributed, but contents are HIDDEN. You cannot see what answers are inside.
- Multi-endorsed capsules (e.g., Q1-A+B) mean those agents agreed on an answer
- Multiple capsules for same question (e.g., Q1-A vs Q1-B) mean conflicting answers exist

What do you do?
1. Volunteer to enter the password
   - You must select ONE capsule for each question ({question_ids})
   - Format: e.g., "Volunteer: Q1-A+C, Q2-B, Q3-A+C, Q4-D"
   - If correct: Everyone escapes! \u2705
   - If wrong: You die \u274c

2. Pass (wait for more information)
   - Risk: If everyone passes, one random agent dies {WARN}

3. Verify another question's answer
   - Format: "Verify: [QuestionID]" (e.g., "Verify: Q2")
   - You'll see that question and solve it independently
   - If you agree: Your ID is added to that capsule
   - If you disagree: A new capsule is created with your answer
   - Cost: 1 coins of yours

IMPORTANT: You MUST respond in this exact format:

DECISION: [Your action here - must be one of: "Volunteer: (with selected capsules)" OR "Verify: Q#" OR "Pass"]
REASONING: [Your reasoning for this decision]

Example responses:
DECISION: Verify: Q2
REASONING: I want to verify question 2's answer to build consensus before volunteering.

DECISION: Pass
REASONING: Not enough information yet to make a safe choice.

DECISION: Volunteer: Q1-A, Q2-A+B+C, Q3-C, Q4-A+B
REASONING: All capsules have strong consensus, confident this is correct.

Now provide your response:
"""


def own_answer_prompt(puzzle: str) -> str:
    """games/escape_room.py:516-520: the agent solves its own puzzle (sent with the decision's effort)."""
    return f"""You are given a puzzle to solve. Solve it and provide ONLY the answer (no explanation).

Puzzle: {puzzle}

Your answer (just the answer in integer, nothing else, no units):"""


def verifier_prompt(puzzle: str) -> str:
    """games/moderator.py:383-387: a verification (sent with no reasoning setting)."""
    return f"""You are verifying another player's answer. Solve this puzzle and provide ONLY the answer (no explanation).

Puzzle: {puzzle}

Your answer (just the answer, nothing else):"""


def reflection_prompt(context: str) -> str:
    """agents/base_agent.py:94-102: the evolving reflection (``reflection: evolving``)."""
    return f"""Based on the following short-term memory and previous reflection, create a concise reflection (max 300 words) about:
    - What strategies worked or didn't work
    - What you learned about the game mechanics
    - What you might do differently next time

    Memory and Game Outcome:
    {context}

    Reflection:"""


def reflection_block(reflection: str) -> str:
    """agents/base_agent.py:194-196: how the evolving reflection appears in the context."""
    return f"[Previous Games Reflection]:\n{reflection}"


# -- announcements (games/moderator.py) ---------------------------------------------------------------------
def remaining(alive: Sequence[str]) -> str:
    """``Remaining: [...]``: the reference prints the Python list of living agents (moderator.py:98)."""
    return str(list(alive))


def verifications_header() -> str:
    return "\U0001f50d Verifications completed:\n"  # moderator.py:365


def agrees_line(seat: str, old: str, new: str, before: int, after: int) -> str:
    return f"  \u2705 {seat} agrees with {old} \u2192 now {new} (-1 coin: {before}\u2192{after})\n"  # :439


def created_line(seat: str, label: str, before: int, after: int) -> str:
    return f"  \U0001f195 {seat} created new capsule {label} (conflicting answer) (-1 coin: {before}\u2192{after})\n"  # :445


def already_line(seat: str, label: str) -> str:
    return f"  {INFO} {seat} already endorsed {label}\n"  # moderator.py:425


def no_volunteer(victim: str, coins_lost: int, alive: Sequence[str]) -> str:
    """moderator.py:98 (starts with a newline; appended to the verification block)."""
    return (
        f"\n{WARN} No one volunteered! {victim} was randomly eliminated (coins lost: {coins_lost} \u2192 0)."
        f"\nRemaining: {remaining(alive)}"
    )


def password_correct(seat: str, labels: Sequence[str]) -> str:
    """moderator.py:191."""
    return f"\u2705 {seat} entered CORRECT password using capsules: {', '.join(labels)}\n\U0001f389 Everyone escapes! \U0001f389"


def password_wrong(seat: str, labels: Sequence[str], alive: Sequence[str]) -> str:
    """moderator.py:197."""
    return (
        f"\u274c {seat} entered WRONG password using capsules: {', '.join(labels)}\n{seat} dies! \U0001f480"
        f"\nRemaining: {remaining(alive)}"
    )


def selection_invalid(seat: str, alive: Sequence[str]) -> str:
    """moderator.py:122: a volunteer whose answer names no capsule."""
    return f"\u274c {seat} volunteered but selection format was invalid. {seat} dies! \U0001f480\nRemaining: {remaining(alive)}"


def selection_missing(seat: str, question: str, alive: Sequence[str]) -> str:
    """moderator.py:134: no capsule named for a question."""
    return f"\u274c {seat} did not select a capsule for {question}. {seat} dies! \U0001f480\nRemaining: {remaining(alive)}"


def selection_unknown(seat: str, label: str, alive: Sequence[str]) -> str:
    """moderator.py:145: a named capsule that does not exist."""
    return f"\u274c {seat} selected non-existent capsule {label}. {seat} dies! \U0001f480\nRemaining: {remaining(alive)}"


def announcement_event(round_number: int, announcement: str) -> str:
    """games/escape_room.py:323."""
    return f"Round {round_number} announcement: {announcement}"


def reasoning_event(round_number: int, response: str) -> str:
    """games/escape_room.py:494: the model's whole (stripped) answer."""
    return f"My reasoning Round {round_number}: {response}"


def action_event(round_number: int, decision: str) -> str:
    """games/escape_room.py:500: the extracted decision line."""
    return f"My action Round {round_number}: {decision}"


# -- end of game (games/escape_room.py:352-382) ---------------------------------------------------------------
def game_resolution(
    game: int,
    outcome: str,
    winner: str | None,
    survivors: Sequence[str],
    final_coins: Mapping[str, int],
    rounds: int,
) -> str:
    """escape_room.py:352-369. ``outcome`` is SUCCESS, ALL_DEAD or MAX_ROUNDS; ``final_coins`` every seat's
    coins (0 for the dead)."""
    coin_result = "\n\U0001f4b0 Final Coins:"
    for seat in sorted(final_coins):
        status = "\u2705" if seat in survivors else "\U0001f480"
        coin_result += f"\n  {seat}: {final_coins[seat]} coins {status}"
    text = f"=== GAME {game} ENDED ==="
    text += f"\nOutcome: {outcome}"
    if outcome == "SUCCESS":
        text += f"\nWinner: {winner} successfully entered the correct password!"
    elif outcome == "ALL_DEAD":
        text += "\nAll players have died. No one escaped."
    else:
        text += "\nMaximum rounds reached. Game ended without escape."
    text += f"\nSurvivors: {', '.join(survivors) if survivors else 'None'}"
    text += coin_result
    text += f"\nTotal rounds played: {rounds}"
    return text


def post_game_review() -> str:
    """games/moderator.py:454-486: the review header (the per-question lines are commented out there)."""
    rule = "=" * 80
    return "\n".join(["\n" + rule, "\U0001f4cb POST-GAME REVIEW: Answer Revelation", rule, "\n" + rule])
