"""The image's runtime in a session: its commands (`[commands.NAME]`, run by name like a tool),
its python drives and virtual hosts, and the code loader they share. Not tools: the session
binds them from the image (kshell.image.session), above the shell's stages."""
