"""Which ``model.local.*`` settings change the embedded model's answers (the evidence for the request key).

Replays the first decision requests of a request store (a run of the default experiment, e.g. the store
``bench_llm_local.py`` leaves in its temporary folder), in the order they were sent, through the embedded
model under one setting at a time, each in a fresh process, and compares with the defaults:

- the answer texts (sampled with the seed the client derives from the request, as in a run);
- with the guided decoder, the logits after each prompt (bit for bit, and the largest difference).

A setting that changes the logits of any prompt can change an answer (a sampled token near a tie), so it
belongs in the request key even where the few answers compared here happen to agree.

    python tests/benchmarks/bench_local_settings.py STORE [--requests 12]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
# (name, overrides of conf/model/smollm2.yaml's local block) against the reference "defaults" (one thread, so
# that a busy machine does not slow it down; n_threads=2 is one of the variants); "grammar ..." against "grammar"
BASE = {"n_threads": 1}
VARIANTS: list[tuple[str, dict]] = [
    ("defaults", {}),
    ("defaults again", {}),
    ("n_threads=2", {"n_threads": 2}),
    ("n_batch=512", {"n_batch": 512}),
    ("n_batch=64", {"n_batch": 64}),
    ("n_ctx=4096", {"n_ctx": 4096}),
    ("n_ctx=16384", {"n_ctx": 16384}),
    ("state_cache_mb=0", {"state_cache_mb": 0}),
    ("grammar", {"decoder": "grammar"}),
    ("grammar state_cache_mb=0", {"decoder": "grammar", "state_cache_mb": 0}),
]


def requests(store: Path, n: int) -> list[tuple[list, dict]]:
    """The first ``n`` decision requests (messages, params with the client's per-request seed)."""
    con = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    rows = con.execute(
        "SELECT key, request FROM responses WHERE purpose = 'decision' ORDER BY created LIMIT ?", (n,)
    ).fetchall()
    out = []
    for key, request in rows:
        body = json.loads(request)
        params = dict(body["params"])
        params["seed"] = (int(params.get("seed") or 0) + int(key[:8], 16)) % (2**31)  # LLMClient._send_params
        out.append((body["messages"], params))
    return out


def replay(overrides: dict, reqs_file: Path, out_file: Path) -> None:
    """In this process: load the model under ``overrides`` and answer every request in order."""
    from omegaconf import OmegaConf

    from trustsim.llm import local, local_decode
    from trustsim.llm.config import parse_model_config

    cfg = OmegaConf.load(REPO / "conf/model/smollm2.yaml")
    for k, v in {**BASE, **overrides}.items():
        cfg.local[k] = v
    local_cfg = parse_model_config(cfg).local
    logits: list[np.ndarray] = []
    original = local_decode.Engine.prefill

    def prefill(self, tokens, stats):  # the logits after the prompt: read only, nothing else changes
        original(self, tokens, stats)
        logits.append(self._logits())

    local_decode.Engine.prefill = prefill
    texts = []
    for messages, params in json.loads(reqs_file.read_text()):
        texts.append(local.generate(local_cfg, messages, params)["choices"][0]["message"]["content"])
    np.save(out_file.with_suffix(".npy"), np.array(logits) if logits else np.zeros((0,)))
    out_file.write_text(json.dumps(texts))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("store", nargs="?")
    parser.add_argument("--requests", type=int, default=12)
    parser.add_argument("--replay", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.replay:
        replay(json.loads(args.replay[0]), Path(args.replay[1]), Path(args.replay[2]))
        return
    tmp = Path(tempfile.mkdtemp(prefix="bench_local_settings_"))
    reqs = tmp / "requests.json"
    reqs.write_text(json.dumps(requests(Path(args.store), args.requests)))
    print(f"{args.requests} decision requests of {args.store}; load before {os.getloadavg()[0]:.2f}")
    results: dict[str, tuple[list[str], np.ndarray]] = {}
    for i, (name, overrides) in enumerate(VARIANTS):
        out = tmp / f"v{i}.json"
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        cmd = [sys.executable, __file__, "--replay", json.dumps(overrides), str(reqs), str(out)]
        subprocess.run(cmd, check=True, cwd=REPO)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        texts = json.loads(out.read_text())
        logits = np.load(out.with_suffix(".npy"))
        results[name] = (texts, logits)
        ref_texts, ref_logits = results["grammar" if name.startswith("grammar ") else "defaults"]
        same_texts = sum(a == b for a, b in zip(texts, ref_texts, strict=True))
        line = f"{name:<26} answers equal to the reference: {same_texts}/{len(texts)}"
        if logits.size and ref_logits.size:
            diff = np.abs(logits - ref_logits).max(axis=1)
            line += (
                f"; prompts whose logits are bit-identical: {int((diff == 0).sum())}/{len(diff)}, "
                f"largest difference {diff.max():.2e}"
            )
        print(
            f"{line}  ({time.perf_counter() - start:.0f} s wall, {cpu:.0f} s CPU, load {os.getloadavg()[0]:.2f})"
        )
    print("reference: 'defaults' (guided decoder, one thread); 'grammar ...' variants against 'grammar'")


if __name__ == "__main__":
    main()
