"""A run recorded as units: open its record, pick a shard's units, finish it from the
records (``--resume``, ``--shard``, ``treecert merge``)."""

from __future__ import annotations

import numpy as np

from treecert.data.schema import Schema
from treecert.errors import ConfigError
from treecert.evaluation.experiment import finalize, run_metadata, unit_keys
from treecert.evaluation.units import FORMAT, UnitStore, fingerprint
from treecert.parallel import shard_bounds
from treecert.tree.model import data_sha256


def open_run(directory, dataset, methods, protocol, params, name, loss, bins,
             interval_auc, timing, *, fresh):
    """The unit record of one dataset's run: (store, every unit key in order)."""

    keys = unit_keys(dataset, methods, protocol, params)
    finish = {"loss": None if loss is None else loss.tolist(), "bins": bins,
              "interval_auc": interval_auc, "timing": timing}
    test = protocol.test
    description = {
        "data": data_sha256(dataset.X, dataset.y, dataset.weights),
        "protocol": [protocol.kind, protocol.n_folds, protocol.repeats, protocol.seed,
                     protocol.fold_ids,
                     None if test is None else data_sha256(test.X, test.y, test.weights)],
        "params": {k: v for k, v in params.items() if k != "loss"},
        "methods": list(methods), "finish": finish, "name": name,
    }
    manifest = {"format": FORMAT, "version": 1, "dataset": name, "methods": list(methods),
                "schema": dataset.schema.to_json(), "finish": finish,
                "units": [list(k) for k in keys], "fingerprint": fingerprint(description),
                # metrics.json's run record, so that merge writes what an unsharded run does
                "run": run_metadata(dataset, methods, protocol, params, name, loss=loss,
                                    bins=bins, interval_auc=interval_auc, timing=timing)}
    store = UnitStore(directory)
    store.open(manifest, fresh=fresh)
    return store, keys


def shard_keys(keys, part):
    """The contiguous part (index, count) of ``keys`` a shard runs; None for all."""
    if part is None:
        return None
    lo, hi = shard_bounds(len(keys), *part)
    return keys[lo:hi]


def finish_run(stores):
    """Check the stores hold one run's units between them; finalize that run."""

    manifests = [s.manifest() for s in stores]
    present = [(s, m) for s, m in zip(stores, manifests, strict=True) if m is not None]
    if not present:
        raise ConfigError(f"{stores[0].directory}: no recorded run here.")
    manifest = present[0][1]
    for s, m in present:
        if m["fingerprint"] != manifest["fingerprint"]:
            raise ConfigError(f"{s.directory} and {present[0][0].directory} hold results of "
                              "different runs; not shards of one run.")
    results = []
    for key in (tuple(k) for k in manifest["units"]):
        where = next((s for s, _ in present if s.has(key)), None)
        if where is None:
            m, r, f = key
            raise ConfigError(
                f"{manifest['dataset']}: unit method {manifest['methods'][m]!r} repeat {r} "
                f"fold {f} is in none of the directories.",
                "Is a shard unfinished or failed? Run it again (with --resume), then merge.",
            )
        results += where.load(key)
    finish = manifest["finish"]
    loss = None if finish["loss"] is None else np.array(finish["loss"], dtype=float)
    result = finalize(results, manifest["methods"], Schema.from_json(manifest["schema"]),
                      manifest["dataset"], loss=loss, bins=finish["bins"],
                      interval_auc=finish["interval_auc"], timing=finish["timing"],
                      run=manifest.get("run"))
    return result, finish["bins"]
