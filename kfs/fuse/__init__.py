"""kfs.fuse: the VFS as a real FUSE mount (pyfuse3 on trio), a thin translator to the inode API."""
