"""The inode face of the VFS as the FUSE layer calls it: cases first seen through the mount."""

from __future__ import annotations

import errno

from kfs.vfs import ROOT_INO, VFS

from .oserrors import raises_errno


def test_lookup_of_a_name_longer_than_255_bytes_is_enametoolong(vfs: VFS) -> None:
    with raises_errno(errno.ENAMETOOLONG):
        vfs.lookup(ROOT_INO, b"x" * 256)
    with raises_errno(errno.ENOENT):
        vfs.lookup(ROOT_INO, b"x" * 255)
