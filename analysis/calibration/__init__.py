"""Calibration of stated probabilities against 0/1 outcomes (pure numpy).

Modules: ``scores`` (Brier, Murphy decomposition, log loss, ECE, reliability curve, bias),
``binning`` (equal-width / equal-mass bins), ``recalibrate`` (Platt, isotonic, cross-fitting),
``intervals`` (cluster-bootstrap intervals), ``load`` (predictions.csv), ``tables`` (measures per group),
``figures``, ``report`` and ``cli``.
"""
