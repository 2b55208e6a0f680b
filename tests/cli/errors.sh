# Errors: each prints its message on standard error and exits with its code
# (a topk_status value, 64 for usage, 74 for I/O). Standard error is shown too.
printf '1 2 3 4 5 6 7 8 9 10\n' > ten.txt
printf 'not a npy file' > bad.npy
printf '\223NUMPY\001\000\166\000{' > truncated.npy
printf "\223NUMPY\001\000\106\000{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }           \n0123456789abcdef" > fortran.npy

"$TOPK" select --device cpu missing.npy 2>&1; echo "missing file: $?"
"$TOPK" select --device cpu bad.npy 2>&1; echo "bad magic: $?"
"$TOPK" select --device cpu truncated.npy 2>&1; echo "truncated header: $?"
"$TOPK" select --device cpu fortran.npy 2>&1; echo "fortran order: $?"
printf '1 2 x 4\n' | "$TOPK" select --device cpu - 2>&1; echo "not a number: $?"
"$TOPK" select --device cpu -k 20 ten.txt 2>&1; echo "k > n: $?"
"$TOPK" select --device cpu --algo air_radix ten.txt 2>&1; echo "algo not built for the CPU: $?"
"$TOPK" select --device cpu --bogus ten.txt 2>&1; echo "unknown option: $?"
"$TOPK" select --device cpu --dtype f33 ten.txt 2>&1; echo "unknown dtype: $?"
"$TOPK" select --device cpu --algo fastest ten.txt 2>&1; echo "unknown algo: $?"
"$TOPK" select --device tpu ten.txt 2>&1; echo "unknown device: $?"
"$TOPK" select --device cpu -k 2.5 ten.txt 2>&1; echo "k not an integer: $?"
"$TOPK" select --device cpu -k -1 ten.txt 2>&1; echo "negative k: $?"
"$TOPK" select --device cpu ten.txt -k 2>&1; echo "missing value: $?"
"$TOPK" select --device cpu --rows 3 ten.txt 2>&1; echo "rows do not divide: $?"
"$TOPK" select --device cpu -k 2 ten.txt -o no/such/dir/out 2>&1; echo "unwritable output: $?"
"$TOPK" select --device cpu ten.txt ten.txt 2>&1; echo "two files: $?"
"$TOPK" gen --dist normal 2>&1; echo "gen without --n: $?"
"$TOPK" gen --n 10 --dist gaussian 2>&1; echo "unknown distribution: $?"
"$TOPK" frobnicate 2>&1; echo "unknown command: $?"
"$TOPK" 2>&1; echo "no command: $?"
