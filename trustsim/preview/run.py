"""Preview a job: play it with the stand-in model, send nothing, and say what it would ask and cost.

``estimate(cfg)`` is the Python entry point (one composed job config → :class:`Estimate`); the command line
(``python -m trustsim ... preview=true``) goes through :func:`run_preview` per job and :func:`sweep_total`
at the end of a multirun.
"""

from __future__ import annotations

import json
import logging
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from trustsim.config import Validated, to_container, validate_config
from trustsim.errors import ConfigError
from trustsim.identity import Identity, identify
from trustsim.job import JobContext, one_line, print_warnings
from trustsim.llm.config import ModelConfig
from trustsim.llm.pricing import price_of
from trustsim.preview.client import CURRENT_ROUND, PreviewClient, preview_client
from trustsim.preview.report import Estimate, lines, play_for, summarise, table
from trustsim.progress import make_progress
from trustsim.rundir import RunRecorder
from trustsim.rundir.schema import EventUnit

PREVIEW_FILE = "preview.json"


class PreviewRecorder(RunRecorder):
    """Records into a temporary directory (deleted afterwards) and follows the round being played."""

    invalid = 0  # model answers the game recorded invalid (a stand-in answer it could not use)

    def __init__(self, run_dir: Path, unit: EventUnit | None) -> None:
        super().__init__(run_dir, unit)
        self._bounds = frozenset() if unit is None else frozenset((unit.start, unit.end))

    def event(self, type: str, **fields: Any) -> None:
        _follow(type, fields.get("round"), self._bounds)
        self.invalid += _invalid_answers(fields)
        super().event(type, **fields)


def _invalid_answers(fields: dict[str, Any]) -> int:
    """Model answers recorded invalid in an event's fields (a decision, move, stage or exchange role)."""
    count = int(fields.get("valid") is False and bool(fields.get("raw")))
    return count + sum(_invalid_answers(v) for v in fields.values() if isinstance(v, dict))


def _follow(type: str, round: Any, bounds: frozenset[str]) -> None:
    """The round being played in this task: set at ``round_start``, cleared where a unit of play (e.g. an
    escape-room game) starts or ends."""
    if type == "round_start" and isinstance(round, int):
        CURRENT_ROUND.set(round)
    elif type in bounds:
        CURRENT_ROUND.set(None)


class PreviewContext(JobContext):
    """A job context whose LLM clients are preview clients (nothing is sent, no key is read)."""

    def __init__(
        self,
        valid: Validated,
        identity: Identity,
        run_dir: Path,
        recorder: RunRecorder,
        base_dir: Path | None,
    ) -> None:
        super().__init__(valid, identity, run_dir, recorder)
        self.base_dir = base_dir
        self.clients: list[PreviewClient] = []

    def _build_llm(self, model: ModelConfig) -> PreviewClient:
        """Every client of the job (``ctx.llm``, a seat's ``ctx.llm_for(model)``) is a preview client."""
        client = preview_client(model, self.llm_config, self.base_dir, play_for(self.game, self.options))
        self.clients.append(client)
        return client

    def progress(self, total: int, desc: str) -> Any:
        return make_progress(total, desc, False)

    def close_llm(self) -> None:
        for client in self.clients:
            if client.store is not None:
                client.store.close()
                client.store = None


def estimate(
    cfg: Any, overrides: Sequence[str] | None = None, *, base_dir: str | Path | None = None
) -> Estimate:
    """What one job would ask and cost, without sending anything or needing a key.

    Args:
        cfg: the job's composed config (``DictConfig`` or plain dict, e.g. ``trustsim.api.compose(...)``).
        overrides: the command line's overrides (only to decide which warnings to print).
        base_dir: where a relative ``llm.store_path`` lives (default: the working directory).

    Raises:
        trustsim.errors.ConfigError: the config is invalid (the message names the key).
    """
    plain = cfg if isinstance(cfg, dict) else to_container(cfg)
    valid = validate_config(plain, list(overrides) if overrides is not None else None)
    return _estimate(valid, Path(base_dir) if base_dir is not None else None)


def _estimate(valid: Validated, base_dir: Path | None) -> Estimate:
    if not valid.uses_llm:
        return Estimate()
    logging.getLogger("MESA").setLevel(logging.WARNING)  # Mesa logs every step at INFO
    with tempfile.TemporaryDirectory(prefix="trustsim-preview-") as tmp:
        recorder = PreviewRecorder(Path(tmp), valid.game.unit.events if valid.game.unit else None)
        ctx = PreviewContext(valid, identify(valid), Path(tmp), recorder, base_dir)
        try:
            valid.game.run(ctx)
            # the embedded model's measured pace, read while the store is open
            paces = [c.seconds_per_call() if c.model.provider == "local" else False for c in ctx.clients]
        finally:
            ctx.close_llm()
            recorder.close()
    total = Estimate()
    game = valid.game.name
    for client, pace in zip(ctx.clients, paces, strict=True):
        total = total + summarise(game, client.requests, price_of(client.model), client.model.name, pace)
    total.jobs = 1
    total.invalid += recorder.invalid
    total.extra = {"counts": dict(ctx.counts), "cell": dict(ctx.cell)}
    return total


def title(cfg: dict[str, Any], overrides: Sequence[str] | None) -> str:
    """One line naming a job: experiment, game, model and the command line's overrides."""
    model = (cfg.get("model") or {}).get("name") if isinstance(cfg.get("model"), dict) else None
    shown = " ".join(o for o in overrides or () if not o.lstrip("+").startswith(("preview=", "hydra")))
    return f"{cfg.get('name', 'run')} ({(cfg.get('game') or {}).get('type', '?')}, model {model or '-'}" + (
        f"; {shown})" if shown else ")"
    )


def run_preview(
    cfg: dict[str, Any], out_dir: Path, overrides: Sequence[str] | None = None, *, in_sweep: bool = False
) -> int:
    """The command line's preview of one job: print the estimate and write it to ``out_dir/preview.json``
    (a preview directory, never a run directory). A job of a sweep (``in_sweep``, or a Hydra multirun) prints
    nothing: the sweep ends in one table (:func:`sweep_total`). Exit code 0, or 2 for a config error (nothing
    written)."""
    label = title(cfg, overrides)
    try:
        valid = validate_config(cfg, list(overrides) if overrides is not None else None)
        print_warnings(valid.warnings)
        est = _estimate(valid, None)
    except ConfigError as exc:
        print(f"trustsim: {exc}", file=sys.stderr)
        _write(out_dir, {"title": label, "status": "failed", "reason": one_line(exc)})
        return 2
    except Exception as exc:  # a bug in a game under the stand-in: say so, with the job
        print(
            f"trustsim: preview of {label} failed with {type(exc).__name__}: {one_line(exc)}", file=sys.stderr
        )
        _write(out_dir, {"title": label, "status": "failed", "reason": one_line(exc)})
        return 1
    _write(out_dir, {"title": label, "status": "complete", "estimate": est.to_dict()})
    if in_sweep or _in_multirun():
        return 0
    print(f"trustsim: preview (nothing sent) of {label}")
    if not valid.uses_llm:
        print(f"  no LLM calls: agent {valid.agent.name!r} is scripted")
    else:
        for line in lines(est):
            print(line)
    return 0


def _in_multirun() -> bool:
    """Whether this job is one of a Hydra multirun (``-m``)."""
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    return HydraConfig.initialized() and HydraConfig.get().mode == RunMode.MULTIRUN


def _write(out_dir: Path, data: dict[str, Any]) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / PREVIEW_FILE).write_text(json.dumps(data, indent=2, default=str) + "\n", encoding="utf-8")


def sweep_total(sweep_dir: Path) -> int:
    """Print the total of a previewed multirun from its jobs' ``preview.json``, then one table with a row per
    job and the total; write the total to the sweep's own ``preview.json``. 1 if a job failed."""
    total: Estimate | None = None
    failed: list[str] = []
    rows: list[tuple[str, Estimate]] = []
    jobs = sorted(p for p in sweep_dir.glob(f"*/{PREVIEW_FILE}"))
    for path in jobs:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("status") != "complete":
            failed.append(f"{path.parent.name}: {data.get('reason')}")
            continue
        est = Estimate.from_dict(data["estimate"])
        rows.append((path.parent.name, est))
        total = est if total is None else total + est
    if total is not None:
        print(f"trustsim: preview total over {total.jobs} jobs (nothing sent) -> {sweep_dir}")
        for line in lines(total):
            print(line)
        print(table([*rows, ("total", total)]))
    summary = {"title": "total", "jobs": len(jobs), "failed": failed}
    _write(sweep_dir, {**summary, "estimate": total.to_dict() if total is not None else None})
    if failed:
        print(f"trustsim: {len(failed)} of {len(jobs)} previews failed:", file=sys.stderr)
        for line in failed:
            print(f"  {line}", file=sys.stderr)
        return 1
    return 0
