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

from trustsim.config import to_container
from trustsim.errors import ConfigError
from trustsim.job import run_job

CONF_DIR = str(Path(__file__).resolve().parent.parent / "conf")


@hydra.main(version_base="1.3", config_path=CONF_DIR, config_name="config")
def _job(cfg: DictConfig) -> int:
    hc = HydraConfig.get()
    run_dir = Path(hc.runtime.output_dir)
    try:
        plain = to_container(cfg)
    except ConfigError as exc:
        print(f"trustsim: {exc}", file=sys.stderr)
        code = 2
    else:
        code = run_job(plain, run_dir)
    if code and hc.mode == RunMode.RUN:
        sys.exit(code)
    return code


def main() -> None:
    _job()


if __name__ == "__main__":
    main()
