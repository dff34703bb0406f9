"""dpsumm.pfds.labelling: majority-vote labels and regression labels in the voted bucket."""

from __future__ import annotations

import numpy as np

from dpsumm.pfds import (
    REGRESSION_BUCKETS,
    Domain,
    make_tree,
    opt_private_gen,
    pfds,
    share_data,
)


def numeric_data(n=600, d=4, seed=0):
    g = np.random.default_rng(seed)
    X = g.uniform(-1.0, 2.0, size=(n, d))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] > 0.75, "b", "a")
    return X, y, Domain.box(d, -1.0, 2.0, classes=["a", "b"])


def split(n, parts):
    return np.array_split(np.arange(n), parts)


def test_majority_vote_labels():
    X, y, dom = numeric_data(n=900)
    idx = split(900, 5)
    r = pfds([X[i] for i in idx], [y[i] for i in idx], dom, 2.0, h_max=4, levels=3, random_state=40)
    for (Xs, ys), (Xo, yo), tr in zip(r.datasets, r.own_label_datasets, r.trees):
        assert Xs is Xo
        preds = np.array([t.predict(Xs) for t in r.trees])  # (trees, rows)
        votes_for_label = (preds == ys[None, :]).sum(axis=0)
        most = np.max([(preds == c).sum(axis=0) for c in dom.classes], axis=0)
        assert np.array_equal(votes_for_label, most)
        assert np.array_equal(yo, tr.predict(Xs))  # PFDS(s): own tree only
    Xt, yt = r.training_set()
    assert Xt.shape[0] == yt.shape[0] == sum(len(d[1]) for d in r.datasets)


def test_regression_labels_in_voted_bucket():
    g = np.random.default_rng(8)
    X = g.uniform(0, 1, (800, 2))
    yv = 10 * X[:, 0] + g.uniform(-1, 1, 800)
    dom = Domain.box(2, 0.0, 1.0, label_range=(-1.0, 11.0))
    tr = make_tree(X, yv, dom, 1.0, h_max=4, random_state=1)
    sd = opt_private_gen(tr, X, levels=3, epsilon=1.0, random_state=2)
    ys = share_data(sd.X, [tr], random_state=3)
    assert np.all((ys >= -1.0) & (ys <= 11.0))
    assert np.array_equal(dom.bucket(ys), tr.leaf_label[tr.apply(sd.X)])
    assert dom.n_classes == REGRESSION_BUCKETS
    assert np.unique(ys).size == ys.size  # drawn uniformly in the bucket, not the midpoint
