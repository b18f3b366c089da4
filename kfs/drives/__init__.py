"""Drives: paths of the tree mounted from other backings than K's own state (docs/image.md).

- kfs.runtime.drives: the records, as the image declares them.
- kfs.drives.memory: a memory drive, a KState of its own on tmpfs for one server run.
- kfs.drives.host: a host drive, a real directory reached with the agent's credentials.
- kfs.drives.synthetic: a synthetic drive, read-only files made when read (the shell's /sys).
- kfs.drives.view: `Drives`, the one composition (the drives mounted at paths) that `mount`
  opens, the `Backing` protocol, and `DriveFS`, the path face, which sends every path under a
  drive to it.
- kfs.drives.nodes: `MountedVFS`, the inode face over the same drives (the FUSE mount).
"""
