"""Request-store lookups: one WAL file vs a shard directory (``llm.store_dir``) of many jobs.

Builds a store of SHARDS × ROWS responses twice (one file; one shard per job, each filled in one
transaction), then times per lookup: a hit in the job's own shard, a hit in another job's shard, and a miss
(a request to send: every shard is consulted), and per stored answer (one commit each, as a job stores
them: WAL vs a shard's rollback journal with synchronous=FULL). Prints the numbers. ``python tests/benchmarks/bench_store_shards.py [--shards 100 --rows 200]``
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from trustsim.llm.store import (
    RequestStore,
    ShardedStore,
    StoredResponse,
    canonical_request,
    request_key,
)


def request(job: int, i: int) -> tuple[str, str]:
    canonical = canonical_request("openai/m", None, [{"role": "user", "content": f"job {job} q {i}"}], {}, 0)
    return request_key(canonical), canonical


def fill(store: RequestStore | ShardedStore, job: int, rows: int) -> None:
    for i in range(rows):
        key, canonical = request(job, i)
        store.put(key, model="openai/m", api_base=None, sample=0, purpose="decision", canonical=canonical,
                  response=StoredResponse("x" * 300, 500, 60, 0.001, 1.0))  # fmt: skip


def bulk(store: RequestStore, jobs: range | list[int], rows: int) -> None:
    store._conn.execute("BEGIN")
    for job in jobs:
        fill(store, job, rows)
    store._conn.execute("COMMIT")


def per_put_ms(store: RequestStore | ShardedStore, job: int, rows: int) -> float:
    start = time.perf_counter()
    fill(store, job, rows)
    return (time.perf_counter() - start) / rows * 1e3


def per_lookup_us(store: RequestStore | ShardedStore, keys: list[tuple[str, str]], hit: bool) -> float:
    start = time.perf_counter()
    for key, canonical in keys:
        assert (store.get(key, canonical) is not None) is hit
    return (time.perf_counter() - start) / len(keys) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--shards", type=int, default=100)
    parser.add_argument("--rows", type=int, default=200)
    parser.add_argument("--lookups", type=int, default=500)
    args = parser.parse_args()
    n = args.lookups
    with tempfile.TemporaryDirectory() as tmp:
        single = RequestStore(Path(tmp) / "single.sqlite", job="j0")
        bulk(single, range(args.shards), args.rows)
        shards = Path(tmp) / "shards"
        for job in range(1, args.shards):
            s = RequestStore(shards / f"{f'{job:064x}'[:16]}.sqlite", job=f"{job:064x}", journal="delete")
            bulk(s, [job], args.rows)
            s.close()
        t0 = time.perf_counter()
        own = ShardedStore(shards, job=f"{0:064x}")
        open_s = time.perf_counter() - t0
        put_wal = per_put_ms(single, 10**7, 50)
        put_shard = per_put_ms(own, 0, args.rows)
        own_keys = [request(0, i % args.rows) for i in range(n)]
        other_keys = [request(1 + i % (args.shards - 1), i % args.rows) for i in range(n)]
        miss_keys = [request(10**6, i) for i in range(n)]
        print(f"store of {args.shards} jobs x {args.rows} responses; load {os.getloadavg()[0]:.2f}")
        print(f"  store one answer (a commit): one WAL file {put_wal:.2f} ms; own shard {put_shard:.2f} ms")
        print(f"  open a shard directory of {args.shards} shards: {open_s * 1e3:.1f} ms")
        print("  per lookup (us):            one file   shard directory")
        for label, keys, hit in (("hit, own job", own_keys, True), ("hit, another job", other_keys, True),
                                 ("miss (to be sent)", miss_keys, False)):  # fmt: skip
            a = per_lookup_us(single, keys, hit)
            b = per_lookup_us(own, keys, hit)
            print(f"  {label:<26}{a:>10.1f}{b:>18.1f}")
        own.close()
        single.close()


if __name__ == "__main__":
    main()
