"""trustsim: trust games between language-model agents."""

__version__ = "0.1.0"
