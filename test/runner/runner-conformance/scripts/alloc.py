import sys
block = bytearray(int(sys.argv[1]))
print("allocated")
