"""pandas, scikit-learn and NetworkX -> cudf.pandas, cuml.accel, nx-cugraph
(RAPIDS: checked for syntax and API names only)."""
import networkx as nx
import numpy as np
import pandas as pd
from sklearn.cluster import KMeans


def main():
    rng = np.random.default_rng(6)
    df = pd.DataFrame({"region": rng.integers(0, 50, 2_000_000), "amount": rng.random(2_000_000)})
    totals = df.groupby("region")["amount"].sum()
    model = KMeans(n_clusters=8, n_init=1).fit(rng.random((200_000, 8)))
    graph = nx.gnm_random_graph(20_000, 100_000, seed=6)
    ranks = nx.pagerank(graph)
    return totals, model.inertia_, ranks
