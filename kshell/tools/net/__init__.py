"""Network tools: curl and wget on the shell's virtual hosts (`hosts.HostTable`), and on real
HTTP when the shell allows it."""
