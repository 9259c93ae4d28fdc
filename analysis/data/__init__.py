"""Data shipped with trustsim: ``escape-room-v2.tar.gz``, the reference study's raw logs (MIT licence;
see README.md here and LICENSE inside the archive). Use it through :mod:`analysis.reference_data`."""
