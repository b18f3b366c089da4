"""File and directory tools: ls, find, cp, mv, rm, mkdir, mkfifo, stat, chmod, ... on the VFS."""
