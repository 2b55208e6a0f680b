# topk select on text input: largest, smallest, sorted, k = n, rows, standard input.
# Unsorted results are piped through sort (by row, then index): their order is the algorithm's.
printf '3 1 4 1 5 9 2 6\n5 3 # a comment\n5.5, -inf nan -0 0.1 1e30\n' > data.txt

echo "== largest, k=3, sorted"
"$TOPK" select --device cpu -k 3 --sorted data.txt
echo "== largest, k=4, unsorted"
"$TOPK" select --device cpu -k 4 data.txt | sort -k1,1n -k3,3n
echo "== smallest, k=4, sorted"
"$TOPK" select --device cpu -k 4 --smallest --sorted data.txt
echo "== k = n = 16, sorted"
"$TOPK" select --device cpu -k 16 --sorted data.txt
echo "== k = n = 16, smallest, sorted"
"$TOPK" select --device cpu -k 16 -s --sorted data.txt
echo "== k = 0"
"$TOPK" select --device cpu -k 0 data.txt
echo "status $?"
echo "== 4 rows of 4, k=2, sorted"
"$TOPK" select --device cpu --rows 4 -k 2 --sorted data.txt
echo "== standard input, integers, smallest"
printf '7 -3 12\n-3 40 0\n' | "$TOPK" select --device cpu --dtype i32 -k 3 -s --sorted -
echo "== ties at the k-th value: the lowest indices, ordered by index"
printf '2 5 2 5 2 5 1\n' | "$TOPK" select --device cpu --index i32 -k 4 --sorted -
echo "== f32 values print exactly, in their shortest form"
printf '0.1 16777217 3.4028235e38 1e-45 -2.5\n' | "$TOPK" select --device cpu --dtype f32 -k 5 --sorted -
