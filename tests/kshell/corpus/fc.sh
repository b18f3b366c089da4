# fc on the history list (a non-interactive shell's: filled by history -s).

#### fc with an empty history
fc -l; echo $?
fc -s; echo $?
fc; echo $?
fc -e true; echo $?
fc -x; echo $?

#### fc -l lists ranges
history -s "echo one"; history -s "echo two"; history -s "ls x"
fc -l
fc -l 1 2
fc -ln
fc -lr
fc -l echo
fc -l -1
fc -l -2
fc -l 1 -1

#### fc -s runs a command again in place of the last entry
history -s "echo one"; history -s "echo two"; history -s "ls x"
fc -s echo
fc -s two=three 2; echo $?
fc -l
fc -s nomatch; echo $?
fc -e - 1

#### fc with an editor runs what the editor leaves
history -s "echo one"; history -s "echo two"
FCEDIT=true fc 1; echo $?
fc -e true 1 2; echo $?
fc -e nosuched; echo $?
