"""kfs: K's durable virtual filesystem (KState on LMDB, the VFS, the journal, the FUSE mount).

Importing this package does no work beyond loading modules.
"""
