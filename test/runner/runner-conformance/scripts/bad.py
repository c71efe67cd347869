# Not JSON on stdout; what it writes is written back all the same.
import json, sys
open("from-bad.txt", "w").write("written anyway\n")
print("not json")
sys.exit(json.loads(sys.argv[1]).get("exit", 0))
