"""Entry point: ``python -m trustsim +experiment=NAME [overrides]`` (Hydra 1.3)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import DictConfig

from trustsim.api import run_config
from trustsim.config import conf_dir, to_container
from trustsim.errors import ConfigError
from trustsim.job import _fail_early
from trustsim.preflight import preflight
from trustsim.preview.argv import preview_argv, preview_requested
from trustsim.rundir import RunDirBusy, RunDirForeign, claim_from_argv
from trustsim.summary import print_summary
from trustsim.sweep import exit_unwritable, register_resolvers

CONF_DIR = str(conf_dir())  # conf/ of a checkout, else the copy installed with the package
register_resolvers()


@hydra.main(version_base="1.3", config_path=CONF_DIR, config_name="config")
def _job(cfg: DictConfig) -> int:
    hc = HydraConfig.get()
    run_dir = Path(hc.runtime.output_dir)
    try:
        plain = to_container(cfg)
    except ConfigError as exc:
        print(f"trustsim: {exc}", file=sys.stderr)
        run_dir.mkdir(parents=True, exist_ok=True)
        _fail_early(run_dir, {}, exc, "fix the configuration")
        code = 2
    else:
        code = run_config(plain, run_dir, list(hc.overrides.task))
        if code == 0:  # the one-screen summary (one line per job in a multirun); never fails the run
            print_summary(run_dir, single=hc.mode == RunMode.RUN)
    if code and hc.mode == RunMode.RUN:
        sys.exit(code)
    return code


def main() -> None:
    if preview_requested(sys.argv[1:]):  # a preview writes under outputs/previews/, never a run directory
        sys.argv[1:] = preview_argv(sys.argv[1:])
    # Secrets, unknown options, a name that is a path, Hydra's override errors: exit 2, nothing written.
    preflight(sys.argv[1:], CONF_DIR, __file__)
    try:  # a named run directory is locked before Hydra writes .hydra/ there (the job takes the lock over)
        lock = claim_from_argv(sys.argv[1:])
    except RunDirBusy as exc:
        print(f"trustsim: {exc}", file=sys.stderr)
        sys.exit(exc.exit_code)
    except RunDirForeign as exc:  # the working directory, /, or a folder of the user's own files
        print(f"trustsim: {exc}", file=sys.stderr)
        sys.exit(2)
    except OSError as exc:  # the named run directory cannot be created
        exit_unwritable(exc.filename or "?", exc)
    try:
        _job()
    finally:
        if lock is not None:
            lock.release()


if __name__ == "__main__":
    main()
