# K: the two commands of the README, plus the pieces they are built from.
#   make up    start K on the embedded default state (installs what is missing first)
#   make test  run the whole test suite (installs what is missing first)

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
APT_PACKAGES := fuse3 libfuse3-dev pkg-config gcc python3-dev python3-venv bubblewrap slirp4netns iproute2 openssh-client sshfs bash \
                systemd tree file gawk jq curl patch git make
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# only the tests need a real sshd (the ssh remote's peer); `make up` never installs a system sshd.
# bindfs and fuse-overlayfs are bench/fs.py's C FUSE peers (the mount's data path is measured
# against them), installed with the test dependencies
TEST_PACKAGES := openssh-server bindfs fuse-overlayfs etcd-server

.PHONY: up test deps test-deps venv native bench clean

test-deps:
	@$(MAKE) --no-print-directory deps APT_PACKAGES="$(TEST_PACKAGES)"

deps:
	@missing=""; for p in $(APT_PACKAGES); do \
	  dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing >/dev/null; \
	fi

$(VENV)/.installed: pyproject.toml setup.py native/build.py native/*.c native/*.h | deps
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip setuptools wheel cffi
	$(PY) -m pip install -q --no-build-isolation -e '.[test]'
	@# the project on sys.path by a plain path entry: setuptools' editable import hook costs every
	@# `komputer` start 15 ms (pathlib, urllib), a tenth of a `komputer sh -c true`
	@site=$$($(PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'); \
	  rm -f $$site/__editable__*komputer*; echo "$(CURDIR)" > $$site/komputer.pth
	$(PY) native/build.py
	touch $@

# bytecode compiled here, since an environment with PYTHONDONTWRITEBYTECODE never caches it
venv: deps $(VENV)/.installed
	@$(PY) -m compileall -q kshell kfs native >/dev/null

native: venv
	$(PY) native/build.py

test: venv test-deps
	$(PY) -m pytest -q -n 2 tests

up: venv
	$(VENV)/bin/komputer up --image image

bench: venv
	$(PY) bench/vfs.py

clean:
	rm -rf $(VENV) build *.egg-info native/_knative*.so native/_knative.c native/*.o
