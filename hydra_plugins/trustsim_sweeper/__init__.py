"""trustsim's Hydra sweeper: Hydra's basic sweeper, plus ``+plan=PLAN.csv`` (one job per planned cell with the
plan's ``runs``). Selected by ``conf/config.yaml`` (``hydra/sweeper: trustsim``, ``conf/hydra/sweeper/trustsim.yaml``)."""

from hydra_plugins.trustsim_sweeper.sweeper import TrustsimSweeper

__all__ = ["TrustsimSweeper"]
