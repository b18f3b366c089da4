"""KState: the one LMDB environment that holds everything durable in K.

Nothing above this package speaks LMDB: callers get a `KState` and run functions inside
read or write transactions (`Txn`), JuiceFS-style, so another engine could implement the same
small interface later.
"""

from kfs.kstate.env import DEFAULT_STATE_DIR, KState, default_state_dir
from kfs.kstate.txn import Txn, ViewTxn

__all__ = ["DEFAULT_STATE_DIR", "KState", "Txn", "ViewTxn", "default_state_dir"]
