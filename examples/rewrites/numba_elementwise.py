"""Python loop -> Numba CUDA kernel: one element per iteration."""
import math

import numpy as np


def process(data, out):
    for i in range(len(data)):
        out[i] = math.sin(data[i]) * math.exp(-data[i])


def inputs():
    data = np.random.default_rng(1).random(2_000_000)
    return data, np.zeros_like(data)


def compute(data, out):
    process(data, out)
    return out


def main():
    return compute(*inputs())


if __name__ == "__main__":
    print(main()[:5])
