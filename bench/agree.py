"""What every bench checks before it prints a row: K did the same work as its peer.

A ratio against a peer that did other work (a different output, a failed run, a file left
different) is not a result, so a mismatch stops the bench, naming the row and both results.
"""

from __future__ import annotations

import sys


def _show(value: object, limit: int = 300) -> str:
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def agree(row: str, k: object, peer: object, peer_name: str) -> None:
    """Return when `k` equals `peer`; else exit with status 1, before any ratio for `row`."""
    if k != peer:
        sys.stdout.flush()
        sys.exit(f"{row}: K's result differs from {peer_name}'s, so no ratio is printed\n"
                 f"  {'K':<{len(peer_name)}}: {_show(k)}\n  {peer_name}: {_show(peer)}")
