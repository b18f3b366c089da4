# getopts: flags, arguments, OPTIND, OPTARG, silent mode, errors.

#### simple flags
while getopts ab opt; do echo "opt=$opt"; done
echo "OPTIND=$OPTIND"
## args: -a -b rest

#### combined flags
while getopts abc opt; do echo "opt=$opt"; done
## args: -abc

#### option with an argument
while getopts f:v opt; do echo "$opt ${OPTARG-none}"; done
## args: -f file.txt -v

#### option argument attached
while getopts f: opt; do echo "$opt=$OPTARG"; done
## args: -ffile

#### shift away parsed options
while getopts ab opt; do :; done
shift $((OPTIND - 1))
echo "rest: $*"
## args: -a -b one two

#### double dash ends options
while getopts a opt; do echo "opt=$opt"; done
shift $((OPTIND - 1))
echo "rest: $*"
## args: -a -- -b

#### first non-option ends parsing
while getopts a opt; do echo "opt=$opt"; done
echo "OPTIND=$OPTIND"
## args: x -a

#### unknown option in normal mode
while getopts a opt; do echo "opt=$opt OPTARG=[${OPTARG-}]"; done
## args: -z

#### missing argument in normal mode
while getopts f: opt; do echo "opt=$opt"; done
## args: -f

#### unknown option in silent mode
while getopts :a opt; do echo "opt=$opt OPTARG=$OPTARG"; done
## args: -z

#### missing argument in silent mode
while getopts :f: opt; do echo "opt=$opt OPTARG=$OPTARG"; done
## args: -f

#### OPTERR=0 silences messages
OPTERR=0
while getopts a opt; do echo "opt=$opt"; done
## args: -q

#### getopts status at the end
getopts a opt
echo "$? $opt"
getopts a opt
echo "$? $opt"
## args: -a

#### getopts with explicit arguments
while getopts xy: opt -x -y val; do echo "$opt ${OPTARG-}"; done

#### getopts in a function uses its arguments
f() { local OPTIND; while getopts n: o; do echo "n=$OPTARG"; done; }
f -n 1
f -n 2

#### resetting OPTIND to parse again
while getopts a o; do echo "first $o"; done
OPTIND=1
while getopts a o; do echo "second $o"; done
## args: -a

#### getopts without enough arguments
getopts
echo "status $?"

#### option argument that looks like an option
while getopts f:a opt; do echo "$opt ${OPTARG-}"; done
## args: -f -a

#### getopts with a digit option
while getopts 1 opt; do echo "opt=$opt"; done
## args: -1

#### getopts usage loop with case
verbose=0 out=
while getopts vo: opt; do
  case $opt in
    v) verbose=1;;
    o) out=$OPTARG;;
    *) echo usage; exit 2;;
  esac
done
echo "verbose=$verbose out=$out"
## args: -v -o result.txt
