"""Drives: paths of the tree mounted from other backings than K's own state (docs/image.md).

- kfs.runtime.drives: the records, as the image declares them.
- kfs.drives.memory: a memory drive, a KState of its own on tmpfs for one server run.
- kfs.drives.host: a host drive, a real directory reached with the agent's credentials.
- kfs.drives.view: `DriveFS`, the PathFS that sends every path under a drive to it, and
  `mount`, which opens a session's drives.
"""
