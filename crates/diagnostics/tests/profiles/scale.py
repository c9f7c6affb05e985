# Advice that depends on the GPU's size, count and tensor cores.
import numpy as np
import pandas as pd


def too_big_for_small_cards():
    x = np.random.rand(4_000_000_000)  # 32 GB of float64
    return np.sort(x)


def matrix_work():
    b = np.random.rand(4096, 4096)
    return np.matmul(b, b)


def frames(path):
    df = pd.read_parquet(path)
    return df.groupby("k").sum()
