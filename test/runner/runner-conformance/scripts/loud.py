# loud.py STREAM BYTES: writes loud.txt, then BYTES bytes to stdout or stderr.
import sys
open("loud.txt", "w").write("never written back\n")
getattr(sys, sys.argv[1]).write("x" * int(sys.argv[2]))
