"""data: every loader against the counts in shared/data/README.md and SOURCES.md; errors name the problem."""
import shutil

import numpy as np
import pytest

from embeval_nb import data
from embeval_nb.data import (CORPORA, Corpus, load_corpus, load_lexicon, load_mrpc, load_qqp, load_sts,
                             load_wordsim, locate)

# docs, classes, (train, test) of the first split; five-fold sets use the paper's test size
COUNTS = {
    "reuters": (7674, 8, (5485, 2189)),
    "20news": (18846, 20, (11314, 7532)),
    "bbcsport": (737, 5, (517, 220)),
    "twitter": (3115, 3, (2183, 932)),
    "classic": (7097, 4, (4969, 2128)),
    "amazon": (8000, 4, (5600, 2400)),
    "ohsumed": (2881, 10, (1249, 1632)),
}


@pytest.mark.parametrize("name", CORPORA)
def test_corpus_counts(name):
    c = load_corpus(name)
    n, k, (n_train, n_test) = COUNTS[name]
    assert (len(c), len(c.label_names), len(c.labels)) == (n, k, n)
    assert set(np.unique(c.labels)) == set(range(k))
    assert len(c.splits) == (1 if name in ("reuters", "20news", "ohsumed") else 5)
    for train, test in c.splits:
        assert (len(train), len(test)) == (n_train, n_test)
        assert not set(train) & set(test) and len(set(train) | set(test)) == n


def test_reuters_classes_and_preprocessing():
    c = load_corpus("reuters")
    train, test = c.splits[0]
    counts = {c.label_names[l]: int((c.labels[train] == l).sum()) for l in range(8)}
    assert counts == {"acq": 1596, "crude": 253, "earn": 2840, "grain": 41, "interest": 190,
                      "money-fx": 206, "ship": 108, "trade": 251}
    stops = data.stop_words()
    assert len(stops) == 115 and not any(w in stops for d in c.docs[:200] for w in d)


def test_twitter_keeps_stop_words_and_per_class_counts():
    c = load_corpus("twitter")
    assert {n: int((c.labels == i).sum()) for i, n in enumerate(c.label_names)} == \
           {"negative": 509, "neutral": 2144, "positive": 462}
    assert any("the" in d for d in c.docs)


def test_other_per_class_counts():
    bbc = load_corpus("bbcsport")
    assert sorted((n, int((bbc.labels == i).sum())) for i, n in enumerate(bbc.label_names)) == \
           [("athletics", 101), ("cricket", 124), ("football", 265), ("rugby", 147), ("tennis", 100)]
    classic = load_corpus("classic")
    assert sorted(int((classic.labels == i).sum()) for i in range(4)) == [1033, 1400, 1460, 3204]
    assert set(np.bincount(load_corpus("amazon").labels)) == {2000}


def test_20news_rule_applied():
    from collections import Counter
    c = load_corpus("20news")
    texts, _, _ = data._read_20news(locate("20news"))
    stops = data.stop_words()
    raw = [[w for w in data.tokenize(t) if w not in stops] for t in texts]
    counts = Counter(w for d in raw for w in d)
    assert max(len(set(d)) for d in c.docs) == 500
    for i in np.random.default_rng(0).choice(len(raw), 300, replace=False):
        kept = set(c.docs[i])
        assert all(counts[w] >= 5 for w in kept)
        assert c.docs[i] == [w for w in raw[i] if w in kept]  # order and repeats of the raw document
        if len({w for w in raw[i] if counts[w] >= 5}) <= 500:
            assert kept == {w for w in raw[i] if counts[w] >= 5}
    train = c.splits[0][0]
    first = train[c.labels[train] == c.label_names.index("alt.atheism")][0]  # alt.atheism/49960
    assert c.docs[first][:9] == "alt atheism faq atheist resources archive name atheism resources".split()


def test_five_fold_splits_are_seeded():
    a, b, other = (load_corpus("bbcsport", seed=s) for s in (0, 0, 1))
    assert all(np.array_equal(x[1], y[1]) for x, y in zip(a.splits, b.splits))
    assert not np.array_equal(a.splits[0][1], other.splits[0][1])
    assert len({tuple(te) for _, te in a.splits}) == 5


def test_subset_remaps_splits():
    c = Corpus("t", [["a"], [], ["b"], ["c"]], np.array([0, 1, 0, 1]), ["x", "y"],
               [(np.array([0, 1]), np.array([2, 3]))])
    s = c.subset([bool(d) for d in c.docs])
    assert s.docs == [["a"], ["b"], ["c"]] and list(s.labels) == [0, 0, 1]
    assert [list(x) for x in s.splits[0]] == [[0], [1, 2]]


def test_unknown_names_list_the_known_ones():
    with pytest.raises(ValueError, match="known corpora: reuters, 20news"):
        load_corpus("reuter")
    with pytest.raises(ValueError, match="known data sets:.*reuters"):
        locate("nope")
    with pytest.raises(ValueError, match="known sets:.*simlex-999"):
        load_wordsim("simlex")
    with pytest.raises(FileNotFoundError, match=r"'roget' is neither a registered lexicon \(ppdb, framenet\) nor a file"):
        load_lexicon("roget")


def test_missing_directory_names_set_places_and_how(tmp_path, monkeypatch):
    monkeypatch.setenv("EMBEVAL_DATA", str(tmp_path / "nowhere"))
    monkeypatch.setattr(data, "candidate_roots", lambda path=None: [tmp_path / "given", tmp_path / "nowhere"])
    with pytest.raises(FileNotFoundError) as e:
        locate("reuters", tmp_path / "given")
    msg = str(e.value)
    assert "'reuters'" in msg and str(tmp_path / "given") in msg and str(tmp_path / "nowhere") in msg
    assert "To obtain it" in msg and "fetch('reuters')" in msg


def test_candidate_roots_order(tmp_path, monkeypatch):
    monkeypatch.setenv("EMBEVAL_DATA", str(tmp_path / "env"))
    roots = data.candidate_roots(tmp_path / "explicit")
    assert roots[:2] == [tmp_path / "explicit", tmp_path / "env"]
    assert roots[-1] == data.user_data_dir().resolve()


def test_checksum_mismatch_is_an_error(tmp_path):
    real = locate("reuters")
    for part in ("train", "test"):
        dst = tmp_path / f"wmd/reuters/r8-{part}-all-terms.txt"
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(real / f"wmd/reuters/r8-{part}-all-terms.txt", dst)
    assert locate("reuters", tmp_path) == tmp_path
    with open(tmp_path / "wmd/reuters/r8-test-all-terms.txt", "a") as f:
        f.write("earn\textra line\n")
    with pytest.raises(ValueError, match="checksum mismatch.*r8-test-all-terms"):
        locate("reuters", tmp_path)


@pytest.mark.parametrize("name,n,lo,hi", [("men", 3000, 0, 50), ("mturk-771", 771, 1, 4.96), ("rw", 2034, 0, 10),
                                          ("simlex-999", 999, 0.23, 9.8), ("ws-353-all", 353, 0.23, 10),
                                          ("ws-353-sim", 203, 0.23, 10), ("ws-353-rel", 252, 0.23, 8.81),
                                          ("simverb-3500", 3500, 0, 9.96), ("verb-143", 144, 0.07, 0.79)])
def test_wordsim(name, n, lo, hi):
    df = load_wordsim(name)
    assert len(df) == n and df.score.min() == pytest.approx(lo) and df.score.max() == pytest.approx(hi)
    assert not df.word2.str.contains("\r").any()


def test_lexicons():
    ppdb, framenet = load_lexicon("ppdb"), load_lexicon("framenet")
    assert len(ppdb) > 100_000 and len(framenet) < 10_822  # framenet heads repeat across lines
    merged = load_lexicon("framenet", merge_repeated=True)
    assert set(merged) == set(framenet) and sum(map(len, merged.values())) > sum(map(len, framenet.values()))
    wn = load_lexicon("wordnet+")
    assert len(wn) > 140_000 and {"automobile", "motor_vehicle", "cab"} <= set(wn["car"])
    assert wn == data.wordnet_lexicon()
    clean = load_lexicon("wordnet+", clean=True)
    assert clean == data.wordnet_lexicon(clean=True) == data.clean_lexicon(wn) and len(clean) < len(wn)
    assert load_lexicon("ppdb", clean=True) == data.clean_lexicon(ppdb)


def test_lexicon_from_a_file_path(tmp_path):
    "Any file in the lexicon format (a head, then its neighbours, per line) loads like a registered one."
    f = tmp_path / "lex.txt"
    f.write_text("Dog hound k9\ncat feline\n\ndog puppy\n", encoding="utf-8")
    assert data.lexicon_text(f) == data.lexicon_text(str(f)) == f.read_text(encoding="utf-8")
    assert data.lexicon_groups(f) == [["dog", "hound", "k9"], ["cat", "feline"], ["dog", "puppy"]]
    assert load_lexicon(f) == {"dog": ["puppy"], "cat": ["feline"]}                       # the last line wins
    assert load_lexicon(str(f), merge_repeated=True) == {"dog": ["hound", "k9", "puppy"], "cat": ["feline"]}
    assert load_lexicon(f, merge_repeated=True, clean=True) == {"dog": ["hound", "puppy"], "cat": ["feline"]}
    with pytest.raises(ValueError, match="wordnet\\+ is built from WordNet"):
        data.lexicon_text("wordnet+")
    with pytest.raises(TypeError, match="source must be a lexicon name or a file path, got int"):
        data.lexicon_text(3)
    with pytest.raises(FileNotFoundError, match="neither a registered lexicon"):
        data.lexicon_groups(tmp_path / "missing.txt")
    with pytest.raises(TypeError, match="clean must be True or False"):
        load_lexicon(f, clean=1)


def test_paraphrase_sets():
    assert [len(load_sts(s)) for s in ("train", "dev", "test")] == [5749, 1500, 1379]
    sts = load_sts("train")
    assert sts.score.between(0, 5).all() and sts.sentence2.notna().all()
    train, test = load_mrpc("train"), load_mrpc("test")
    assert (len(train), int(train.label.sum()), len(test), int(test.label.sum())) == (4076, 2753, 1725, 1147)
    assert not str(train.label.iloc[0]).startswith("\ufeff")
    qqp = load_qqp()
    assert len(qqp) == 1000 and int(qqp.is_duplicate.sum()) == 374
    with pytest.raises(ValueError, match="expected train, dev or test"):
        load_sts("validation")


# ---------------------------------------------------------------- sentences with punctuation (n2o chapter)
def test_split_sentences_paragraphs_abbreviations_and_quotes():
    text = ("Mr. Smith paid $3.50 for it.\nHe left at 5 p.m. on Monday.  Then he\nwent home.\n\n"
            "In article <1@x.edu>, bob@x.edu writes:\n> quoted line.\nSee you.")
    assert data.split_sentences(text)[:3] == ["Mr. Smith paid $3.50 for it.", "He left at 5 p.m. on Monday.",
                                              "Then he went home."]
    assert data.split_sentences(text, drop_quoted=True)[3:] == ["See you."]
    with pytest.raises(TypeError, match="text must be a str"):
        data.split_sentences(None)


def test_segment_documents_keeps_positions_of_prose():
    seg = data.segment_documents([(3, "Ok. The first real sentence here. And a second one follows.")])
    assert seg.values.tolist() == [[3, 1, "The first real sentence here."], [3, 2, "And a second one follows."]]
    assert not data.is_prose("| 12 | 34 | 56 | 78 |") and not data.is_prose("see http://x.org for more")


def test_sentence_corpus_removes_exact_duplicates_keeping_the_first_source():
    docs = {"sts-b-news": range(400), "mrpc": range(800)}
    df = data.sentence_corpus(("sts-b-news", "mrpc"), documents=docs)
    assert df.sentence.is_unique and set(df.source) == {"sts-b-news", "mrpc"} and (df.copies >= 1).all()
    sts = set(data.raw_documents("sts-b-news").body[:400])
    assert not df[df.source == "mrpc"].sentence.isin(sts).any()          # STS-B news sentences taken from MRPC
    shared = sts & set(data.raw_documents("mrpc").body[:800])
    assert shared and (df[df.sentence.isin(shared)].copies >= 2).all()
    again = data.sentence_corpus(("sts-b-news", "mrpc"), documents=docs)  # from the cache
    assert again.equals(df)
    with pytest.raises(ValueError, match="not in `sources`"):
        data.sentence_corpus(("mrpc",), documents={"bbcsport": [0]})


def test_raw_documents_keep_punctuation():
    bbc = data.raw_documents("bbcsport")
    assert len(bbc) == 737 and bbc.title.iat[0] == "Claxton hunting first major medal"
    assert "," in bbc.body.iat[0] and "." in bbc.body.iat[0]
    assert len(data.raw_documents("20news")) == 18846 and len(data.raw_documents("mrpc")) == 10944
    with pytest.raises(ValueError, match="unknown source"):
        data.raw_documents("reuters-raw")


def test_seeded_splits_partition_and_check_their_counts():
    from embeval_nb.data import seeded_splits
    splits = seeded_splits(10, 3, n_splits=2, seed=1)
    assert all(len(tr) == 7 and len(te) == 3 and sorted(np.r_[tr, te].tolist()) == list(range(10)) for tr, te in splits)
    with pytest.raises(ValueError, match=r"n_test must be an integer in 0\.\.10, got 11"):
        seeded_splits(10, 11)
    with pytest.raises(ValueError, match="n_splits must be an integer >= 0"):
        seeded_splits(10, 3, n_splits=-1)
    with pytest.raises(TypeError, match="n must be an integer"):
        seeded_splits(10.0, 3)
