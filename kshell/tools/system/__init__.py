"""Environment and identity tools: env, printenv, id, whoami, hostname, uname, date, which, help,
nproc."""
