"""``python -m analysis view``: a self-contained static site to browse runs, sweeps and the reference logs.

Modules: :mod:`.site` (build the site: assets + data files loaded on demand), :mod:`.escape_room` (engine
events and reference logs → round-by-round games), :mod:`.families` (reliance paths, arena grids, trust-game
exchanges), :mod:`.markdown` (embedded analysis reports), :mod:`.cli` (the subcommand and ``--serve``).
"""
