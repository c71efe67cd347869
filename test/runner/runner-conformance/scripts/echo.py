# The JSON contract: reports what it was given and the environment it got.
import json, os, sys

arg = sys.argv[1] if len(sys.argv) > 1 else None
stdin = sys.stdin.read()
args = json.loads(arg) if arg is not None else None
env = os.environ
print(json.dumps({
    "args": args,
    "stdin_equal": stdin == arg,
    "argc": len(sys.argv),
    "env_keys": sorted(env),
    "env": {k: env.get(k) for k in ("PATH", "LANG", "SKILL_TIMEOUT")},
    "cwd_is_workspace": os.getcwd() == env.get("WORKSPACE") == env.get("PWD"),
    "home_in_workspace": env.get("HOME") == env.get("WORKSPACE", "") + "/.home",
    "skill_dir_has_skill": os.path.isfile(os.path.join(env.get("SKILL_DIR", "/nonexistent"), "SKILL.md")),
    "skill_dir": env.get("SKILL_DIR"),
    "workspace": env.get("WORKSPACE"),
}))
sys.exit(args.get("exit", 0) if isinstance(args, dict) else 0)
