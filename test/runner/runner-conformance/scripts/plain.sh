echo "args: $*"
echo "stdin: [$(cat)]"
echo "to stderr" >&2
exit 3
