package paste

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"gpuwizard/gpu/catalog"
	"gpuwizard/gpu/internal/corpus"
)

// TestMachineWords: what a report says of the machine's graphics in
// words: a Mac, a GPU that is not NVIDIA's, that there is no NVIDIA GPU.
func TestMachineWords(t *testing.T) {
	cases := []struct {
		name, text, os, other, noNVIDIA string
	}{
		{"M1 MacBook", "AssertionError: Torch not compiled with CUDA enabled\nim on an m1 macbook pro", "darwin", "", ""},
		{"a Mac in a list of platforms", "uv sync installs the CUDA build on Windows/Linux (macOS gets MPS), but uv run resets it to the CPU wheel", "", "", ""},
		{"Radeon", "I installed a GIGABYTE Radeon RX 6600 Eagle 8G", "", "Radeon RX 6600 Eagle", ""},
		{"Radeon alone", "Radeon GPU and Cuda incompatibility", "", "Radeon", ""},
		{"AMD in a title", "AMD cuda error\ndirectml is not visible", "", "AMD cuda", ""},
		{"run it on AMD", "How can I run it on AMD? it says cuda is not available", "", "run it on AMD?", ""},
		{"on AMD, in Russian", "Подскажите, как запустить на amd", "", "на amd", ""},
		{"an AMD CPU beside an NVIDIA GPU", "I run it on AMD Ryzen 9 7950X with an RTX 4090", "", "", ""},
		{"Apple chip, in Chinese", "有没有给Apple芯片用的镜像", "", "Apple芯片", ""},
		{"Intel", "Laptop with Intel(R) UHD Graphics 620, cuda is False", "", "Intel(R) UHD Graphics 620", ""},
		{"said", "I don't have an nvidia gpu, can it run on the cpu?", "", "", "I don't have an nvidia gpu, can it run on the cpu?"},
		{"Chinese", "我的电脑没有独立显卡，只有核显", "", "", "我的电脑没有独立显卡，只有核显"},
		// An AMD card by its number (the XT tells it from a Ryzen 5800X),
		// an Intel Arc card by its model, NVIDIA misspelt.
		{"AMD by number", "请问是不是不支持AMD显卡？我是AMD 6600XT", "", "AMD显卡", ""},
		{"AMD number alone", "my card is an AMD 7900 XTX", "", "AMD 7900 XTX", ""},
		{"Ryzen CPU", "CPU: AMD 5800X, GPU: RTX 3080", "", "", ""},
		{"Arc model", "bought an Arc A770 for its 16 GB", "", "Arc A770", ""},
		{"misspelt", "i don't have nivida gpu, what can i do", "", "", "i don't have nivida gpu, what can i do"},
		{"no other GPU", "Windows 11, AMD Ryzen 7 7840HS with Radeon 780M Graphics (no other GPU)", "", "", "Windows 11, AMD Ryzen 7 7840HS with Radeon 780M Graphics (no other GPU)"},
		// Portuguese, with the error text's "no NVIDIA driver" on the line.
		{"Portuguese", "Meu notebook não tem placa de vídeo NVIDIA, e dá erro Found no NVIDIA driver", "", "", "Meu notebook não tem placa de vídeo NVIDIA, e dá erro Found no NVIDIA driver"},
		// An APU's name is a CPU, often beside an NVIDIA GPU.
		{"APU", "CPU: AMD Ryzen 7 5800H with Radeon Graphics", "", "", ""},
		// An eGPU beside integrated graphics is an NVIDIA GPU.
		{"eGPU", "a laptop with only integrated graphics built in, but an external GPU enclosure with a Nvidia graphics card", "", "", ""},
		// An old Mac with an NVIDIA GPU and its CUDA driver.
		// A Mac by name or chip in other languages, or by a macOS home
		// folder; the Windows home in WSL or Git Bash is not one.
		{"on mac, chip after the name", "Estoy en una Mac con chip M1", "darwin", "", ""},
		{"Mac in Chinese", "在苹果电脑上运行报错", "darwin", "", ""},
		{"macOS home folder", `  File "/Users/kim/proj/train.py", line 12`, "darwin", "", ""},
		{"Windows home in WSL", `  File "/mnt/c/Users/kim/proj/train.py", line 12`, "", "", ""},
		{"Windows home in Git Bash", `$ cd /c/Users/kim/proj && python train.py`, "", "", ""},
		{"old Mac with CUDA", "OS X Yosemite 10.10.5, CUDA Driver Version: 7.5.20 on my MacBook Pro", "", "", ""},
	}
	for _, c := range cases {
		f := Parse(c.text, time.Now())
		if f.Host.OS != c.os || f.Paste.Prose["other_gpu"] != c.other || f.Paste.Prose["no_nvidia"] != c.noNVIDIA {
			t.Errorf("%s: OS %q, other GPU %q, no NVIDIA %q", c.name, f.Host.OS, f.Paste.Prose["other_gpu"], f.Paste.Prose["no_nvidia"])
		}
	}
}

// TestOwnGPU: a non-NVIDIA GPU the person says is the machine's own is
// recorded with its line; one a log lists, or one beside an NVIDIA GPU on
// the same line, is not.
func TestOwnGPU(t *testing.T) {
	cases := []struct{ text, own string }{
		{"What should I do if I have Intel iRIS Graphics GPU and I get this", "What should I do if I have Intel iRIS Graphics GPU and I get this"},
		{"Sorry, a problem for intel R Iris R Xe Graphics\nMy PC is intel R Iris R Xe Graphics ,help me", "My PC is intel R Iris R Xe Graphics ,help me"},
		{"Display adapters: Intel(R) UHD Graphics 620", ""},
		{"I have Intel UHD Graphics and a GeForce GTX 1650", ""},
		// Chinese: 我的显卡是 (my graphics card is).
		{"我的显卡是：Intel(R) Arc(TM) B580 Graphics，有办法使用吗？", "我的显卡是：Intel(R) Arc(TM) B580 Graphics，有办法使用吗？"},
	}
	for _, c := range cases {
		if got := Parse(c.text, time.Now()).Paste.Prose["other_gpu_own"]; got != c.own {
			t.Errorf("%q: own GPU line %q, want %q", c.text, got, c.own)
		}
	}
}

// TestPatternNeedles: the needles given to the machine words' patterns
// lose no match: on every report of the corpus, and on the texts above,
// the patterns find what their regexps find on the whole text.
func TestPatternNeedles(t *testing.T) {
	texts := []string{"im on an m1 macbook pro", "an AMD card\nand a\nRadeon", "I don't\nhave an nvidia gpu", "RX 7900 XTX, Intel Arc A770 and iris xe", "my PC is Intel R Iris R Xe Graphics", "my laptop has no\ndedicated gpu", "我的电脑没有独立显卡",
		"No tengo tarjeta gráfica NVIDIA", "Meu notebook não tem placa de vídeo NVIDIA", "у меня нет видеокарты nvidia", "NVIDIA 그래픽카드가 없습니다", "Radeon 780M Graphics (no other GPU)"}
	for _, part := range []string{"tuning", "heldout"} {
		rs, err := corpus.Load(filepath.Join("..", "testdata", "corpus"), part)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			texts = append(texts, r.Text)
		}
	}
	for _, re := range append([]*catalog.Pattern{macRE, otherGPURE}, noNVIDIA...) {
		found := 0
		for _, text := range texts {
			low := asciiLower(text)
			want := re.Regexp().FindAllStringIndex(low, -1)
			found += len(want)
			if got := re.FindAllIndex(low, -1); !slices.EqualFunc(got, want, slices.Equal) {
				t.Errorf("%.40s… on %.80q: found %v, the regexp %v", re, text, got, want)
			}
		}
		if found == 0 {
			t.Errorf("%.40s… found nothing to check", re)
		}
	}
}

// TestRunsWhereInWords: a container named in words (docker部署: deployed
// with docker; "deployed it with docker") is where the program runs; a
// Colab the person says the program works on is not.
func TestRunsWhereInWords(t *testing.T) {
	cases := []struct{ text, container string }{
		{"想问下docker部署有通过gpu部署的方式吗，都是通过cpu部署的", "container"},
		{"I deployed it with docker and the model runs on the CPU", "container"},
		{"the docker deployment only uses the CPU", "container"},
		{"I'm using docker and torch can't see the GPU", "container"},
		{"usando docker, torch no ve la GPU", "container"},
		{"I read the docker docs and the GPU is not used", ""},
		{"I'm not using docker, torch says no GPU", ""},
		{"there is no docker on this machine and cuda is not available", ""},
		{"added to the compose file:\n    deploy:\n      resources:\n        reservations:\n          devices:\n            - driver: nvidia\n              capabilities: [gpu]", "container"},
		{"torch.cuda.is_available() is False in my notebook on Colab", "colab"},
		{"i don't have nivida gpu but with google collab i could use the fooocus", ""},
		{"It works fine on Colab, but on my PC torch says no GPU", ""},
		{"it worked on google collab, not on my laptop", ""},
	}
	for _, c := range cases {
		if got := Parse(c.text, time.Now()).Host.Container; got != c.container {
			t.Errorf("%q: container %q, want %q", c.text, got, c.container)
		}
	}
}

// TestSMICUDAInWords: nvidia-smi's CUDA version said in words is the CUDA
// the driver runs; another tool's CUDA version is not.
func TestSMICUDAInWords(t *testing.T) {
	cases := []struct{ text, cuda string }{
		{"nvidia-smi shows CUDA Version: 11.4 and I installed torch cu121", "11.4"},
		{"my nvidia-smi says cuda version is 12.2", "12.2"},
		{"nvcc shows CUDA version 11.4", ""},
	}
	for _, c := range cases {
		if got := Parse(c.text, time.Now()).NVML.CUDADriverVersion; got != c.cuda {
			t.Errorf("%q: driver CUDA %q, want %q", c.text, got, c.cuda)
		}
	}
}

// TestDriverInWords: the driver's version said in words, in several
// languages, as the branch or the release; a number that is not one is not.
func TestDriverInWords(t *testing.T) {
	cases := []struct{ text, driver string }{
		{"My driver is 470 and I installed torch with cu121", "470"},
		{"nvidia driver version: 535.183", "535.183"},
		{"El driver es 470 y instalé torch con cu121", "470"},
		{"驱动版本 550.54，torch装的cu128", "550.54"},
		{"I updated the driver last week, 3 times", ""},
		{"driver 12.4 and cuda 12.4", ""},
	}
	for _, c := range cases {
		if got := Parse(c.text, time.Now()).Paste.Prose["driver_words"]; got != c.driver {
			t.Errorf("%q: driver in words %q, want %q", c.text, got, c.driver)
		}
	}
}

// TestGPUPackageNotInstalled: a GPU package the person says they did not
// install ("not paddlepaddle-gpu", "instead of tensorflow-gpu") is not
// one of the report's packages; one they installed is.
func TestGPUPackageNotInstalled(t *testing.T) {
	cases := []struct {
		text string
		want int
	}{
		{"I installed paddlepaddle (not paddlepaddle-gpu), is that why it uses the CPU?", 0},
		{"pip installed tensorflow instead of tensorflow-gpu", 0},
		{"I installed paddlepaddle-gpu 2.6 with pip", 1},
	}
	for _, c := range cases {
		if got := Parse(c.text, time.Now()).Paste.GPUPackages; len(got) != c.want {
			t.Errorf("%q: GPU packages %v, want %d", c.text, got, c.want)
		}
	}
}

// TestGeForceByTi: a GeForce written by its number and Ti alone is read
// as the card it names.
func TestGeForceByTi(t *testing.T) {
	for text, want := range map[string]string{
		"I have a 5070ti and nothing works": "RTX 5070 Ti",
		"my 3060 Ti is idle":                "RTX 3060 Ti",
		"the old 1050ti laptop":             "GTX 1050 Ti",
		"RVC が 5090 rtx で動作しない":             "RTX 5090",
	} {
		f := Parse(text, time.Now())
		if got := f.Paste.Prose["gpu"]; got != want {
			t.Errorf("%q: GPU %q, want %q", text, got, want)
		}
	}
	for in, want := range map[string]string{"RTX 3060 Ti": "RTX 3060 Ti", "6000ti": "6000ti", "50ti": "50ti", "4090 rtx": "RTX 4090", "12 rtx": "12 rtx"} {
		if got := tiName(in); got != want {
			t.Errorf("tiName(%q) = %q, want %q", in, got, want)
		}
	}
}
