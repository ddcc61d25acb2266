"""The crossmatch chapter's paper-scale units: each unit's record is what the reproduction page computed in place
before it read units (the same seeds, draws and tests, written out here again), its record is small JSON, bad
arguments are named, and the paper-scale run is declared whole tables first with unique names."""
import json
from pathlib import Path

import numpy as np
import pytest
from scipy.linalg import orthogonal_procrustes

from embeval_nb import crossmatch as cm, data as _data
from embeval_nb.checks import make_rng
from embeval_nb.crossmatch import (SETTINGS, VOCABULARIES, crossmatch_test, language_words, mmd_permutation_test,
                                   model_spaces, resampled_crossmatch, scale_units)
from embeval_nb.runs import chapter_units, compute_unit, unit_versions

SMOKE = SETTINGS["smoke"]
LANG = dict(n_words=SMOKE["n_words"], n_words_tess=SMOKE["n_words_tess"])
TRAIN = dict(n_docs=SMOKE["n_docs"], epochs=SMOKE["epochs"], glove_vocab=SMOKE["glove_vocab"], glove_epochs=SMOKE["glove_epochs"])


@pytest.fixture(scope="module")
def words():
    "The smoke scale's vocabularies and vectors (needs the Debian word lists)."
    for wl in _data.DEBIAN_WORD_LISTS.values():
        if not sorted(Path("/").glob(wl.pattern.lstrip("/"))): pytest.skip(f"Debian package {wl.package} not installed")
    return language_words(LANG["n_words"], LANG["n_words_tess"], 0)


def _unit(table, name_end):
    "The smoke-scale unit of `table` whose name ends with `name_end`."
    return next(u for u in scale_units("smoke") if u.table == table and u.name.endswith(name_end))


def _small_record(unit):
    rec = compute_unit(unit)
    assert len(json.dumps(rec)) < 20_000 and rec["inputs"] == unit_versions(unit)[1]
    return rec["result"]


def test_a_pairs_unit_is_the_page_computation_it_replaces(words):
    "English-French at 100 + 100 with identical strings removed: the page's pool and seed, the unit's A1."
    got = _small_record(_unit("languages/pairs", "100-drop/en--fr"))
    shared = set(words.words["en"]) & set(words.words["fr"])
    keep = lambda k: [i for i, w in enumerate(words.words[k]) if w not in shared]
    ref = resampled_crossmatch(words.vectors["en"][keep("en")], words.vectors["fr"][keep("fr")], size=100,
                               reps=SMOKE["reps"], seed=[0, VOCABULARIES.index("en"), VOCABULARIES.index("fr"), 100, 1])
    assert got == {"a1": ref.a1.tolist()}


def test_a_blocks_unit_is_the_page_computation_it_replaces(words):
    "Italian against Maltese, every word from Tesseract: block t of one against block t of the other, the page's seeds."
    a, b = "it-tess", "mt-tess"
    got = _small_record(_unit("languages/blocks", f"{a}--{b}"))
    order = {k: make_rng([0, 31, VOCABULARIES.index(k)]).permutation(len(words.words[k])) for k in (a, b)}
    shared, B = set(words.words[a]) & set(words.words[b]), SMOKE["n_words_tess"] // 100
    rows = lambda k, t: [r for r in order[k][100 * t:100 * (t + 1)] if words.words[k][r] not in shared]
    ref = [crossmatch_test(words.vectors[a][rows(a, t)], words.vectors[b][rows(b, t)],
                           seed=[0, 31, VOCABULARIES.index(a), VOCABULARIES.index(b), t]).a1 for t in range(B)]
    assert got == {"a1": ref}


def test_a_models_unit_is_the_page_computation_it_replaces(words):
    "CBOW against its rerun after alignment: the page's Procrustes on half the words, disjoint quarters of the rest."
    unit = _unit("models/aligned", "cbow--cbow-rerun")
    got = _small_record(unit)
    S = model_spaces(**TRAIN, seed=0)
    perm = make_rng([0, 13]).permutation(len(S.common)); fit, held = perm[:len(perm) // 2], perm[len(perm) // 2:]
    std = lambda A: (A - A[fit].mean(0)) / np.linalg.norm((A - A[fit].mean(0))[fit], axis=1).mean()
    A, B = std(S.M["CBOW"]), std(S.M["CBOW (rerun)"])
    R, _ = orthogonal_procrustes(B[fit], A[fit])
    ref = resampled_crossmatch(A[held[:len(held) // 2]], (B @ R)[held[len(held) // 2:]], size=100, reps=SMOKE["reps"],
                               seed=[0, unit.params["stream"]])
    assert unit.params["stream"] == 200 + 10 + 1                           # after the ten pairs of models, CBOW's rerun
    assert got == {"a1": ref.a1.tolist(), "p_value": ref.p_value.tolist()}


def test_the_power_and_calibration_units_are_the_page_computations_they_replace(words):
    got = _small_record(_unit("power", "shift/100"))
    rng, ref = make_rng([0, 11, 100, 1]), {"crossmatch": [], "MMD": []}
    for r in range(SMOKE["power_reps"]):
        X = rng.normal(size=(100, cm.POWER_DIM)); Y = rng.normal(size=(100, cm.POWER_DIM)) + cm.SHIFT
        ref["crossmatch"].append(crossmatch_test(X, Y).p_value)
        ref["MMD"].append(mmd_permutation_test(X, Y, n_permutations=SMOKE["permutations"], seed=r).p_value)
    assert got == ref
    cal = cm.calibration_unit(5, 100, **LANG)          # the first 5 draws of each null, from the page's one stream
    rng = make_rng([0, 7])
    gauss = [crossmatch_test(rng.normal(size=(50, 50)), rng.normal(size=(50, 50))) for _ in range(5)]
    assert cal["gaussian"]["a1"] == [r.a1 for r in gauss] and cal["gaussian"]["p_value"] == [r.p_value for r in gauss]
    idx = rng.permutation(len(words.vectors["en"]))
    assert cal["words"]["a1"][0] == crossmatch_test(words.vectors["en"][idx[:100]], words.vectors["en"][idx[100:200]]).a1


def test_the_word_power_unit_tests_english_words_against_english_with_french_ones(words):
    got = _small_record(_unit("power/words", "0.20/100"))
    keep = lambda k: [i for i, w in enumerate(words.words[k]) if w not in set(words.words["en"]) & set(words.words["fr"])]
    E, F = words.vectors["en"][keep("en")], words.vectors["fr"][keep("fr")]
    rng, ref = make_rng([0, 12, 100, 200]), {"crossmatch": [], "MMD": []}
    for r in range(SMOKE["power_reps"]):
        idx = rng.permutation(len(E))
        X, Y = E[idx[:100]], np.vstack([E[idx[100:180]], F[rng.choice(len(F), 20, replace=False)]])
        ref["crossmatch"].append(crossmatch_test(X, Y).p_value)
        ref["MMD"].append(mmd_permutation_test(X, Y, n_permutations=SMOKE["permutations"], seed=r).p_value)
    assert got == ref


def test_units_name_their_bad_arguments():
    with pytest.raises(ValueError, match="a must be one of"): cm.pairs_unit("english", "fr", 100, True, 2, **LANG)
    with pytest.raises(ValueError, match="comparison must be one of"): cm.models_unit("rotated", "CBOW", "GloVe", 100, 2, 100, **TRAIN)
    with pytest.raises(ValueError, match="tests one model against itself"):
        cm.models_unit("halves", "CBOW", "GloVe", 100, 2, 300, **TRAIN)
    with pytest.raises(ValueError, match="kind must be one of"): cm.power_unit("tilt", 10, 2, 19)
    with pytest.raises(ValueError, match="reps must be an integer >= 1"): cm.power_unit("shift", 10, 0, 19)
    with pytest.raises(ValueError, match=r"share must be a number in \(0, 1\]"): cm.word_power_unit(100, 0.0, 2, 19, **LANG)
    with pytest.raises(ValueError, match="n must be small enough"): cm.word_power_unit(200, 0.1, 2, 19, **LANG)
    with pytest.raises(ValueError, match="n_per_sample must be one of"): scale_units("smoke", n_per_sample=150)
    with pytest.raises(ValueError, match="scale must be one of"): scale_units("huge")
    with pytest.raises(ValueError, match="name must be one of"): cm.trained_model("BERT", 0)
    with pytest.raises(ValueError, match="k must be an integer >= 0"): cm.seed_block_unit(-1, 100, **TRAIN)
    with pytest.raises(ValueError, match="size must be at most a quarter"): cm.seed_block_unit(0, 10_000, **TRAIN)


def test_paper_units_are_declared_whole_tables_first():
    units = chapter_units("crossmatch")
    tables = list(dict.fromkeys(u.table for u in units))
    assert tables == ["languages/blocks", "languages/pairs", "models/table3", "models/aligned", "models/seeds", "calibration", "power",
                      "power/words"]
    assert [u.table for u in units] == sorted((u.table for u in units), key=tables.index)
    counts = {t: sum(u.table == t for u in units) for t in tables}
    assert counts == {"languages/blocks": 36 + 9, "languages/pairs": 4 * 18, "models/table3": 3 * 10 + 2 * 4,
                      "models/aligned": 10 + 4, "models/seeds": SETTINGS["paper"]["seed_blocks"], "calibration": 1,
                      "power": 2 * len(SETTINGS["paper"]["power_sizes"]),
                      "power/words": len(cm.WORD_SHARES) * len(SETTINGS["paper"]["word_power_sizes"])}
    assert all(SETTINGS[scale]["seed_blocks"] >= (3 if scale != "book" else 1) for scale in SETTINGS)   # book: the run and rerun
    assert all(u.params["seed"] == 0 and u.cost > 0 for u in units)
    assert all(u.params["reps"] == 500 for u in units if u.kind in ("pairs", "models"))      # the paper's repetitions
    pairs, power = next(u for u in units if u.kind == "pairs"), next(u for u in units if u.kind == "power")
    assert len(unit_versions(pairs)[0]) == 16 and unit_versions(pairs)[1] != unit_versions(power)[1]
    # the other reading of the sample size declares other units where the design differs, never a name twice
    other = scale_units("paper", n_per_sample=200)
    clash = {u.name: u for u in units}
    assert all(clash[u.name].params == u.params for u in other if u.name in clash)
