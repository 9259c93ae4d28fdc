"""Packages of the wheel: trustsim, games, agents, analysis, trustsim's Hydra sweeper and launcher plugins and the Hydra configs (``conf/`` ships as
``trustsim/conf``, so the installed ``trustsim`` command works from any directory). Everything else is in
pyproject.toml."""

from pathlib import Path

from setuptools import find_packages, setup

CONF = Path("conf")
conf_packages = ["trustsim.conf"] + [
    "trustsim.conf." + ".".join(p.relative_to(CONF).parts) for p in sorted(CONF.rglob("*")) if p.is_dir()
]

setup(
    packages=[
        # "trustsim*" also takes trustsim_inspect (the Inspect tasks; the inspect extra)
        *find_packages(include=["trustsim*", "agents*", "games*", "analysis*"]),
        "analysis.view.assets",  # the viewer's page code (data only, no __init__.py)
        "hydra_plugins",  # a namespace package (no __init__.py): listed so that editable installs extend it
        "hydra_plugins.trustsim_sweeper",  # trustsim's Hydra sweeper plugin
        "hydra_plugins.trustsim_launcher",  # trustsim's Hydra launcher plugin (the default for multiruns)
        *conf_packages,
    ],
    package_dir={"trustsim.conf": str(CONF)},
    package_data={name: ["*.yaml"] for name in conf_packages},
)
