# Help: the first lines of each, and the exit-code table (the version is masked).
"$TOPK" help | head -n 3 | sed 's/^topk [0-9][0-9.]*:/topk X.Y.Z:/'
"$TOPK" --help | grep -E '^  (0|3|9|64|74) '
"$TOPK" select --help | head -n 3
"$TOPK" help gen | head -n 2
"$TOPK" info --help | head -n 1
"$TOPK" help nosuch 2>&1; echo "status $?"
"$TOPK" version | sed 's/^topk [0-9][0-9.]*$/topk X.Y.Z/' | head -n 1
