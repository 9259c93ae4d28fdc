"""Post-hoc confidence extraction: an extractor model reads free-text reasoning and returns the implied
probability as strict JSON; results are written as a ``predictions.csv`` with ``source=extracted:<model>``.

Sources: each game declares its own (``GameSpec.reasoning``: ``--kind`` name -> reader), e.g. the shared
escape-room-v2 reference logs (``game_*.json``) and arena run directories whose moves carry reasoning but no
stated probability. Run with ``python -m trustsim.extract``.
"""
