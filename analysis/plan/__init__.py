"""Plan a study before paying for it: sessions per cell for a target interval, with the cost.

Entry point: ``python -m analysis plan [DIR...] [--reference] --measure M --width W`` (see ``docs/analysis.md``,
"Planning a study"); the plan file drives a multirun: ``python -m trustsim -m +plan=outputs/plan/plan.csv``.
"""
