"""The operation context every mutation carries: who, on whose behalf, and when."""

from __future__ import annotations

from kfs.journal import ChangeKind, append_change, append_committed
from kfs.kstate import Txn
from kfs.values import value_class
from kfs.vfs.cred import Cred


@value_class(slots=True)
class Op:
    """One user-visible operation: one transaction, one clock reading, its receipts."""

    txn: Txn
    cred: Cred
    by: str
    origin: int
    now: int
    receipts: bool = True  # False: a store that keeps no journal of its own (a memory drive)

    def receipt(self, op: str, path: str, nbytes: int | None = None, **extra: object) -> None:
        if self.receipts:
            append_committed(self.txn, op, self.by, path, nbytes, extra)

    def changed(self, kind: ChangeKind, ino: int, parent: int = 0, name: bytes = b"") -> None:
        append_change(self.txn, self.origin, kind, ino, parent, name)
