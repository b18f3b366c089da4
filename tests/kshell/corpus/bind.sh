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

#### bind set changes readline variables that -v and -V show
bind "set mark-directories off"
bind "set bell-style visible"
bind "set completion-query-items 50"
bind "set nosuch 1"; echo $?
bind "set enable-keypad yes"
bind "set show-all-if-ambiguous On"
bind -v
bind -V
( bind "set bell-style none"; bind -V ) > /dev/null
bind -v

#### bind -f reads set lines from a file
bind -f rc; echo $?
bind -v
## file: rc
set colored-stats on
# a comment
"\C-x": abort
set history-size 5
## end
