# write.py EXIT: creates, changes and deletes files in its working
# directory, writes into HOME, makes a link, and exits with EXIT.
import os, sys
open("out.txt", "w").write("made by the script\n")
os.makedirs("sub", exist_ok=True)
open("sub/result.json", "w").write('{"ok": true}\n')
open("in.txt", "a").write("and more\n")
os.remove("gone.txt")
os.makedirs(os.environ["HOME"], exist_ok=True)
open(os.path.join(os.environ["HOME"], "cache"), "w").write("private\n")
os.symlink("out.txt", "link.txt")
print(" ".join(sorted(os.listdir("."))))
sys.exit(int(sys.argv[1]))
