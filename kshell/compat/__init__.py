"""Drop-ins for the sandbox SDKs agent code already calls: `kshell.compat.e2b` (E2B's
`Sandbox`), `kshell.compat.daytona` (Daytona's `Daytona`) and `kshell.compat.computesdk`
(ComputeSDK's provider-neutral calls), over the K SDK. A sandbox is a K computer and one agent
session on it (kshell.compat.core); see docs/compat.md for what each call maps to, and for the
calls K refuses, with the reason, at the call site.
"""
