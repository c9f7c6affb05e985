"""Customer churn model for a subscription business.

Builds a synthetic table of 500,000 customers with 40 behavioural features,
segments them with k-means, trains a random-forest churn classifier, and fits
a non-negative ridge regression that attributes monthly spend to features.
"""

import numpy as np
from sklearn.cluster import KMeans as KM
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import Ridge
from sklearn.metrics import accuracy_score, r2_score, roc_auc_score
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

N_SEGMENTS = 8


def load_customers() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Features, churn labels, and a monthly-spend target for each customer."""
    X, churned = make_classification(
        n_samples=500_000,
        n_features=40,
        n_informative=12,
        n_redundant=8,
        weights=[0.8, 0.2],  # roughly one customer in five churns
        class_sep=0.8,
        random_state=0,
    )
    rng = np.random.default_rng(seed=0)
    # Spend depends non-negatively on a handful of usage features.
    drivers = np.zeros(X.shape[1])
    drivers[:6] = [12.0, 8.0, 5.0, 3.0, 2.0, 1.0]
    spend = 40.0 + X @ drivers + rng.normal(0.0, 4.0, size=X.shape[0])
    return X, churned, spend


def main() -> dict:
    X, churned, spend = load_customers()
    X_train, X_test, y_train, y_test, s_train, s_test = train_test_split(
        X, churned, spend, test_size=0.2, stratify=churned, random_state=0
    )

    scaler = StandardScaler()
    X_train = scaler.fit_transform(X_train)
    X_test = scaler.transform(X_test)

    # Behavioural segments; the segment id becomes one more feature.
    segmenter = KM(n_clusters=N_SEGMENTS, n_init=4, random_state=0)
    seg_train = segmenter.fit_predict(X_train)
    seg_test = segmenter.predict(X_test)
    X_train = np.column_stack([X_train, seg_train])
    X_test = np.column_stack([X_test, seg_test])

    forest = RandomForestClassifier(
        n_estimators=200,
        max_depth=18,
        min_samples_leaf=5,
        n_jobs=-1,
        random_state=0,
    )
    forest.fit(X_train, y_train)
    churn_prob = forest.predict_proba(X_test)[:, 1]

    # positive=True forces non-negative coefficients ("each feature can only
    # add to spend"); scikit-learn solves it with L-BFGS-B.
    spend_model = Ridge(alpha=1.0, positive=True)
    spend_model.fit(X_train[:, :-1], s_train)
    spend_pred = spend_model.predict(X_test[:, :-1])

    return {
        "churn_accuracy": round(float(accuracy_score(y_test, churn_prob > 0.5)), 4),
        "churn_auc": round(float(roc_auc_score(y_test, churn_prob)), 4),
        "spend_r2": round(float(r2_score(s_test, spend_pred)), 4),
        "segment_sizes": np.bincount(seg_train, minlength=N_SEGMENTS).tolist(),
    }


if __name__ == "__main__":
    print(main())
