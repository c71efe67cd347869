# Lists its working directory, then adds a file there.
import json, os
files = sorted(os.listdir("."))
open("new.txt", "w").write("new\n")
print(json.dumps({"files": files}))
