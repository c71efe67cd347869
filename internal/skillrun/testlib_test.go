package skillrun

// runnerTestSkill is the test library's skill "runner-test": one script
// per case of the contract, uploaded under a user's skills/ by the tests.
var runnerTestSkill = map[string]string{
	"SKILL.md": "---\nname: runner-test\ndescription: Scripts that prove the skill runner's contract.\nmetadata:\n  timeout: \"30\"\n---\n# Runner test\n",
	// echo.py answers with what it was given.
	"scripts/echo.py": `import json, os, sys
data = sys.stdin.read()
print(json.dumps({"argv1": sys.argv[1] if len(sys.argv) > 1 else None, "stdin": data,
    "env": {k: os.environ[k] for k in sorted(os.environ)}, "cwd": os.getcwd()}))
sys.exit(int(json.loads(data).get("exit", 0)) if data else 0)
`,
	"scripts/plain.sh": "#!/bin/sh\necho \"args: $*\"\necho \"to stderr\" >&2\nexit 3\n",
	"scripts/bad.py":   "print('not json')\n",
	"scripts/array.py": "print('[1, 2]')\n",
	// slow.sh starts a child that would write a file later, then waits;
	// its arguments are the two sleeps, numbers unique to the test run, so
	// the test can look for its processes.
	"scripts/slow.sh": "#!/bin/sh\n(sleep \"$1\"; echo late > late.txt) &\necho started\nsleep \"$2\"\n",
	"scripts/loud.py": "import sys\nsys.stdout.write('x' * (4 << 20))\n",
	// probe.py tries what a confined script must not do.
	"scripts/probe.py": `import json, os, socket, sys
args = json.loads(sys.argv[1])
out = {}
try:
    socket.create_connection(("127.0.0.1", args["port"]), timeout=5).close()
    out["connected"] = True
except OSError as e:
    out["connected"] = False
try:
    open(args["host_file"]).read()
    out["read_host"] = True
except OSError:
    out["read_host"] = False
try:
    open(os.path.join(os.environ["SKILL_DIR"], "scripts", "probe.py"), "a").write("#")
    out["wrote_skill"] = True
except OSError:
    out["wrote_skill"] = False
try:
    open(os.path.join(os.environ["SKILL_DIR"], "new.txt"), "w").write("x")
    out["created_in_skill"] = True
except OSError:
    out["created_in_skill"] = False
print(json.dumps(out))
`,
	// write.py makes a file, changes one and leaves the rest alone.
	"scripts/write.py": `import json, os
with open("out/result.txt", "w") if os.path.isdir("out") else open("result.txt", "w") as f:
    f.write("written by the script\n")
with open("in.txt", "a") as f:
    f.write("and changed\n")
os.makedirs(os.path.join(os.environ["HOME"], "cache"), exist_ok=True)
open(os.path.join(os.environ["HOME"], "cache", "x"), "w").write("not written back")
print(json.dumps({"files": sorted(os.listdir("."))}))
`,
	"tool":        "#!/usr/bin/env python3\nimport json\nprint(json.dumps({'shebang': True}))\n",
	"notes.txt":   "no interpreter for this\n",
	"root-run.py": "import json\nprint(json.dumps({'where': 'root'}))\n",
}
