"""One contract, every registered method (river's habit): valid probabilities, bounds in
order, deterministic, inputs untouched, 2- and 3-class data, tiny and pure leaves."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import make_dataset

from treecert.methods import METHODS, make_method


def _datasets():
    rng = np.random.default_rng(3)
    n = 30
    two = make_dataset(
        {"x": rng.normal(size=n).round(2).tolist(),
         "c": [["p", "q", "r"][i % 3] for i in range(n)]},
        [int(v > 0) for v in rng.normal(size=n)],
    )
    three = make_dataset(
        {"x": rng.normal(size=n).round(2).tolist(), "z": rng.integers(0, 4, n).tolist()},
        [i % 3 for i in range(n)], classes=("a", "b", "c"),
    )
    tiny_pure = make_dataset({"x": [1.0, 2.0, 3.0, 4.0]}, [0, 0, 1, 1])
    return {"two": two, "three": three, "tiny_pure": tiny_pure}


DATA = _datasets()


@pytest.mark.parametrize("name", sorted(METHODS))
@pytest.mark.parametrize("which", sorted(DATA))
def test_method_contract(name, which):
    data = DATA[which]
    X_before, y_before = data.X.copy(), data.y.copy()
    n = data.n_samples
    train, test = data.subset(np.arange(n) % 4 != 0), data.subset(np.arange(n) % 4 == 0)
    method = make_method(name).fit(train)
    pred = method.predict(test)
    K = data.schema.n_classes
    assert pred.proba.shape == (test.n_samples, K)
    assert np.all(pred.proba >= 0) and np.all(pred.proba <= 1)
    np.testing.assert_allclose(pred.proba.sum(axis=1), 1.0, atol=1e-9)
    if pred.lower is not None:
        assert np.all(pred.lower <= pred.upper + 1e-12)
        assert np.all((pred.lower >= 0) & (pred.upper <= 1))
        if method.bounds_contain_proba:
            assert np.all(pred.lower <= pred.proba + 1e-12)
            assert np.all(pred.proba <= pred.upper + 1e-12)
    cert = pred.certainty_or_max()
    assert cert.shape == (test.n_samples,) and np.all(np.isfinite(cert))
    for col in pred.columns.values():
        assert len(col) == test.n_samples
    again = make_method(name).fit(train).predict(test)
    np.testing.assert_array_equal(pred.proba, again.proba)
    np.testing.assert_array_equal(data.X, X_before)
    np.testing.assert_array_equal(data.y, y_before)


@pytest.mark.parametrize("name", sorted(METHODS))
def test_every_method_adopts_a_saved_model(name, tmp_path):
    from treecert import api
    from treecert.tree.model import read_model

    data = DATA["three"]
    model = api.train(data)
    path = tmp_path / "m.json"
    path.write_text(api.model_json(model))
    loaded = read_model(path)
    direct = api.predict(model, data, method=name)
    from_file = api.predict(loaded, data, method=name)
    assert direct.equals(from_file)
