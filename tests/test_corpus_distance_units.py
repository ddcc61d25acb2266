"""The corpus_distance chapter's paper-scale units: each unit's record is what the reproduction page computed in place
before it read units (the same samples, embeddings, KSC seeds and metrics, written out here again), its record is
small JSON, bad arguments are named, and the paper-scale run is declared whole tables first with unique names."""
import json
from functools import partial

import numpy as np
import pandas as pd
import pytest

from embeval_nb import corpus_distance as cd
from embeval_nb.corpus_distance import (SETTINGS, average_hausdorff, classifier_distance, disjoint_samples, embed_pairs,
                                        energy_distance, fid, irpr, ksc_distances, mauve_distance, prdc, scale_units)
from embeval_nb.runs import chapter_units, compute_unit, unit_versions

ENCODER, KS = "all-MiniLM-L6-v2", (1, 2, 3, 5, 10)


def _unit(table, name_end):
    "The smoke-scale unit of `table` whose name ends with `name_end`."
    return next(u for u in scale_units("smoke") if u.table == table and u.name.endswith(name_end))


def _small_record(unit, limit=100_000):
    rec = compute_unit(unit)
    assert len(json.dumps(rec)) < limit and rec["inputs"] == unit_versions(unit)[1]
    return rec["result"]


def _as_frame(result, r=0) -> pd.DataFrame:
    "A unit's result as rows (metric, i, j, distance) sorted, for comparison with `ksc_distances`."
    pairs = [(i, j) for i in range(16) for j in range(i + 1, 16)]
    rows = [(m, i, j, v) for m, values in zip(result["metrics"], result["distances"]) for (i, j), v in zip(pairs, values)]
    return pd.DataFrame(rows, columns=["metric", "i", "j", "distance"]).sort_values(["metric", "i", "j"]).reset_index(drop=True)


def _direct(A, B, metrics, seed) -> pd.DataFrame:
    d = ksc_distances(A, B, metrics, K=15, n=50, R=1, seed=seed)
    return d[["metric", "i", "j", "distance"]].sort_values(["metric", "i", "j"]).reset_index(drop=True)


def components(X, Y):
    "The four components at every k, as the page's family of nearest-neighbour metrics gave them."
    out = {}
    for k in KS:
        p = prdc(X, Y, k, metric="cosine")
        out |= {f"{c}_{k}": getattr(p, c) for c in ("precision", "recall", "density", "coverage")}
    return out


def test_a_pool_unit_is_the_page_computation_it_replaces():
    "A KSC set drawn from the pairs of both smoke samples together: the page's seed [0, 400, r], the components only."
    u = _unit("ksc/pool", "/r1")
    got = _small_record(u, 40_000)
    parts = [embed_pairs(p, ENCODER) for p in disjoint_samples("qqp", 50, 0, 2)]
    A, B = np.vstack([a for a, _ in parts]), np.vstack([b for _, b in parts])
    ref = ksc_distances(A, B, {"NN": components}, K=15, n=50, R=2, seed=[0, 400])
    ref = ref[ref.repetition == 1][["metric", "i", "j", "distance"]].sort_values(["metric", "i", "j"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(_as_frame(got), ref)


def test_a_different_domain_unit_is_the_page_computation_it_replaces():
    "Quora sample 1 against MRPC sample 1, every distance with the text's definitions, seeded [0, 300, 1]."
    u = _unit("ksc/other", "mrpc/01/r0")
    got = _small_record(u)
    A = embed_pairs(disjoint_samples("qqp", 50, 0, 2)[1], ENCODER)[0]
    B = embed_pairs(disjoint_samples("mrpc", 50, 0, 2)[1], ENCODER)[1]
    def family(X, Y):
        out = {}
        for k in KS:
            p = prdc(X, Y, k, metric="cosine")
            out |= {f"PR_{k}": p.pr_distance, f"DC_{k}": p.dc_distance,
                    **{f"{c}_{k}": getattr(p, c) for c in ("precision", "recall", "density", "coverage")}}
        return out
    metrics = {"FID": fid, "MAUVE": mauve_distance, "CLASSIFIER": classifier_distance, "IRPR": irpr, "NN": family,
               "AHD": average_hausdorff, "ENERGY": energy_distance}
    pd.testing.assert_frame_equal(_as_frame(got), _direct(A, B, metrics, [0, 300, 1]))
    assert got["metrics"][:4] == ["FID", "MAUVE", "CLASSIFIER", "IRPR"] and len(got["metrics"]) == 4 + 30 + 2


def test_a_synthetic_unit_and_the_mauve_seeds_are_the_page_computations_they_replace():
    "One step of the sweep over delta at smoke scale, on the second base sample: its seeds and metrics."
    u = _unit("synthetic", "b01/delta/02")
    got = _small_record(u, 10_000)
    m, reps, delta = SETTINGS["smoke"]["m"], SETTINGS["smoke"]["reps"], SETTINGS["smoke"]["deltas"][2]
    sample = cd.paired_blobs(m, 2, seed=[0, 1, 1])
    metrics = {"FID": fid, "MAUVE": mauve_distance, "CLASSIFIER": classifier_distance, "IRPR": partial(irpr, metric="euclidean"),
               **{f"PR_{k}": partial(cd.pr_distance, k=k, metric="euclidean") for k in (2, 5, 15)},
               **{f"DC_{k}": partial(cd.dc_distance, k=k, metric="euclidean") for k in (2, 5, 15)},
               "ENERGY": partial(energy_distance, metric="euclidean"), "AHD": partial(average_hausdorff, metric="euclidean")}
    ref = {name: [] for name in metrics}
    for r in range(reps):
        Bp = cd.perturb_group(sample.B, sample.centres, 0.1, delta, seed=[0, 25, 1, 2, r])
        for name, f in metrics.items(): ref[name].append(f(sample.A, Bp))
    assert got == {"metrics": list(ref), "distances": list(ref.values())}
    seeds = _small_record(_unit("mauve-seeds", "/s3"), 10_000)["distances"]
    A, B = embed_pairs(disjoint_samples("qqp", 50, 0, 1)[0], ENCODER)
    ksc = cd.known_similarity_corpora(A, B, 15, 50, seed=[0, 100, 0])
    C = [ksc.corpus(i, A, B) for i in range(16)]
    assert seeds == [[mauve_distance(C[i], C[j], seed=s) for s in range(3)] for i, j in ksc.pairs()[::7]]


def test_the_code_metrics_and_the_frame():
    "'text+code' adds the authors' code's IRPR, PR, DC, AHD and root energy on the angle; ksc_frame restores ksc_distances' rows."
    M = cd.ksc_metrics("text+code")
    assert [m for m in M if m.endswith("(code)")] == ["IRPR (code)", "NN (code)", "AHD (code)", "ENERGY (code)"]
    rng = np.random.default_rng(0)
    A, B = rng.normal(size=(30, 5)), rng.normal(size=(30, 5)) + 0.5
    X, Y = A[:12], B[:12]
    assert M["ENERGY (code)"](X, Y) == energy_distance(X, Y, metric="angular", root=True)
    assert list(M["NN (code)"](X, Y)) == [f"{d}_{k}" for k in KS for d in ("PR", "DC")]
    small = {"AHD": partial(average_hausdorff, metric="angular"), "NN": M["NN (code)"]}
    d = ksc_distances(A, B, small, K=4, n=12, R=3, seed=[0, 7])
    pd.testing.assert_frame_equal(cd.ksc_frame([(r, cd.ksc_set(A, B, small, 4, 12, [0, 7], r)) for r in range(3)], 4), d)


def test_units_name_their_bad_arguments():
    with pytest.raises(ValueError, match="metrics must be one of"):
        cd.ksc_unit("qqp", ENCODER, "paraphrase", 0, [100], 0, "all", 15, 50)
    with pytest.raises(ValueError, match="source must be one of"): cd.ksc_sources("qqp", ENCODER, "mixed", 0, 50)
    with pytest.raises(ValueError, match="needs the other corpus"): cd.ksc_sources("qqp", ENCODER, "other", 0, 50)
    with pytest.raises(ValueError, match="there is no sample 999"): cd.ksc_sources("qqp", ENCODER, "paraphrase", 999, 50)
    with pytest.raises(ValueError, match="name must be one of"): cd.paraphrase_pairs("quora")
    with pytest.raises(ValueError, match="scale must be one of"): scale_units("huge")
    with pytest.raises(ValueError, match="corpus must be one of"): scale_units("smoke", corpus="quora")
    with pytest.raises(ValueError, match="unknown encoder"): scale_units("smoke", encoder="MiniLM")
    with pytest.raises(ValueError, match="n must be an integer >= 16"): scale_units("smoke", n=10)
    with pytest.raises(ValueError, match="kind must be one of"): cd.synthetic_unit("width", 0, 1.0, 100, 1)
    with pytest.raises(ValueError, match="seeds must be an integer >= 2"): cd.mauve_seeds_unit("qqp", ENCODER, 15, 50, 1)


def test_paper_units_are_declared_whole_tables_first():
    units = chapter_units("corpus_distance")
    tables = list(dict.fromkeys(u.table for u in units))
    assert tables == list(cd.UNIT_TABLES)
    assert [u.table for u in units] == sorted((u.table for u in units), key=tables.index)
    R, runs = SETTINGS["paper"]["R"], len(cd.paraphrase_pairs("qqp")) // 50          # the samples the pairs hold
    variants = len(SETTINGS["paper"]["encoders"]) - 1 + len(SETTINGS["paper"]["corpora"]) - 1
    counts = {t: sum(u.table == t for u in units) for t in tables}
    P = SETTINGS["paper"]
    assert counts == {"synthetic": P["bases"] * (len(P["deltas"]) + len(P["ps"]) + len(P["dims"])), "ksc/main": R,
                      "ksc/samples": (runs - 1) * R, "ksc/other": runs * R, "ksc/pool": runs * R,
                      "ksc/variants": variants * R, "mauve-seeds": 1}
    assert all(u.params["seed"] == 0 and u.cost > 0 for u in units)
    assert all(u.params["K"] == 15 and u.params["n"] == 50 for u in units if u.kind == "ksc")
    assert all(u.params["reps"] == 20 and u.params["m"] == 300 for u in units if u.kind == "synthetic")   # the paper's
    main, pool = next(u for u in units if u.table == "ksc/main"), next(u for u in units if u.table == "ksc/pool")
    assert len(unit_versions(main)[0]) == 16 and unit_versions(main)[1] != unit_versions(next(
        u for u in units if u.table == "ksc/other"))[1]                                 # MRPC's files are read too
    assert unit_versions(main)[0] == unit_versions(pool)[0]                             # one kind, one code version
    reads = {(u.params["corpus"], u.params["encoder"], u.params["other"]): u for u in units if u.kind == "ksc"}
    assert len({unit_versions(u)[1] for u in reads.values()}) == len(reads)        # every encoder's weights are keyed
    # another design declares other units where it differs, never a name twice with other parameters
    clash = {u.name: u for u in units}
    for other in (scale_units("paper", K=10), scale_units("paper", encoder="all-mpnet-base-v2"), scale_units("paper", R=2)):
        assert all(clash[u.name].params == u.params for u in other if u.name in clash)
