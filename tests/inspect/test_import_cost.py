"""The inspect extra adds nothing to ``import trustsim`` (nor to the engine's and analysis's entry points)."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import REPO

PROBE = """
import json, sys, time
start = time.perf_counter()
import trustsim, trustsim.api, trustsim.job, trustsim.llm, trustsim.host
import analysis.__main__ as cli
cli.build_parser()  # every subcommand's parser, from-inspect's included
print(json.dumps({"loaded": sorted(m for m in sys.modules if m.split(".")[0] in ("inspect_ai", "trustsim_inspect")),
                  "seconds": time.perf_counter() - start}))
"""


def test_import_trustsim_imports_no_inspect():
    proc = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout.splitlines()[-1])
    assert result["loaded"] == []


def test_the_entry_point_module_is_the_only_way_in():
    """Only trustsim.inspect_tasks (loaded by Inspect through the entry point) imports inspect-ai."""
    users = sorted(
        str(p.relative_to(REPO))
        for p in (REPO / "trustsim").rglob("*.py")
        if "inspect_ai" in p.read_text(encoding="utf-8")
        or "trustsim_inspect" in p.read_text(encoding="utf-8")
    )
    assert users == ["trustsim/inspect_tasks.py"]
