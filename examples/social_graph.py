"""Influencer and community analysis of a social follower graph.

Loads an undirected "follows" graph from an edge-list file passed to main(),
or grows a 200,000-user preferential-attachment network by default, then ranks
users by PageRank and sampled betweenness, detects communities with Louvain,
and summarises connected components.
"""

from collections import Counter

import networkx as nx


def load_graph(edge_list: str | None) -> nx.Graph:
    """Read `user_a user_b` pairs, or synthesise a scale-free network."""
    if edge_list is not None:
        return nx.read_edgelist(edge_list, nodetype=int)
    # Each new user follows 5 existing ones, preferring popular accounts.
    return nx.barabasi_albert_graph(200_000, 5, seed=11)


def top_k(scores: dict, k: int = 10) -> list[tuple[int, float]]:
    ranked = sorted(scores.items(), key=lambda item: item[1], reverse=True)
    return [(node, round(score, 6)) for node, score in ranked[:k]]


def main(edge_list: str | None = None) -> dict:
    G = load_graph(edge_list)

    # Global influence: stationary distribution of a random surfer.
    rank = nx.pagerank(G, alpha=0.85, tol=1e-8)

    # Brokers between groups; k=256 sampled sources instead of all n.
    brokers = nx.betweenness_centrality(G, k=256, seed=11)

    communities = nx.community.louvain_communities(G, resolution=1.0, seed=11)
    sizes = sorted((len(c) for c in communities), reverse=True)
    modularity = nx.community.modularity(G, communities)

    components = list(nx.connected_components(G))
    giant = max(components, key=len)

    # Which community do the ten most influential users belong to?
    membership = {node: idx for idx, members in enumerate(communities) for node in members}
    influencer_homes = Counter(membership[node] for node, _ in top_k(rank))

    return {
        "nodes": G.number_of_nodes(),
        "edges": G.number_of_edges(),
        "top_pagerank": top_k(rank, 5),
        "top_betweenness": top_k(brokers, 5),
        "communities": len(communities),
        "largest_communities": sizes[:5],
        "modularity": round(modularity, 4),
        "components": len(components),
        "giant_component_share": round(len(giant) / G.number_of_nodes(), 4),
        "influencer_communities": dict(influencer_homes.most_common(3)),
    }


if __name__ == "__main__":
    print(main())
