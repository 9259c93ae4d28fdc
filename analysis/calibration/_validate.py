"""Input checks shared by the calibration functions."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray


def check_pairs(p: ArrayLike, y: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Validate probabilities and 0/1 outcomes; return them as float arrays.

    Raises:
        ValueError: naming the problem (length mismatch, empty input, NaN or out-of-range p, non-binary y).
    """
    p_arr = np.asarray(p, dtype=np.float64).ravel()
    y_arr = np.asarray(y, dtype=np.float64).ravel()
    if p_arr.shape != y_arr.shape:
        raise ValueError(f"p and y differ in length: {p_arr.size} vs {y_arr.size}")
    if p_arr.size == 0:
        raise ValueError("no prediction-outcome pairs (empty input)")
    if not np.all(np.isfinite(p_arr)):
        raise ValueError(
            f"p contains {int(np.sum(~np.isfinite(p_arr)))} missing/non-finite values; drop them first"
        )
    if np.any((p_arr < 0.0) | (p_arr > 1.0)):
        bad = p_arr[(p_arr < 0.0) | (p_arr > 1.0)][0]
        raise ValueError(f"p must lie in [0, 1]; found {bad!r}")
    if not np.all((y_arr == 0.0) | (y_arr == 1.0)):
        raise ValueError("outcomes y must be 0 or 1")
    return p_arr, y_arr
