"""The calibration table the shipped games share: ``predictions.csv`` with the cell columns ``memory`` and
``schedule`` (the escape room's; the other games leave them empty), so the games' predictions pool in one
table (``python -m analysis calibration``). A new game may use it or declare its own cell columns with
:func:`trustsim.rundir.prediction_schema`."""

from __future__ import annotations

from trustsim.rundir import prediction_schema

PREDICTIONS = prediction_schema(cell=("memory", "schedule"))
PREDICTION_COLUMNS = list(PREDICTIONS.columns)
