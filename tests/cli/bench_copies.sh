# topk bench's input copies on the CPU backend: rotated through (enough copies to overflow the cache
# 3 times: 3 x 32 MiB / 4000 bytes), or one with --in-l2. Prints the CSV's buffers column and check.
col() { awk -F, -v name="$1" 'NR == 1 { for (i = 1; i <= NF; ++i) if ($i == name) c = i; next } { print name, $c }' "$2"; }
echo "== rotated copies"
"$TOPK" bench --device cpu -n 1000 -k 10 -a auto --reps 1 --warmup 0 --min-time 0 -o rot.csv > /dev/null 2>&1
echo "status $?"
col buffers rot.csv
col check rot.csv
echo "== --in-l2: one copy"
"$TOPK" bench --device cpu -n 1000 -k 10 -a auto --reps 1 --warmup 0 --min-time 0 --in-l2 -o one.csv > /dev/null 2>&1
echo "status $?"
col buffers one.csv
col check one.csv
