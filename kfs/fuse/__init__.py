"""kfs.fuse: the VFS as a real FUSE mount (pyfuse3 on trio), a thin translator to the inode API."""

# The change sequence the mount's kernel caches reflect, read on its root directory (trusted.*:
# the kernel lets only root ask). Here, not in operations.py, so readers need not load pyfuse3.
COHERENCE_XATTR = b"trusted.kfs.coherent"
