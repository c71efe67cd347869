# Tries what a confined script must not do.
import json, os, socket, sys
a = json.loads(sys.argv[1])
out = {}
try:
    socket.create_connection(("127.0.0.1", int(a["port"])), timeout=5).close()
    out["connected"] = True
except OSError:
    out["connected"] = False
try:
    open("/etc/hostname").read()
    out["read_hostname"] = True
except OSError:
    out["read_hostname"] = False
try:
    open(os.path.join(os.environ["SKILL_DIR"], "scripts", "probe.py"), "a").write("#")
    out["wrote_skill"] = True
except OSError:
    out["wrote_skill"] = False
try:
    open(os.path.join(os.environ["SKILL_DIR"], "planted.txt"), "w").write("x")
    out["created_in_skill"] = True
except OSError:
    out["created_in_skill"] = False
print(json.dumps(out))
