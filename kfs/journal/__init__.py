"""The journal: append-only receipts, the change feed and the event log, all in KState.

Every VFS mutation writes its receipt and change rows in the same transaction as the change
itself, so the journal never disagrees with the files.
"""

from kfs.journal.changes import (
    Change,
    ChangeKind,
    append_change,
    append_change_row,
    change_row,
    changes_since,
    last_change,
    oldest_change,
)
from kfs.journal.events import append_event, events_since, follow_events, last_event, prune_events
from kfs.journal.receipts import (
    FixedReceipt,
    append_committed,
    append_receipt,
    drop_receipt,
    prune_receipts,
    receipt_rows,
    receipts_since,
)

__all__ = [
    "Change",
    "ChangeKind",
    "FixedReceipt",
    "append_change",
    "append_change_row",
    "append_committed",
    "append_event",
    "append_receipt",
    "drop_receipt",
    "change_row",
    "changes_since",
    "events_since",
    "follow_events",
    "last_event",
    "prune_events",
    "prune_receipts",
    "last_change",
    "oldest_change",
    "receipt_rows",
    "receipts_since",
]
