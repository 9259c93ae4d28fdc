"""Run many ``python -m trustsim`` invocations in one interpreter (the battery's driver).

``python tests/drills/cli_batch.py CASES.json OUT.json``: each case is ``{"args": [...], "set": {...},
"unset": [...]}``; each result is ``{"code", "stdout", "stderr"}``. Every invocation goes through the same
``trustsim.__main__.main`` as the command line (Hydra included), with ``sys.argv``, the environment, stdout and
stderr set per case; an exception escaping ``main`` is recorded as a traceback with exit code 1, as Python
would. Imports are paid once, so the battery stays fast; the drills also run a sample as real subprocesses.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import sys
import traceback


def run_case(case: dict) -> dict:
    from hydra.core.global_hydra import GlobalHydra

    from trustsim.__main__ import main

    saved = dict(os.environ)
    os.environ.update(case.get("set", {}))
    for name in case.get("unset", []):
        os.environ.pop(name, None)
    sys.argv = ["trustsim", *case["args"]]
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main()
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException:  # what the interpreter would print and exit 1 with
            traceback.print_exc()
            code = 1
    GlobalHydra.instance().clear()
    for handler in list(logging.getLogger().handlers):  # Hydra re-configures logging per run
        with contextlib.suppress(Exception):
            handler.close()
    os.environ.clear()
    os.environ.update(saved)
    return {"code": code, "stdout": out.getvalue(), "stderr": err.getvalue()}


def main() -> None:
    spec, out = sys.argv[1], sys.argv[2]  # read before the cases replace sys.argv
    with open(spec, encoding="utf-8") as fh:
        cases = json.load(fh)
    results = [run_case(case) for case in cases]
    with open(out, "w", encoding="utf-8") as fh:
        json.dump(results, fh)


if __name__ == "__main__":
    main()
