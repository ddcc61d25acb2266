"""embeval_nb: exact, tested kernels for evaluating word and sentence embeddings, and the paper reproductions built on them.

The package of the embeval book, generated from its notebooks; each module is explained on the book page of the
same name (a chapter's module on the chapter's implementation page).

Foundations, shared by every chapter:
    core             numba `jit`, progress bars, `parallel_map`, `record` / `read_records`, the papers' numbers, `Claims`
    checks           argument checks (`check_int`, `check_real`, `as_points`, ...): a clear TypeError or ValueError
    metrics          the metric registry, `prepare`, exact `pairwise_distances`, blocked passes under one memory budget
    neighbours       exact k-NN under any metric (`knn`), `ball_counts`, exact cosine k-NN over large corpora
    matching         exact minimum-weight perfect matching, certified on all pairs (`min_weight_perfect_matching`)
    stats            percentile, paired and stratified bootstraps, exact McNemar, exact proportion intervals, verdicts
    cache            results kept on disk by their inputs and code version (`cached`), `atomic_write`, `locked`, `content_key`
    runs             paper-scale runs as units with committed records, their runner (local or dask) and verification
    data             every data set the book uses (registry with sha256 and provenance) and its loader
    embeddings       word vectors, bags of words and TF-IDF, sentence encoders without torch (`load_encoder`)

Chapters, one paper each:
    wmd              Word Mover's Distance, exact and fast, and its kNN evaluation (Sato, Yamada & Kashima 2022)
    crossmatch       Rosenbaum's exact crossmatch test between sets of embeddings, against MMD (Gurnani 2017)
    corpus_distance  distances between embedded corpora and whether they are distributional (Ackerman et al. 2023)
    n2o              nearest-neighbour overlap between sentence embedders (Lin & Smith 2019)
    retrofit         retrofitting word vectors to lexicons, judged by correlation and RMSE (Hayes 2019)

Quick example, the exact nearest neighbour of each row (distances, then indices):

>>> import numpy as np
>>> from embeval_nb.neighbours import knn
>>> knn(np.array([[0.], [1.], [3.]]), k=1)
(array([[1.], [1.], [2.]]), array([[1], [0], [1]]))
"""
__version__ = "0.1.0"
