# bind in a non-interactive shell: bash 5.2 warns that line editing is not enabled, then lists
# readline's defaults.

#### bind without arguments only warns
bind; echo $?

#### bind lists functions, bindings and variables
bind -l
bind -p
bind -P
bind -v
bind -V
bind -s; bind -S; bind -X
echo end

#### bind -q asks where a function is bound
bind -q abort; echo $?
bind -q nosuch; echo $?
bind -q abort-nonsense; echo $?
bind -q possible-command-completions; echo $?

#### bind refuses bad keymaps, unreadable files and bad -x
bind -m bad; echo $?
bind -m emacs -q abort; echo $?
bind -f /nonexist; echo $?
bind -x "\C-x: ls"; echo $?
bind -Z; echo $?
bind -q; echo $?

#### bind accepts settings
bind "set bell-style none"; echo $?
bind '"\C-x": abort'; echo $?
