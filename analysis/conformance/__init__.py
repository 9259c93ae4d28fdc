"""Conformance of our escape-room rules with the reference study's recorded games
(``python -m analysis conformance``)."""
