"""Known file I/O from Python: unbuffered writes and reads, then a text file."""
import os
import sys

directory = sys.argv[1]
path = os.path.join(directory, "py.dat")
with open(path, "wb", buffering=0) as f:
    for _ in range(50):
        f.write(b"x" * 1000)          # 50 write() calls, 50000 bytes
with open(path, "rb", buffering=0) as f:
    while f.read(4096):               # 13 reads with data + 1 at end of file
        pass
