"""The job's Hydra record (``.hydra/config.yaml``, ``hydra.yaml``, ``overrides.yaml``), written by trustsim.

Hydra would save these files itself before the job starts, with whatever the config holds; trustsim turns
that off (``hydra.output_subdir: null`` in ``conf/config.yaml``) and writes them here instead, from a config
with every secret already replaced (:func:`trustsim.secrets.redact`), once the job holds its run directory.
``config.yaml`` is the job's resolved config; ``hydra.yaml`` Hydra's own settings for the job (``hydra:``);
``overrides.yaml`` the command line's overrides of the job (read by the sweep index, ``jobs.csv``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from trustsim.schema import plain_mapping
from trustsim.secrets import redact, redact_argument, redact_assignments

RECORD_DIR = ".hydra"


def write_hydra_record(
    run_dir: Path, cfg: Mapping[str, Any], hydra: Mapping[str, Any] | None = None
) -> list[Path]:
    """Write the job's ``.hydra/`` files (redacted) when it runs under Hydra; returns the files written (none
    outside a Hydra job, e.g. :func:`trustsim.api.run`). ``hydra``: the job's own ``hydra`` node, from a
    launcher that runs many jobs at once in this process (``hydra/launcher=trustsim``: ``HydraConfig``, a
    process-wide singleton, then holds the sweep's); default: ``HydraConfig``'s."""
    from hydra.core.hydra_config import HydraConfig
    from omegaconf import OmegaConf

    if hydra is None:
        if not HydraConfig.initialized():
            return []
        hydra = plain_mapping(
            OmegaConf.to_container(HydraConfig.get(), resolve=False, enum_to_str=True), "hydra"
        )
    assert hydra is not None
    overrides = [redact_argument(str(o)) for o in hydra["overrides"]["task"]]
    hydra_node = redact_hydra_node(dict(hydra))
    folder = Path(run_dir) / RECORD_DIR
    folder.mkdir(parents=True, exist_ok=True)
    files = {
        "config.yaml": redact(dict(cfg)),
        "hydra.yaml": {"hydra": hydra_node},
        "overrides.yaml": overrides,
    }
    return [_write_yaml(folder / name, data) for name, data in files.items()]


def _write_yaml(path: Path, data: Any) -> Path:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    os.replace(tmp, path)
    return path


def redact_hydra_node(node: dict[str, Any]) -> dict[str, Any]:
    """Hydra's own settings (the ``hydra`` node) with secrets replaced, the override lists and the job's
    ``override_dirname`` (``key=value,...``) included."""
    out = redact(node)
    overrides = out.get("overrides")
    if isinstance(overrides, dict):
        for name, lines in overrides.items():
            if isinstance(lines, list):
                overrides[name] = [redact_argument(str(line)) for line in lines]
    job = out.get("job")
    if isinstance(job, dict) and isinstance(job.get("override_dirname"), str):
        job["override_dirname"] = redact_assignments(job["override_dirname"])
    return out


def redacted_config(cfg: Any) -> Any:
    """A composed config (a DictConfig with its ``hydra`` node) with every secret replaced, for a file Hydra
    writes from it (a sweep's ``multirun.yaml``); ``cfg`` itself when it holds none (the preflight refused
    any it found). The copy keeps the resolver cache, so ``${now:...}`` stays the sweep's time."""
    from omegaconf import OmegaConf

    plain = OmegaConf.to_container(cfg, resolve=False, enum_to_str=True)
    assert isinstance(plain, dict)  # a composed config is a mapping
    clean = {k: redact_hydra_node(v) if k == "hydra" else redact(v) for k, v in plain.items()}
    if clean == plain:
        return cfg
    out = OmegaConf.create(clean)
    OmegaConf.copy_cache(from_config=cfg, to_config=out)
    return out
