"""Checks of a command line before Hydra writes anything: compose every distinct job as Hydra will, and refuse.

``python -m trustsim`` calls :func:`preflight` first. It builds Hydra's own config loader with the same search
path as ``@hydra.main`` (the package's ``conf/``, ``--config-dir``, ``--config-path``, ``hydra.searchpath``
and search-path plugins) and composes the job's config (a multirun: one config per distinct combination of
group options, e.g. ``model=a,b`` × ``+experiment=glob(*)``). It exits with code 2, naming the key and the fix,
when:

- an argument, an override or a composed config carries a secret (:func:`trustsim.secrets.config_problem`: a
  secret-named key, a key-shaped name or value, a secret from the environment, a URL with credentials or a
  query value; in a config file too, e.g. a header in ``conf/model/*.yaml``). Every variable the config names as
  a key or header source (``*_env``: ``model.api_key_env``, ``headers_env``) is a secret from the start, whatever
  its name, so ``name=$LLM_AUTH`` is refused once ``model.api_key_env=LLM_AUTH``;
- a Hydra path (``hydra.run.dir``, ``hydra.sweep.dir``, ``hydra.job.name``, ...), resolved as Hydra will
  (``${oc.env:...}``), holds a secret;
- ``name`` is not a label (a path separator or ``..``: it names the run directory);
- Hydra refuses the command line: an unknown group option (the closest option and the available ones, from
  the search path), an override of a key that is not there (the ``+`` prefix), sweep syntax without ``-m``,
  an override that does not parse;
- ``hydra.output_subdir`` is overridden (trustsim writes ``.hydra/`` itself, from the redacted config).

Nothing is written, so a refused command leaves no run directory, no ``.hydra/``, no ``multirun.yaml``.
"""

from __future__ import annotations

import contextlib
import copy
import io
import os
import re
import sys
from collections.abc import Iterator
from typing import Any, NoReturn

from trustsim.config import label_problem
from trustsim.schema import closest, plain_mapping
from trustsim.secrets import (
    argument_problem,
    config_problem,
    override_problem,
    register_key_sources,
    register_secret_env,
    scrub,
    value_problem,
    warn_weak_keys,
)

REFUSED = "(refused before anything was written)"
_NEEDS_PLUS = re.compile(r"Could not override '(?P<key>[^']+)'\.\s*No match in the defaults list")
_NOT_IN_CONFIG = re.compile(r"Could not override '(?P<key>[^']+)'\.\s*To append to your config use")
_SWEEP_IN_RUN = re.compile(r"(?:Sweep parameters|Ambiguous value for argument) '(?P<line>[^']+)'")
_NOT_THERE = re.compile(r"Could not delete from config\. '(?P<key>[^']+)' does not exist")
_TWICE = re.compile(r"Multiple values for (?P<key>[\w./@]+)\.")
_QUOTED_KEY = re.compile(r"'(?P<key>[\w./@+~-]+)'")


class Refused(Exception):
    """A command line that must not run: the key to name and what to do."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"config error at '{key}': {message}")
        self.key = key


def preflight(argv: list[str], config_path: str, calling_file: str) -> None:
    """Check ``argv`` (``python -m trustsim``'s arguments) as Hydra will run it; exit 2 naming the key when it
    must be refused (see the module docstring). Help, ``--info`` and shell completion are left to Hydra."""
    try:
        check_command_line(argv, config_path, calling_file)
    except Refused as exc:
        refuse(str(exc))


def refuse(message: str) -> NoReturn:
    print(f"trustsim: {scrub(message)} {REFUSED}", file=sys.stderr)
    sys.exit(2)


def check_command_line(argv: list[str], config_path: str, calling_file: str) -> None:
    """Raise :class:`Refused` when the command line must not run (see :func:`preflight`)."""
    from hydra._internal.utils import get_args_parser
    from hydra.types import RunMode

    _register_named_variables(argv)  # model.api_key_env=LLM_AUTH: a secret from the start
    for arg in argv:  # flags and their values, before argparse and Hydra (whose errors quote them)
        if (arg.startswith("-") or "=" not in arg) and (problem := argument_problem(arg)) is not None:
            raise Refused(*problem)
    args = _parse_args(get_args_parser(), argv)
    if args.help or args.hydra_help or args.info or args.shell_completion:
        return
    overrides = list(args.overrides)
    _check_overrides(overrides)
    config_name = args.config_name or "config"
    with hydra_loader(args, config_path, calling_file) as hydra:
        multirun = args.multirun or hydra.get_mode(config_name, overrides) == RunMode.MULTIRUN
        if not multirun:
            configs = [_compose(hydra, config_name, overrides, RunMode.RUN)]
            values: list[Any] = []
        else:
            master = _compose(hydra, config_name, overrides, RunMode.MULTIRUN)
            jobs, values = _distinct_jobs(hydra, master, overrides)
            configs = [master, *(_compose_job(hydra, master, job, overrides) for job in jobs)]
        for cfg in configs:  # every key source of every job is a secret before any value is checked
            register_key_sources(_plain(cfg))
        warn_weak_keys()
        _check_overrides(overrides)
        for tree in values:
            if (problem := config_problem(tree)) is not None:
                raise Refused(*problem)
        for cfg in configs:
            check_config(cfg)


def _register_named_variables(argv: list[str]) -> None:
    """Treat every variable the command line names under an ``*_env`` key as a secret
    (``model.api_key_env=LLM_AUTH``, ``+model.headers_env={X-Key: GW_VAR}``)."""
    for arg in argv:
        key, _, value = arg.lstrip("+~").partition("=")
        if any(part.lower().endswith("_env") for part in re.split(r"[./@]", key)):
            for name in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", value):
                register_secret_env(name)


def _parse_args(parser: Any, argv: list[str]) -> Any:
    """Hydra's command-line arguments; a bad flag (or an override after ``-m``): argparse's usage and error,
    which quote the arguments, printed with every secret redacted, and exit 2."""
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            return parser.parse_args(argv)
    except SystemExit:
        print(scrub(err.getvalue()), end="", file=sys.stderr)
        raise


@contextlib.contextmanager
def hydra_loader(args: Any, config_path: str, calling_file: str) -> Iterator[Any]:
    """Hydra's ``Hydra`` object (its config loader) with the search path ``@hydra.main`` builds for ``args``;
    the global Hydra instance is restored afterwards."""
    from hydra._internal.hydra import Hydra
    from hydra._internal.utils import create_automatic_config_search_path
    from hydra.core.config_search_path import SearchPathQuery
    from hydra.core.global_hydra import GlobalHydra

    search_path = create_automatic_config_search_path(calling_file, None, args.config_path or config_path)
    if args.config_dir is not None:
        config_dir = os.path.abspath(args.config_dir)
        if not os.path.isdir(config_dir):
            raise Refused("--config-dir", f"additional config directory '{config_dir}' not found")
        search_path.prepend(
            provider="command-line", path=f"file://{config_dir}", anchor=SearchPathQuery(provider="schema")
        )
    saved = GlobalHydra.instance().hydra if GlobalHydra.instance().is_initialized() else None
    try:
        yield Hydra.create_main_hydra2(task_name="__main__", config_search_path=search_path)
    finally:
        GlobalHydra.instance().clear()
        if saved is not None:
            GlobalHydra.instance().initialize(saved)


def _check_overrides(overrides: list[str]) -> None:
    """Each override parsed as Hydra parses it, its values checked as config (a mapping value such as
    ``extra_headers={Authorization: ...}`` by its keys too; each element of a choice sweep); one that does not
    parse is checked as text, then refused naming its key (Hydra's own message would quote the value)."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException

    parser = OverridesParser.create()
    for arg in overrides:
        try:
            (override,) = parser.parse_overrides([arg])
        except HydraException as exc:
            problem = override_problem(arg)
            if problem is not None:
                raise Refused(*problem) from None
            key = arg.lstrip("+~").partition("=")[0] or arg
            if "://" in arg or "@" in arg:  # a URL: its credentials or query may be a secret; not echoed
                raise Refused(
                    key, f"cannot parse its value (a URL, not shown); {_grammar_hint(arg)}"
                ) from None
            raise Refused(key, f"cannot parse {arg!r} ({_first_line(exc)}); {_grammar_hint(arg)}") from None
        for value in _choices(override):
            problem = config_problem(_nest(override.key_or_group, value))
            if problem is not None:
                raise Refused(*problem)
        if override.key_or_group == "hydra.output_subdir":
            raise Refused(
                "hydra.output_subdir",
                "trustsim writes the job's record (.hydra/config.yaml, hydra.yaml, overrides.yaml) itself, "
                "from the redacted config; this setting cannot be changed",
            )


def _choices(override: Any) -> list[Any]:
    """The values an override sets: its value, or each element of a choice sweep (ranges are numbers)."""
    from hydra.core.override_parser.types import ChoiceSweep

    if not override.is_sweep_override():
        return [override.value()]
    value = override.value()
    return list(value.list) if isinstance(value, ChoiceSweep) else []


def _nest(key: str, value: Any) -> dict[str, Any]:
    node: Any = value
    for part in reversed(re.split(r"[./]", key)):
        node = {part: node}
    return node


def _grammar_hint(arg: str) -> str:
    if "=" not in arg:
        return "an override is key=value (e.g. seed=3; a new key: +key=value; delete one: ~key)"
    return "quote values with spaces or special characters, e.g. key='a value' (https://hydra.cc/docs/advanced/override_grammar/basic)"


def _compose(hydra: Any, config_name: str, overrides: list[str], mode: Any) -> Any:
    from hydra.errors import HydraException

    try:
        return hydra.compose_config(config_name, list(overrides), run_mode=mode, with_log_configuration=False)
    except HydraException as exc:
        raise _explain(hydra, exc, config_name, overrides) from None


def _compose_job(hydra: Any, master: Any, job: list[str], overrides: list[str]) -> Any:
    from hydra.errors import HydraException

    try:
        return hydra.config_loader.load_sweep_config(master, job)
    except HydraException as exc:
        raise _explain(hydra, exc, str(master.hydra.job.config_name), overrides) from None


def _distinct_jobs(hydra: Any, master: Any, overrides: list[str]) -> tuple[list[list[str]], list[Any]]:
    """One job per distinct combination of group options among the sweep's jobs, as the configured sweeper
    expands them (Hydra's basic sweeper, or a subclass such as trustsim's plan sweeper), and every value a job
    sets, as a config tree to check (once every job's key sources are known). A sweeper of another kind (its
    own sweep syntax): the master config only."""
    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException
    from hydra.utils import get_class

    node = master.hydra.get("sweeper") or {}
    try:
        sweeper_class = get_class(str(node.get("_target_")))
    except Exception:  # not importable here: left to Hydra
        return [], []
    if not issubclass(sweeper_class, BasicSweeper):
        return [], []
    params = node.get("params") or {}
    lines = [f"{k}={v}" for k, v in params.items()] + [str(o) for o in master.hydra.overrides.task]
    parser = OverridesParser.create(config_loader=hydra.config_loader)
    try:
        parsed = parser.parse_overrides(lines)
        values = [_nest(o.key_or_group, value) for o in parsed for value in _choices(o)]
        sweeper = sweeper_class(max_batch_size=None, params=None)
        with contextlib.redirect_stderr(io.StringIO()):  # the sweeper announces its plan when it runs
            jobs = [job for batch in sweeper.split_arguments(parsed, None) for job in batch]
        values += _job_values(parser, jobs, set(lines))
    except HydraException as exc:
        raise _explain(hydra, exc, str(master.hydra.job.config_name), overrides) from None
    groups: dict[str, bool] = {}

    def is_group(line: str) -> bool:
        name = line.partition("=")[0].lstrip("+~").partition("@")[0]
        if name not in groups:
            groups[name] = bool(hydra.config_loader.get_group_options(name))
        return groups[name]

    distinct: dict[tuple[str, ...], list[str]] = {}
    for job in jobs:
        distinct.setdefault(tuple(line for line in job if is_group(line)), list(job))
    return list(distinct.values()), values


_NUMBER = re.compile(r"^[+~]*[\w.@/-]+=-?\d+(\.\d+)?$")


def _job_values(parser: Any, jobs: list[list[str]], spelled: set[str]) -> list[Any]:
    """The values of the job lines the command line did not spell out (a plan's, a sweep's elements), each
    distinct line once, as config trees to check; a line whose text is refused already (a key in its name,
    which Hydra's parse would quote) is refused here. Numbers need no look."""
    values = []
    for line in sorted({line for job in jobs for line in job} - spelled):
        if _NUMBER.match(line):
            continue
        if (problem := argument_problem(line)) is not None:
            raise Refused(*problem)
        (override,) = parser.parse_overrides([line])
        values.append(_nest(override.key_or_group, override.value()))
    return values


def check_config(cfg: Any) -> None:
    """Refuse a composed config (a DictConfig with its ``hydra`` node) that carries a secret or whose ``name``
    is not a label."""
    task = _plain(cfg)
    problem = config_problem(task)
    if problem is not None:
        key, reason = problem
        raise Refused(key, reason + _origin(cfg, key))
    name_problem = label_problem(task.get("name"))
    if name_problem is not None:
        raise Refused("name", name_problem)
    env_set = _hydra_env(cfg)
    problem = config_problem({"hydra": {"job": {"env_set": env_set}}}) if env_set else None
    if problem is not None:
        raise Refused(*problem)
    for key, text in _hydra_paths(cfg).items():
        if (refused := value_problem(text)) is not None:
            raise Refused(key, refused)


# Hydra settings that name folders, files and the job: written as directory and log-file names, in the
# manifest and on stdout.
HYDRA_PATHS = ("hydra.run.dir", "hydra.sweep.dir", "hydra.sweep.subdir", "hydra.job.name", "hydra.job.id")
_ENV_REF = re.compile(r"\$\{oc\.env:\s*([A-Za-z_][A-Za-z0-9_]*)")


def _hydra_paths(cfg: Any) -> dict[str, str]:
    """The Hydra paths a composed config sets, as Hydra will resolve them (``${oc.env:...}``, ``${now:...}``,
    ``${name}``, ``${hydra:...}``), each followed by the values of the variables it reads: a path that can only
    be resolved in the running job (a sweep's ``${hydra.job.num}``) is given as written, its secrets still
    seen."""
    from hydra.core.hydra_config import HydraConfig
    from omegaconf import OmegaConf

    written = OmegaConf.to_container(cfg.hydra, resolve=False)
    job = copy.deepcopy(cfg)  # set_config makes the hydra node read-only
    saved = HydraConfig.instance().cfg
    paths: dict[str, str] = {}
    try:
        HydraConfig.instance().set_config(job)
        for key in HYDRA_PATHS:
            raw = str(_at(written, key.removeprefix("hydra.")) or "")
            try:
                resolved = str(OmegaConf.select(job, key) or "")
            except Exception:  # needs the running job
                resolved = raw
            paths[key] = " ".join([resolved, *(os.environ.get(v, "") for v in _ENV_REF.findall(raw))])
    finally:
        HydraConfig.instance().cfg = saved
    return paths


def _at(tree: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        tree = tree.get(part) if isinstance(tree, dict) else None
    return tree


def _plain(cfg: Any) -> dict[str, Any]:
    """The job part of a composed config as plain containers: resolved where it can be (``${oc.env:...}``,
    ``${oc.select:...}``), else as written."""
    from omegaconf import OmegaConf

    task = OmegaConf.masked_copy(cfg, [k for k in cfg if k != "hydra"])
    try:
        return plain_mapping(OmegaConf.to_container(task, resolve=True), "config")
    except Exception:  # an interpolation that needs the running job (${hydra:...}) or a missing value
        return plain_mapping(OmegaConf.to_container(task, resolve=False), "config")


def _hydra_env(cfg: Any) -> dict[str, Any]:
    from omegaconf import OmegaConf

    node = OmegaConf.select(cfg, "hydra.job.env_set")
    return (
        plain_mapping(OmegaConf.to_container(node, resolve=False), "hydra.job.env_set")
        if node is not None
        else {}
    )


def _origin(cfg: Any, key: str) -> str:
    """Where a key's group came from: `` (in model=evil)`` when its top-level group was chosen."""
    from omegaconf import OmegaConf

    group = re.split(r"[.\[]", key)[0]
    choice = OmegaConf.select(cfg, f"hydra.runtime.choices.{group}", default=None)
    return f" (composed from {group}={choice})" if choice else ""


def _explain(hydra: Any, exc: Exception, config_name: str, overrides: list[str]) -> Refused:
    """Hydra's composition error as a :class:`Refused` naming the key and the fix."""
    from hydra.errors import MissingConfigException

    message = str(exc)
    if isinstance(exc, MissingConfigException) and exc.missing_cfg_file and exc.options:
        group, _, option = str(exc.missing_cfg_file).rpartition("/")
        available = sorted(exc.options)
        hint = closest(option, available)
        return Refused(
            group,
            f"unknown option {option!r}{f'; did you mean {group}={hint}?' if hint else ''} "
            f"(available: {', '.join(available)})",
        )
    if isinstance(exc, MissingConfigException):
        return Refused(str(exc.missing_cfg_file or "config"), _first_line(exc))
    if m := _NEEDS_PLUS.search(message):
        key = m["key"]
        return Refused(
            key,
            f"'{key}' is not in the defaults list: add it with a '+' prefix, e.g. +{key}=..."
            + (" (a preset: +experiment=NAME)" if key == "experiment" else ""),
        )
    if m := _NOT_IN_CONFIG.search(message):
        return Refused(m["key"], _unknown_key_hint(hydra, m["key"], config_name, overrides))
    if m := _SWEEP_IN_RUN.search(message):
        key, _, value = m["line"].partition("=")
        key = key.lstrip("+~")
        return Refused(
            key,
            f"{value!r} is sweep syntax: add -m (--multirun) to run one job per value, e.g. "
            f"python -m trustsim -m {m['line']}; for a list use {key}=[...], for text quote it: {key}='\"{value}\"'",
        )
    if m := _NOT_THERE.search(message):
        return Refused(m["key"], "cannot delete it (~key): it is not in the config")
    if m := _TWICE.search(message):
        return Refused(m["key"], f"given twice; keep one {m['key']}=... on the command line")
    m = _QUOTED_KEY.search(message)
    return Refused(m["key"] if m else "command line", _first_line(exc))


def _unknown_key_hint(hydra: Any, key: str, config_name: str, overrides: list[str]) -> str:
    """``key`` is not in the config: the closest key of its parent (the config composed without that
    override), and the ``+`` prefix for a new one."""
    from hydra.types import RunMode
    from omegaconf import OmegaConf

    parent, _, leaf = key.rpartition(".")
    hint = ""
    with contextlib.suppress(Exception):
        others = [o for o in overrides if o.lstrip("+~").partition("=")[0] != key and "," not in o]
        cfg = hydra.compose_config(config_name, others, run_mode=RunMode.RUN, with_log_configuration=False)
        node = OmegaConf.select(cfg, parent) if parent else cfg
        near = closest(leaf, [str(k) for k in node]) if node is not None and hasattr(node, "keys") else None
        hint = f"did you mean {parent + '.' if parent else ''}{near}? " if near else ""
    return f"no such key; {hint}(to add a new key use +{key}=...)"


def _first_line(exc: BaseException) -> str:
    return next((ln.strip() for ln in str(exc).splitlines() if ln.strip()), type(exc).__name__)
