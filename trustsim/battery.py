"""The trust-card battery: every game family for one model, as one Hydra multirun (docs/trust_card.md).

``python -m trustsim -m +experiment=trustcard model=X [card.size=full|small|smoke]`` sweeps over the
``card/part`` group (``conf/card/part/``; the parts and their order are the experiment's sweep, read by
:func:`parts`). ``+experiment=trustcard_offline`` plays the same parts with offline agents
(``conf/card/offline/``).

Before any job runs, :class:`BatteryPlan` (a Hydra callback set by the experiment) composes every part and
prints its planned decisions, and the expected requests and cost from ``trustsim.preview.estimate`` when
that module exists. ``python -m trustsim.battery [--size S] [overrides]`` prints the same plan without
running anything.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, get_args, get_type_hints

import yaml
from hydra.experimental.callback import Callback
from omegaconf import OmegaConf

from trustsim.api import compose
from trustsim.config import CardOptions, conf_dir, mapping_of, validate_config
from trustsim.errors import ConfigError
from trustsim.preview import estimate as preview_estimate
from trustsim.schema import build

SIZES: tuple[str, ...] = get_args(get_type_hints(CardOptions)["size"])
EXPERIMENTS = {False: ("trustcard", "card/part"), True: ("trustcard_offline", "card/offline")}
"""offline -> (the battery's experiment, the config group of its parts)."""


def parts(offline: bool = False) -> tuple[str, ...]:
    """The battery's parts, in order: the sweep over its part group in ``conf/experiment/<experiment>.yaml``
    (each part is ``conf/<group>/<part>.yaml``)."""
    experiment, group = EXPERIMENTS[offline]
    path = conf_dir() / "experiment" / f"{experiment}.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    swept = str(((data.get("hydra") or {}).get("sweeper") or {}).get("params", {}).get(f"+{group}", ""))
    found = tuple(p.strip() for p in swept.split(",") if p.strip())
    if not found:
        raise ConfigError("card.part", f"{path} sweeps no +{group} parts")
    return found


@dataclass(frozen=True)
class PartPlan:
    """What one part of the battery will do."""

    part: str
    game: str
    agent: str
    units: str  # e.g. "5 runs x 10 games"
    decisions: int  # decisions of the agent under test (escape room: an upper bound, every round played)
    bound: bool  # True when ``decisions`` is an upper bound
    estimate: Any = None  # trustsim.preview's Estimate (requests, cached, tokens, cost_low/estimate/high)

    @property
    def requests(self) -> int | None:
        return None if self.estimate is None else int(self.estimate.requests)

    @property
    def cost_usd(self) -> float | None:
        return None if self.estimate is None else self.estimate.cost_estimate


def part_plan(cfg: dict[str, Any], *, estimate: bool = True) -> PartPlan:
    """The plan of one composed part config (``estimate``: ask trustsim.preview for requests and cost)."""
    valid = validate_config(cfg)
    spec = valid.game
    if spec.count_decisions is None:
        raise ConfigError(
            "card.part", f"game {spec.name!r} cannot plan its decisions (GameSpec.count_decisions)"
        )
    units, decisions, bound = spec.count_decisions(valid)
    part = valid.card.part if valid.card is not None and valid.card.part else valid.root.name
    plan_estimate = preview_estimate(cfg) if estimate else None
    return PartPlan(part, spec.name, valid.agent.name, units, decisions, bound, plan_estimate)


def plan(overrides: Sequence[str] = (), *, offline: bool = False, estimate: bool = True) -> list[PartPlan]:
    """Compose every part of the battery with ``overrides`` (e.g. ``["model=gpt-5.1", "card.size=small"]``)."""
    experiment, group = EXPERIMENTS[offline]
    extra = [o for o in overrides if not o.lstrip("+").startswith(("experiment=", group + "="))]
    return [
        part_plan(compose(experiment, [*extra, f"+{group}={part}"]), estimate=estimate)
        for part in parts(offline)
    ]


def _money(value: float | None) -> str:
    return "unknown price" if value is None else f"${value:,.2f}"


def format_plan(plans: Sequence[PartPlan], size: str, model: str) -> str:
    """The table printed before the battery starts."""
    lines = [f"trust-card battery: size {size}, {model}: {len(plans)} parts (one sweep directory)"]
    for p in plans:
        extra = ""
        if p.estimate is not None:
            e = p.estimate
            low = f"{e.requests_low:,}–" if e.game_length == "range" and e.requests_low != e.requests else ""
            extra = f"; requests {low}{e.requests:,} ({e.cached:,} stored), cost {_money(e.cost_estimate)}"
        le = "<= " if p.bound else ""
        lines.append(
            f"  {p.part:<17} {p.game:<12} {p.agent:<28} {p.units:<36} {le}{p.decisions:,} decisions{extra}"
        )
    lines.append(f"  total: <= {sum(p.decisions for p in plans):,} decisions of the agent under test")
    estimates = [p.estimate for p in plans if p.estimate is not None]
    if len(estimates) == len(plans):
        total = estimates[0]
        for e in estimates[1:]:
            total = total + e
        to_send = total.requests - total.cached - getattr(total, "repeats", 0)
        cost = _money(total.cost_estimate)
        if total.cost_low is not None and total.cost_high is not None:
            cost += f" (range {_money(total.cost_low)}–{_money(total.cost_high)})"
        lines.append(
            f"  expected requests {total.requests:,} ({max(to_send, 0):,} to send, {total.cached:,} stored); "
            f"prompt tokens {total.prompt_tokens:,}, completion ~{total.completion_tokens:,}; "
            f"estimated cost {cost} (trustsim.preview)"
        )
        if total.reasoning_unmeasured:
            lines.append(
                f"  the estimate counts visible answers only for {total.reasoning_unmeasured:,} requests of a model "
                "that reasons (hidden reasoning is bounded by the range's high end): a smaller battery run first "
                "(card.size=smoke) stores answers whose median the next plan uses"
            )
    else:
        lines.append(
            "  expected requests / cost: trustsim.preview is not available; the decisions above bound them"
        )
    return "\n".join(lines)


class BatteryPlan(Callback):
    """Hydra callback of the battery experiments: print the plan before any job; refuse a non-multirun."""

    def on_run_start(self, config: Any, **kwargs: Any) -> None:
        print(
            "trustsim: the trust-card battery is a multirun: python -m trustsim -m +experiment=trustcard "
            "model=<name> (docs/trust_card.md)",
            file=sys.stderr,
        )
        sys.exit(2)

    def on_multirun_start(self, config: Any, **kwargs: Any) -> None:
        overrides = list(OmegaConf.select(config, "hydra.overrides.task") or [])
        offline = any(o.lstrip("+").startswith("experiment=trustcard_offline") for o in overrides)
        try:
            card = build(CardOptions, mapping_of(config.card, "card"), "card")
            plans = plan(overrides, offline=offline)
        except ConfigError as exc:
            print(f"trustsim: {exc}", file=sys.stderr)
            sys.exit(2)
        model = OmegaConf.select(config, "model.name", default="?")
        who = "offline agents" if offline or plans[0].agent != "llm" else f"model {model}"
        print(format_plan(plans, card.size, who), flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m trustsim.battery [--size S|--all-sizes] [--offline] [overrides]``: print the plan."""
    parser = argparse.ArgumentParser(prog="python -m trustsim.battery", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--size", choices=SIZES, default=None, help="battery size (default: card.size or full)"
    )
    parser.add_argument("--all-sizes", action="store_true", help="print the plan of every size")
    parser.add_argument(
        "--offline", action="store_true", help="the offline-agent battery (trustcard_offline)"
    )
    parser.add_argument("overrides", nargs="*", help="Hydra overrides, e.g. model=gpt-5.1")
    args = parser.parse_args(argv)
    sizes = SIZES if args.all_sizes else [args.size] if args.size else [None]
    for size in sizes:
        overrides = [*args.overrides, *([f"card.size={size}"] if size else [])]
        try:
            plans = plan(overrides, offline=args.offline)
        except ConfigError as exc:
            print(f"trustsim.battery: {exc}", file=sys.stderr)
            return 2
        model = next((o.split("=", 1)[1] for o in args.overrides if o.startswith("model=")), "smollm2")
        shown = size or next(
            (o.split("=", 1)[1] for o in args.overrides if o.startswith("card.size=")), "full"
        )
        print(format_plan(plans, shown, "offline agents" if args.offline else f"model {model}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
