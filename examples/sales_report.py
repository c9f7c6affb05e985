"""Quarterly sales report for a retail chain.

Loads five million order lines from a CSV file (generating a synthetic one on
first run), joins them with the product catalogue, and produces per-store,
per-category revenue and margin figures plus a count of suspicious orders.
"""

import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

N_ORDERS = 5_000_000
N_STORES = 1_000
N_PRODUCTS = 20_000
CATEGORIES = np.array(["grocery", "electronics", "garden", "toys", "apparel"])
SALES_CSV = Path(tempfile.gettempdir()) / "gpulens_example_sales.csv"


def generate_sales(path: Path) -> None:
    """Write a synthetic order-line file with N_ORDERS rows."""
    rng = np.random.default_rng(seed=42)
    days = rng.integers(0, 90, size=N_ORDERS)
    sales = pd.DataFrame(
        {
            "order_id": np.arange(N_ORDERS, dtype=np.int64),
            "store_id": rng.integers(0, N_STORES, size=N_ORDERS),
            "product_id": rng.integers(0, N_PRODUCTS, size=N_ORDERS),
            "quantity": rng.integers(1, 40, size=N_ORDERS),
            "unit_price": np.round(rng.gamma(2.0, 12.0, size=N_ORDERS), 2),
            "discount": np.round(rng.beta(1.2, 8.0, size=N_ORDERS), 3),
            "order_date": pd.Timestamp("2024-01-01") + pd.to_timedelta(days, unit="D"),
        }
    )
    sales.to_csv(path, index=False)


def product_catalogue() -> pd.DataFrame:
    """Lookup table: product id -> category and unit cost."""
    rng = np.random.default_rng(seed=1)
    return pd.DataFrame(
        {
            "product_id": np.arange(N_PRODUCTS),
            "category": rng.choice(CATEGORIES, size=N_PRODUCTS),
            "unit_cost": np.round(rng.uniform(1.0, 30.0, size=N_PRODUCTS), 2),
        }
    )


def shipping_cost(row: pd.Series) -> float:
    """Tiered shipping: free over 100, flat 4.99 for small orders, else 2%."""
    gross = row["quantity"] * row["unit_price"]
    if gross > 100.0:
        return 0.0
    if row["quantity"] < 3:
        return 4.99
    return 0.02 * gross


def main() -> dict:
    if not SALES_CSV.exists():
        generate_sales(SALES_CSV)
    sales = pd.read_csv(SALES_CSV, parse_dates=["order_date"])

    orders = sales.merge(product_catalogue(), on="product_id", how="left")
    orders["revenue"] = orders["quantity"] * orders["unit_price"] * (1 - orders["discount"])
    orders["cost"] = orders["quantity"] * orders["unit_cost"]
    # Row-wise Python function over every order line.
    orders["shipping"] = orders.apply(shipping_cost, axis=1)

    # Flag deep-discount bulk orders; written as a row loop, as it often is.
    suspicious = 0
    suspicious_revenue = 0.0
    for _, row in orders.iterrows():
        if row["discount"] > 0.35 and row["quantity"] >= 30:
            suspicious += 1
            suspicious_revenue += row["revenue"]

    report = (
        orders.groupby(["store_id", "category"])
        .agg(
            revenue=("revenue", "sum"),
            cost=("cost", "sum"),
            shipping=("shipping", "sum"),
            orders=("order_id", "count"),
            avg_discount=("discount", "mean"),
        )
        .reset_index()
    )
    report["margin"] = (report["revenue"] - report["cost"] - report["shipping"]) / report["revenue"]
    report = report.sort_values(["margin", "revenue"], ascending=[False, False])

    top = report.head(5)
    return {
        "best_margins": [
            (int(store), category, round(float(margin), 3))
            for store, category, margin in zip(top["store_id"], top["category"], top["margin"])
        ],
        "total_revenue": round(float(orders["revenue"].sum()), 2),
        "suspicious_orders": suspicious,
        "suspicious_revenue": round(suspicious_revenue, 2),
    }


if __name__ == "__main__":
    print(main())
