# Advice that depends on the GPU: float64 rates, RAPIDS support, install lines.
import cupy as cp
import numpy as np
import pandas as pd
from sklearn.cluster import KMeans

weights = cp.random.rand(4096, 4096)
product = weights @ weights
spectrum = cp.fft.fft(weights)
halves = cp.random.rand(4096, 4096, dtype=cp.float32)
fast = halves @ halves

signal = np.random.rand(8_000_000)
ranked = np.sort(signal)
table = pd.read_parquet("events.parquet")
model = KMeans(n_clusters=16)
