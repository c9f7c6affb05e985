"""Faiss -> cuVS, scikit-image -> cuCIM, scipy eigsh -> pylibraft
(checked for syntax and API names only: those libraries are not on the GPU machine)."""
import faiss
import numpy as np
from scipy.sparse import random as sparse_random
from scipy.sparse.linalg import eigsh
from skimage.filters import gaussian, sobel


def nearest(embeddings, queries):
    index = faiss.IndexFlatL2(embeddings.shape[1])
    index.add(embeddings)
    distances, neighbors = index.search(queries, 10)
    return distances, neighbors


def edges(image):
    smooth = gaussian(image, sigma=3)
    return sobel(smooth)


def spectrum(n):
    A = sparse_random(n, n, density=0.01, format="csr", dtype=np.float32)
    A = A + A.T
    values, vectors = eigsh(A, k=10, which="LM")
    return values


def main():
    rng = np.random.default_rng(8)
    embeddings = rng.random((200_000, 64), dtype=np.float32)
    image = rng.random((2048, 2048))
    return nearest(embeddings, embeddings[:1000]), edges(image), spectrum(5000)
