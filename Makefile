# ExoMonad: `make demo` runs the main job, `make test` passes the whole suite.
# Every target installs what it needs (venv, npm peers, system tools) on a fresh machine.

SHELL := /bin/bash
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
NODE_DIRS := tests/interop tests/e2e tests/e2e/claude tests/e2e/codex
# /usr/bin/time by its path: `command -v time` finds the shell's keyword.
APT_TOOLS := tmux node npm curl wget http aria2c bwrap chromium nc.openbsd zip unzip bzip2 sqlite3 xxd rg /usr/bin/time git-lfs gpg gpg-agent hub gh ssh-agent strace openssl slogin lwp-request ed vim.basic

.PHONY: all setup sysdeps venv node demo test lint unit bench soak clean

all: test

sysdeps:
	@missing=""; for t in $(APT_TOOLS); do command -v $$t >/dev/null || missing="$$missing $$t"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing system tools:$$missing"; \
	  pkgs=$$(echo "$$missing" | sed 's/\bnode\b/nodejs/; s/\bssh-agent\b/openssh-client/; s/\bslogin\b/openssh-client/; s/\blwp-request\b/libwww-perl/; s/\bvim\.basic\b/vim/; s/\bbwrap\b/bubblewrap/; s/\bhttp\b/httpie/; s/\baria2c\b/aria2/; s/\bnc\.openbsd\b/netcat-openbsd/; s/\brg\b/ripgrep/; s|/usr/bin/time|time|'); \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$pkgs; \
	fi

$(BIN)/.stamp: pyproject.toml scripts/exomonad-hook
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test]'
	@# Python 3.11's venv brings setuptools, which nothing here uses; its .pth file runs at
	@# every start of this venv's Python: ~0.8 ms of each hook process (docs/performance.md).
	$(BIN)/pip uninstall -q -y setuptools
	touch $@

venv: $(BIN)/.stamp

node: sysdeps
	@for d in $(NODE_DIRS); do \
	  if [ ! -f $$d/node_modules/.stamp ] || [ $$d/package-lock.json -nt $$d/node_modules/.stamp ]; then \
	    (cd $$d && npm ci --no-audit --no-fund --loglevel=error) && touch $$d/node_modules/.stamp || exit 1; \
	  fi; \
	done

setup: sysdeps venv node

lint: venv
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks
	$(BIN)/mypy

unit: setup
	$(BIN)/pytest -q

test: setup lint
	$(BIN)/pytest -q

demo: setup
	$(BIN)/exomonad demo

bench: setup
	$(BIN)/python -m benchmarks

# The generated tests: repeatable in `make test`, fresh random examples in `make soak`.
FUZZ_TESTS = $(shell grep -rl --include='test_*.py' --exclude-dir=node_modules 'from hypothesis' tests)

soak: setup
	$(BIN)/pytest -q -m soak --override-ini="addopts=-ra --strict-markers" tests/soak
	for round in 1 2 3 4 5; do EXOMONAD_HYPOTHESIS=explore $(BIN)/pytest -q $(FUZZ_TESTS) || exit 1; done

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache $(addsuffix /node_modules,$(NODE_DIRS))
