"""NumPy -> CuPy: sorting and a matrix product on a large array, results back once."""
import numpy as np


def rank_and_project(values, basis):
    ordered = np.sort(values)
    projected = np.matmul(basis, basis.T)
    norms = np.sqrt(np.sum(projected * projected, axis=1))
    return ordered, norms


def inputs():
    rng = np.random.default_rng(3)
    return rng.standard_normal(20_000_000), rng.standard_normal((4096, 4096)).astype(np.float32)


def compute(values, basis):
    return rank_and_project(values, basis)


def main():
    return compute(*inputs())


if __name__ == "__main__":
    print([r[:3] for r in main()])
