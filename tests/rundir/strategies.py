"""Hypothesis strategies shared by the run-directory writer tests."""

from __future__ import annotations

from hypothesis import strategies as st

cells = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**12), 10**12),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(alphabet=st.sampled_from(list('ab ,"\n\r;:-é')), max_size=6),
)
"""A table cell as the games give it: None, a boolean, an int, a float or text needing every kind of quoting."""
