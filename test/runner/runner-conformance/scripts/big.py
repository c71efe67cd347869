open("big.bin", "wb").truncate(int(__import__("sys").argv[1]))
