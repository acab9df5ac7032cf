"""A multiprocessing pool: each task writes its own file from a worker process."""
import multiprocessing
import os
import sys


def task(index):
    fd = os.open(os.path.join(sys.argv[1], f"mp-{index}.dat"), os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
    for _ in range(10):
        os.write(fd, b"p" * 1000)
    os.close(fd)
    return index


if __name__ == "__main__":
    with multiprocessing.Pool(2) as pool:
        assert sorted(pool.map(task, range(4))) == [0, 1, 2, 3]
