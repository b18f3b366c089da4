"""What every stage of the shell shares and none of them owns: the interpreter's control flow as
exceptions (kshell.core.errors) and the variable table (kshell.core.variables). It imports no
stage, so syntax, expand, exec, builtins and tools can all stand on it."""
