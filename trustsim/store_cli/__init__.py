"""``python -m trustsim.store_cli``: look after the request store (size and counts; prune by model or age; merge
shards).

Works on a store file (``llm.store_path``) or a shard directory (``llm.store_dir``). ``info`` opens stores
read-only; ``prune`` deletes in one transaction per file; ``merge`` copies responses into one store,
de-duplicated by request key (see :mod:`trustsim.llm.store`).
"""

from trustsim.store_cli.manage import StoreInfo, merge, prune, store_info

__all__ = ["StoreInfo", "merge", "prune", "store_info"]
