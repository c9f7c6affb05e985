"""Nested Python loops -> a 2-D Numba CUDA kernel: a four-neighbour stencil."""
import numpy as np


def blur(image, out, height, width):
    for y in range(1, height - 1):
        for x in range(1, width - 1):
            out[y, x] = (image[y - 1, x] + image[y + 1, x] + image[y, x - 1] + image[y, x + 1]) * 0.25


def inputs():
    image = np.random.default_rng(2).random((1024, 1024))
    return image, np.zeros_like(image), 1024, 1024


def compute(image, out, height, width):
    blur(image, out, height, width)
    return out


def main():
    return compute(*inputs())


if __name__ == "__main__":
    print(main()[1, :5])
