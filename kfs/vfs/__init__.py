"""kfs.vfs: POSIX semantics on KState, with an inode-level face (FUSE) and a path face (shell)."""

from kfs.vfs.attrs import NOW, XATTR_CREATE, XATTR_REPLACE
from kfs.vfs.cred import R_OK, ROOT, W_OK, X_OK, Cred
from kfs.vfs.inode import CHUNK_SIZE, ROOT_INO, Inode
from kfs.vfs.namespace import RENAME_EXCHANGE, RENAME_NOREPLACE
from kfs.vfs.paths import PathFS
from kfs.vfs.vfs import VFS, FileHandle, StatFS

__all__ = [
    "CHUNK_SIZE",
    "NOW",
    "RENAME_EXCHANGE",
    "RENAME_NOREPLACE",
    "R_OK",
    "ROOT",
    "ROOT_INO",
    "W_OK",
    "XATTR_CREATE",
    "XATTR_REPLACE",
    "X_OK",
    "Cred",
    "FileHandle",
    "Inode",
    "PathFS",
    "StatFS",
    "VFS",
]
