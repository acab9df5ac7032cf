"""Writes 200 arrays of 16384 doubles (128 KiB each) into 20 files, then reads them back."""
import array
import os
import sys

directory = sys.argv[1]
for file_index in range(20):
    with open(os.path.join(directory, f"arrays-{file_index:02d}.bin"), "wb") as f:
        for array_index in range(10):
            f.write(array.array("d", [float(array_index)] * 16384).tobytes())
for file_index in range(20):
    with open(os.path.join(directory, f"arrays-{file_index:02d}.bin"), "rb") as f:
        while f.read(1 << 16):
            pass
