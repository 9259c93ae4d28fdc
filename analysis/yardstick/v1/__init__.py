"""The yardstick's superseded first model (``v1``), kept only for the side-by-side comparison in
docs/yardstick.md (``python -m analysis yardstick --model v1``): Beta beliefs by the ``bayes`` agent's heuristic,
other seats not modelled, a verification spared the round's elimination in its ``team`` variant."""
