# gpuwizard: `make run` builds and opens the app, `make test` runs the tests.
# Both install the Debian/Ubuntu packages they need first (make deps).

GO      ?= go
TAGS    := migrated_fynedo
BIN     := bin/gpuwizard
APT_PKGS := gcc pkg-config libgl1-mesa-dev libx11-dev libxcursor-dev libxrandr-dev \
            libxinerama-dev libxi-dev libxxf86vm-dev
SUDO    := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
FUZZTIME ?= 20s

.PHONY: deps build run test race fuzz bench bench-doctor clean

# Install the C headers Fyne's OpenGL driver builds against, when missing.
deps:
	@command -v $(GO) >/dev/null || { echo "Go 1.26 or newer is needed: https://go.dev/dl/"; exit 1; }
	@missing=""; for p in $(APT_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing:$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	fi

build: deps
	$(GO) build -tags $(TAGS) -o $(BIN) .

run: build
	./$(BIN)

test: deps
	$(GO) vet -tags $(TAGS) ./...
	$(GO) test -tags $(TAGS) -count=1 ./...

race: deps
	$(GO) test -tags $(TAGS) -race -count=1 ./...

# Fuzz every parser (doctor, paste, dataset readers) for FUZZTIME each.
fuzz:
	@for p in ./gpu/ ./trainer/data/; do \
	  for t in $$($(GO) test -list 'Fuzz.*' $$p | grep ^Fuzz); do \
	    echo "== $$p $$t"; $(GO) test -tags $(TAGS) -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) $$p || exit 1; \
	  done; \
	done

# Benchmarks against the references (bench/): see README.
bench: build
	bench/doctor.sh
	bench/train-speed.sh
	bench/mnist-accuracy.sh

# The quick check against python -m torch.utils.collect_env (bench/doctor.sh).
bench-doctor: build
	bench/doctor.sh

clean:
	rm -rf bin dist
