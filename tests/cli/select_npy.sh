# topk gen, then topk select on the .npy it wrote; -o writes .npy results read back here.
"$TOPK" gen --dist normal --n 1000 --rows 3 --seed 7 -o in.npy
echo "gen: $?"
echo "== the 5 largest of each row, sorted"
"$TOPK" select --device cpu -k 5 --sorted in.npy
echo "== the 4 smallest, int32 indices, to out.values.npy and out.indices.npy"
"$TOPK" select --device cpu -k 4 --smallest --sorted --index i32 in.npy -o out.npy
echo "select: $?"
dd if=out.values.npy bs=1 skip=10 count=59 2>/dev/null; echo
dd if=out.indices.npy bs=1 skip=10 count=59 2>/dev/null; echo
"$TOPK" select --device cpu -k 4 --smallest --sorted out.values.npy
"$TOPK" select --device cpu -k 4 --smallest --sorted out.indices.npy
echo "== bf16, 1-D, with NaN: NaN is the largest value"
"$TOPK" gen --dtype bf16 --n 5000 --nan 0.001 --seed 3 -o b.npy
"$TOPK" select --device cpu -k 16 --sorted b.npy
echo "== all equal: the lowest indices win, largest and smallest alike"
"$TOPK" gen --dist equal --dtype u64 --n 100 -o e.npy
"$TOPK" select --device cpu -k 3 --sorted e.npy
"$TOPK" select --device cpu -k 3 --sorted --smallest e.npy
echo "== a 1-D file split with --rows, unsorted (sorted by row and index here)"
"$TOPK" gen --dist radix --dtype i64 --n 40 --seed 11 -o r.npy
"$TOPK" select --device cpu --rows 2 -k 3 r.npy | sort -k1,1n -k3,3n
echo "== raw binary: the data of out.indices.npy after its 128-byte header"
dd if=out.indices.npy of=idx.bin bs=64 skip=2 2>/dev/null
"$TOPK" select --device cpu --raw --dtype i32 --rows 3 -k 1 --sorted idx.bin
echo "== gen text output piped into select"
"$TOPK" gen --dtype f16 --n 50 --seed 5 | "$TOPK" select --device cpu --dtype f16 -k 3 --sorted -
