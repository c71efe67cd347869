package skillrun

// runnerTestSkill is the test library's skill "runner-test": the scripts
// TestRunContract runs, uploaded under a user's skills/ by the tests.
var runnerTestSkill = map[string]string{
	"SKILL.md": "---\nname: runner-test\ndescription: Scripts that prove the skill runner's contract.\nmetadata:\n  timeout: \"30\"\n---\n# Runner test\n",
	// echo.py answers with what it was given.
	"scripts/echo.py": `import json, os, sys
data = sys.stdin.read()
print(json.dumps({"argv1": sys.argv[1] if len(sys.argv) > 1 else None, "stdin": data,
    "env": {k: os.environ[k] for k in sorted(os.environ)}, "cwd": os.getcwd()}))
sys.exit(int(json.loads(data).get("exit", 0)) if data else 0)
`,
	"scripts/bad.py": "print('not json')\n",
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
}
