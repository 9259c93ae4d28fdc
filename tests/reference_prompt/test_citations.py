"""Every ``file.py:lines`` citation of the reference code (cyjabc2020/Escape-room-v2 @ 74f0fd1, code/) in
the repository's docs, configs and code points inside that file.

The lengths below are the files' line counts at that commit (``git show 74f0fd1:code/src/<path> | wc -l``);
a citation past the end (as the Anthropic helper's lines 392-471 once were, in a 158-line file) fails here.
"""

from __future__ import annotations

import re
import subprocess

from tests.conftest import REPO

REFERENCE_LINES = {  # file name -> lines at 74f0fd1
    "anthropic_helper.py": 158,
    "answer_checker.py": 82,
    "base_agent.py": 201,
    "escape_room.py": 592,
    "game_logger.py": 636,
    "gemini_helper.py": 259,
    "master_settings.py": 206,
    "moderator.py": 488,
    "openai_helper.py": 92,
    "question_bank.py": 125,
    "replicate_helper.py": 120,
    "run_experiment.py": 275,
}
CITATION = re.compile(r"(?<![\w/])((?:[\w]+/)*)(\w+\.py):(\d+(?:-\d+)?(?:,\s*\d+(?:-\d+)?)*)")
OWN_PREFIXES = ("analysis/", "view/", "trustsim/", "tests/")  # trustsim's own files of the same name


def citations() -> list[tuple[str, int, str, int]]:
    """(file, line, citation, highest line cited) for every reference citation in the tracked text files."""
    tracked = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True)
    found = []
    for rel in tracked.stdout.split():
        if not rel.endswith((".md", ".py", ".yaml", ".yml", ".txt")):
            continue
        text = (REPO / rel).read_text(encoding="utf-8", errors="replace")
        for m in CITATION.finditer(text):
            prefix, name, lines = m.groups()
            if name not in REFERENCE_LINES or prefix.startswith(OWN_PREFIXES):
                continue
            top = max(int(n) for n in re.findall(r"\d+", lines))
            found.append((rel, text.count("\n", 0, m.start()) + 1, m.group(0), top))
    return found


def test_reference_citations_point_inside_the_cited_file() -> None:
    found = citations()
    assert len(found) > 50  # the decoding, prompt and parsing citations are found
    past = [f"{rel}:{line}: {cite} (the file has {REFERENCE_LINES[cite.split(':')[0].rsplit('/', 1)[-1]]} lines)"
            for rel, line, cite, top in found if top > REFERENCE_LINES[cite.split(":")[0].rsplit("/", 1)[-1]]]  # fmt: skip
    assert not past, "\n".join(past)


def test_the_pattern_reads_ranges_and_lists() -> None:
    m = CITATION.search("see `utils/gemini_helper.py:41-46, 132-137` and more")
    assert m is not None and m.group(2) == "gemini_helper.py" and m.group(3) == "41-46, 132-137"
