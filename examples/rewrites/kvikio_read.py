"""np.fromfile -> KvikIO: read a raw binary file straight into GPU memory."""
import os
import tempfile

import numpy as np

PATH = os.path.join(tempfile.gettempdir(), "gpulens-kvikio-example.bin")


def load(path):
    raw = np.fromfile(path, dtype=np.float32)
    return raw


def inputs():
    if not os.path.exists(PATH):
        np.random.default_rng(4).random(64_000_000, dtype=np.float32).tofile(PATH)
    return (PATH,)


def compute(path):
    return load(path)[::1000]


def main():
    return compute(*inputs())


if __name__ == "__main__":
    print(main()[:5])
