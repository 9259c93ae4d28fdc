"""``python -m trustsim.store``: look after the request store (size and counts; prune by model or age).

Reads and deletes rows of the store's existing ``responses`` table (see :mod:`trustsim.llm.store`; the schema
is not changed here). ``info`` opens the store read-only; ``prune`` deletes in one transaction.
"""

from trustsim.store.manage import StoreInfo, prune, store_info

__all__ = ["StoreInfo", "prune", "store_info"]
