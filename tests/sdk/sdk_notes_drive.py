"""A python drive class for tests/sdk/test_drives.py: stored with the image by
`Komputer.boot(drives=...)` and loaded by the session worker from that source alone."""


class NotesDrive:
    """Files in a dict, made at mount, for the agent that mounts it."""

    def mount(self, ctx):  # noqa: ANN001, ANN201
        self.files = {"/hello.txt": b"hello " + ctx.agent.encode() + b"\n"}

    def unmount(self):  # noqa: ANN201
        self.files = {}

    def stat(self, path):  # noqa: ANN001, ANN201
        if path == "/":
            return {"type": "dir", "size": 0, "mtime": 0.0}
        data = self.files.get(path)
        return None if data is None else {"type": "file", "size": len(data), "mtime": 0.0}

    def readdir(self, path):  # noqa: ANN001, ANN201
        return sorted(p[1:] for p in self.files)

    def read(self, path):  # noqa: ANN001, ANN201
        return self.files[path]

    def write(self, path, data):  # noqa: ANN001, ANN201
        self.files[path] = data
