"""Session workers: each agent session's K shell in a process of its own.

`zygote` is the pre-loaded parent that forks workers, `worker` the process that runs one
session's shell, `wire` the frames between a worker and the SSH front end, `cgroups` and
`limits` the kernel bounds (memory, tasks, CPU) a worker runs under. The front end's side is
`kshell.server.workers`; docs/process-model.md describes the whole.
"""
