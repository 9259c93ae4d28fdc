"""The LLM tests' loopback fake server fixture."""

from tests.llm.conftest import fake_server  # noqa: F401
