"""How much of a run's prompts a provider's prompt cache can serve: the cacheable prefix share.

Runs one default-length escape-room job in the trustsim prompt style (``+experiment=mid2strike agent=llm
agent.prompt=trustsim``, 11 games, transcript memory) against the loopback fake server, keeps every request it
sends, and reports, over all of them:

- **prefix share**: the characters each request shares, from its start, with an earlier request of the job
  (the longest common prefix with any of them), over all characters sent;
- **cacheable share**: the same in tokens (about four characters each) under OpenAI's implicit caching rule
  (a prefix counts from 1,024 tokens, in steps of 128); Gemini's implicit cache and Anthropic's marked one have
  the same 1,024-token floor.

Run it on two checkouts to compare prompt orders (the code imported is the one measured)::

    PYTHONPATH=/path/to/old python tests/benchmarks/bench_prompt_cache.py --label before
    PYTHONPATH=. python tests/benchmarks/bench_prompt_cache.py --label after
"""

from __future__ import annotations

import argparse
import bisect
import hashlib
import json
import logging
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from trustsim import api
from trustsim.llm.caching import common_prefix
from trustsim.llm.fake_server import FakeServer

KEY_ENV = "TRUSTSIM_BENCH_KEY"
CHARS_PER_TOKEN = 4
MIN_CACHED_TOKENS, CACHE_STEP_TOKENS = 1024, 128  # OpenAI's rule (trustsim.llm.caching; kept here so that the
# script also measures checkouts from before that module)


def reply(payload: dict) -> str:
    """Answers that depend on the request: pass or verify, confidences from its digest."""
    digest = hashlib.sha256(json.dumps(payload.get("messages"), sort_keys=True).encode()).digest()
    action = {"action": "verify", "target": 1 + digest[0] % 4} if digest[1] % 3 == 0 else {"action": "pass"}
    return json.dumps({**action, "confidence": {f"Q{k}": 0.5 for k in range(1, 5)}, "reasoning": "ok"})


def prompt_text(messages: list[dict]) -> str:
    """A request's prompt as one text, in the order a provider reads it."""
    return "".join(f"\x00{m.get('role')}\x00{m.get('content')}" for m in messages)


def cacheable_tokens(shared_tokens: float) -> int:
    tokens = int(shared_tokens)
    return tokens // CACHE_STEP_TOKENS * CACHE_STEP_TOKENS if tokens >= MIN_CACHED_TOKENS else 0


def shares(prompts: list[str]) -> tuple[float, float, int]:
    """(prefix share of characters, cacheable share of tokens, requests) over prompts in the order sent."""
    seen: list[str] = []  # sorted: the longest common prefix with any earlier prompt is with a neighbour
    shared = total = cached = tokens = 0
    for text in prompts:
        i = bisect.bisect_left(seen, text)
        common = max((common_prefix(text, seen[j]) for j in (i - 1, i) if 0 <= j < len(seen)), default=0)
        bisect.insort(seen, text)
        shared += common
        total += len(text)
        cached += cacheable_tokens(common / CHARS_PER_TOKEN)
        tokens += len(text) // CHARS_PER_TOKEN
    return shared / max(1, total), cached / max(1, tokens), len(prompts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--label", default="this checkout")
    parser.add_argument("--experiment", default="mid2strike")
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    os.environ[KEY_ENV] = "bench-key-0000"
    tmp = Path(tempfile.mkdtemp(prefix="trustsim-prompt-cache-"))
    with FakeServer(reply=reply) as srv:
        result = api.run(
            args.experiment,
            [
                "agent=llm",
                "agent.prompt=trustsim",
                "model=openai_compatible",
                f"model.api_base={srv.api_base}",
                "model.litellm_model=openai/fake",
                f"model.api_key_env={KEY_ENV}",
                f"llm.store_path={tmp / 'store.sqlite'}",
                "progress=false",
            ],
            run_dir=tmp / "run",
        )
        bodies = list(srv.requests)
    if result.status != "complete":
        sys.exit(f"the run failed: {result.failure}")
    prefix, cacheable, n = shares([prompt_text(b.get("messages") or []) for b in bodies])
    source = Path(api.__file__).resolve().parents[1]
    print(
        f"{args.label} ({source}): {n} requests; prefix share {prefix:.1%} of characters; cacheable share "
        f"{cacheable:.1%} of prompt tokens (>= {MIN_CACHED_TOKENS} tokens, steps of {CACHE_STEP_TOKENS}); load "
        f"{os.getloadavg()[0]:.1f}"
    )


if __name__ == "__main__":
    main()
