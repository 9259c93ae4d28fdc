"""trustsim's Hydra launcher: every job of a multirun in one process, all in flight at once (the default for
multiruns: ``hydra/launcher: trustsim`` in ``conf/config.yaml``; ``conf/hydra/launcher/trustsim.yaml``)."""

from hydra_plugins.trustsim_launcher.launcher import TrustsimLauncher

__all__ = ["TrustsimLauncher"]
