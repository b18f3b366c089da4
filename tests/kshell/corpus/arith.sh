# Arithmetic: $(( )), (( )), let-free forms, C operators, assignment operators, bases, errors.

#### addition and precedence
echo $((1 + 2 * 3)) $(( (1 + 2) * 3 ))

#### integer division and modulo truncate toward zero
echo $((7 / 2)) $((-7 / 2)) $((7 % 3)) $((-7 % 3))

#### exponent
echo $((2 ** 10)) $((3 ** 0))

#### negative exponent is an error that abandons the line
echo $((2 ** -1))
echo after

#### unary operators
echo $((-5)) $((+5)) $((!0)) $((!7)) $((~0))

#### comparison operators give 0 or 1
echo $((1 < 2)) $((2 < 1)) $((2 <= 2)) $((3 > 2)) $((3 >= 4)) $((1 == 1)) $((1 != 1))

#### logical operators
echo $((1 && 0)) $((1 || 0)) $((0 || 0)) $((2 && 3))

#### logical operators short-circuit
x=0
echo $((0 && (x = 5))) $x
echo $((1 || (x = 6))) $x

#### bitwise operators
echo $((6 & 3)) $((6 | 3)) $((6 ^ 3)) $((1 << 4)) $((256 >> 2))

#### ternary operator
x=5
echo $((x > 3 ? 10 : 20)) $((x > 9 ? 10 : 20))

#### nested ternary
x=2
echo $((x == 1 ? 100 : x == 2 ? 200 : 300))

#### comma operator yields the last value
echo $((a = 1, b = 2, a + b))

#### variables without dollar
x=4 y=5
echo $((x * y)) $(($x * $y))

#### unset variable is zero
echo $((nosuch + 1))

#### empty variable is zero
e=
echo $((e + 1))

#### variable holding an expression is evaluated
e='2 + 3'
echo $((e * 2)) $(($e * 2))

#### assignment operators
x=10
echo $((x += 5)) $((x -= 3)) $((x *= 2)) $((x /= 4)) $((x %= 4))
echo $x

#### shift and bitwise assignment operators
x=1
echo $((x <<= 3)) $((x >>= 1)) $((x |= 1)) $((x &= 6)) $((x ^= 15))

#### pre and post increment
i=5
echo $((i++)) $i $((++i)) $i $((i--)) $i $((--i)) $i

#### hexadecimal and octal literals
echo $((0x1f)) $((0XFF)) $((010)) $((0))

#### base notation
echo $((16#ff)) $((2#1011)) $((8#17)) $((36#z)) $((64#_))

#### base notation with letters above 36
echo $((62#Z)) $((37#a)) $((37#A))

#### invalid digit for base is an error
echo $((2#12))
echo after

#### invalid octal literal is an error
echo $((09))
## status: 1

#### division by zero abandons the command and the script goes on
echo $((1 / 0))
echo next line runs

#### modulo by zero
echo $((5 % 0))
## status: 1

#### division by zero in a variable message
z=0
echo $((10 / z))
## status: 1

#### arithmetic syntax error message
echo $((1 + ))
## status: 1

#### arithmetic syntax error with operand expected
echo $((* 2))
## status: 1

#### double parentheses command status
((1)); echo $?
((0)); echo $?
((5 - 5)); echo $?
((-1)); echo $?

#### double parentheses assigns
((x = 3 * 4))
echo $x

#### double parentheses in if
x=7
if ((x > 5)); then echo big; fi
if ((x > 50)); then echo huge; else echo not-huge; fi

#### double parentheses in a while loop
i=0
while ((i < 3)); do echo $i; ((i++)); done

#### post increment of zero makes (( )) fail
i=0
((i++))
echo $? $i

#### let builtin
let x=2*3 y=x+1
echo $x $y
let 0
echo $?

#### 64-bit wraparound
echo $((9223372036854775807 + 1))
echo $((2 ** 63)) $((2 ** 64))

#### large values
echo $((1000000 * 1000000))

#### negative numbers and modulo sign
echo $((-1 % 5)) $((5 % -3))

#### parentheses nest deeply
echo $(( ((((1 + 2)))) * ((3)) ))

#### whitespace and newlines inside arithmetic
echo $((  1
  +
  2 ))

#### arithmetic on array element
a=(10 20 30)
echo $((a[1] + a[2])) $((${a[0]} * 2))

#### assign to array element in arithmetic
a=(1 2 3)
((a[1] += 40))
echo ${a[@]}

#### arithmetic with positional parameters
echo $(($1 + $2))
## args: 3 4

#### string comparison in arithmetic is numeric
x=010
echo $((x == 8))

#### command substitution inside arithmetic
echo $(( $(echo 6) * 7 ))

#### dollar-bracket legacy arithmetic
echo $[1 + 2]

#### unary minus binds tighter than exponent base
echo $((-2 ** 2)) $(( (-2) ** 2 ))

#### assignment to non-variable is an error
echo $((1 = 2))
## status: 1

#### increment of literal is an error
echo $((5++))
## status: 1

#### for arithmetic with comma
for ((i = 0, j = 10; i < 3; i++, j--)); do echo $i $j; done

#### arithmetic expansion in a word
echo file$((1 + 1)).txt

#### quoted arithmetic expansion
x="$(( 2 * 21 ))"
echo "$x"

#### variable recursion in arithmetic
a=b b=c c=7
echo $((a + 1))

#### arithmetic error in (( )) does not exit the shell
((1 / 0))
echo status $?

#### arithmetic error in an assignment abandons the rest of its line
echo start
x=$((1 / 0)); echo same line
echo next line $?

#### arithmetic error as the last command sets status 1
echo start
x=$((1 / 0))
## status: 1

#### equality and assignment inside conditions
x=1
if ((x == 1)); then echo one; fi
((x = 0)) || echo assigned-zero
echo $x

#### bitwise not and negative
echo $((~5)) $((-(~5)))

#### exponent right associative
echo $((2 ** 3 ** 2))

#### relational chaining is left associative
echo $((3 > 2 > 1)) $((1 < 2 < 3))

#### side effects within one expression go left to right
i=1
echo $(( i++ + ++i )) $i

#### leading zero makes a number octal: 08 is an error
x=08
echo $((x + 1))
echo next

#### base 10 prefix reads a leading-zero number as decimal
x=08
echo $((10#$x + 1))

#### shifting into the sign bit
echo $((1 << 63)) $((1 << 64))

#### ternary with variables and assignment
a=5
echo $(( a ? a : 0 )) $(( b = a > 3 ? 1 : 2 )) $b

#### arithmetic error inside a for loop reports without a line number
for i in 1; do echo $((i / 0)); echo loop; done
echo after
