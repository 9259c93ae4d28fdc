"""trustsim: trust games between language-model agents."""

__version__ = "0.1.0"

HEAVY_MODULES = (
    "litellm",  # the LLM transport: seconds to import
    "openai",  # litellm's client library (its error types)
    "httpx",  # litellm's HTTP client (its error types)
    "llama_cpp",  # the embedded model's runtime
    "matplotlib",  # figures
    "playwright",  # the viewer's browser checks
    "pandas",  # tables: only readers that return frames need it
    "hydra",  # composing configs (the entry point imports it at once)
    "omegaconf",  # Hydra's config objects
)
"""The only modules trustsim imports inside functions (lazily): heavy third-party packages that most commands
never need. Everything else is imported at the top of a module (tests/core/test_imports.py checks both this and
that ``trustsim/`` has no import cycle)."""
