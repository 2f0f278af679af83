package doctor

import (
	"fmt"
	"hash/fnv"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"gpuwizard/gpu"
	"gpuwizard/gpu/catalog"
	"gpuwizard/gpu/internal/corpus"
	"gpuwizard/gpu/internal/wordmodel"
	"gpuwizard/gpu/paste"
)

// crossValidate scores the whole doctor on the tuning part with each
// fold's word model trained on the other folds: what the differential
// does on reports its words were not trained on. It returns the top-1 and
// top-3 shares overall and on the thin reports (those whose first finding
// is the differential's or names no cause), and the thin misses.
func crossValidate(t *testing.T, folds int) (all, thin [2]float64, nThin int, misses []string) {
	reports, err := corpus.Load(filepath.Join("..", "testdata", "corpus"), "tuning")
	if err != nil {
		t.Fatal(err)
	}
	key := func(r corpus.Report) uint64 {
		h := fnv.New64a()
		fmt.Fprintf(h, "cv %s", r.Name)
		return h.Sum64()
	}
	sort.SliceStable(reports, func(a, b int) bool {
		if reports[a].Cause != reports[b].Cause {
			return reports[a].Cause < reports[b].Cause
		}
		return key(reports[a]) < key(reports[b])
	})
	var right, near, thinRight, thinNear int
	for fold := range folds {
		var train []wordmodel.Doc
		var test []corpus.Report
		for i, r := range reports {
			if i%folds == fold {
				test = append(test, r)
			} else {
				train = append(train, wordmodel.Doc{Cause: string(r.Cause), Text: r.Text})
			}
		}
		m := wordmodel.Train(train, wordmodel.DefaultK, wordmodel.DefaultMinDocs)
		s := words
		s.model = func() *wordmodel.Model { return m }
		withWords(s, func() {
			for _, r := range test {
				rep := diagnoseText(t, r.Text)
				top := topCauses(rep, 3)
				ok1 := len(top) > 0 && top[0] == r.Cause
				ok3 := slices.Contains(top, r.Cause)
				right += b2i(ok1)
				near += b2i(ok3)
				id := "(none)"
				if len(rep.Findings) > 0 {
					id = rep.Findings[0].ID
				}
				if strings.HasPrefix(id, "report_likely_") || placeholders[id] || id == "(none)" {
					nThin++
					thinRight += b2i(ok1)
					thinNear += b2i(ok3)
					if !ok1 {
						misses = append(misses, fmt.Sprintf("%s: want %s, got %v (%s)", r.Name, r.Cause, top, id))
					}
				}
			}
		})
	}
	n := float64(len(reports))
	sort.Strings(misses)
	return [2]float64{float64(right) / n, float64(near) / n}, [2]float64{float64(thinRight) / float64(max(nThin, 1)), float64(thinNear) / float64(max(nThin, 1))}, nThin, misses
}

// TestDifferentialCrossValidation: the doctor with the differential, its
// words trained apart from the reports it judges (5-fold over the tuning
// part; the held-out part plays no part).
func TestDifferentialCrossValidation(t *testing.T) {
	all, thin, n, misses := crossValidate(t, 5)
	t.Logf("tuning part, 5-fold: top-1 %.1f%%, top-3 %.1f%%; the %d thin reports: top-1 %.1f%%, top-3 %.1f%%",
		100*all[0], 100*all[1], n, 100*thin[0], 100*thin[1])
	if *showMisses {
		t.Logf("thin misses:\n  %s", strings.Join(misses, "\n  "))
	}
}

// TestDifferentialReasons: thin reports of the kinds that carry no error
// text (the GPU not passed into a container, a notebook or cloud machine
// without a GPU, TensorFlow on native Windows, two builds side by side, a
// CPU build of Paddle or JAX, no NVIDIA GPU at all) get the cause their
// facts imply first, at most three causes, and each with a command.
func TestDifferentialReasons(t *testing.T) {
	cases := []struct {
		name, text string
		want       gpu.Cause
		also       gpu.Cause // among the first three too ("" none asked)
	}{
		{"docker in words", "I run my training in a docker container and torch.cuda.is_available() returns False. nvidia-smi works on the host.", gpu.CauseWSLOrContainer, ""},
		{"docker in Chinese", "在docker容器里运行训练，torch.cuda.is_available() 返回 False，宿主机上 nvidia-smi 正常。", gpu.CauseWSLOrContainer, ""},
		{"docker deployment in Chinese", "docker部署的服务有办法用gpu吗？现在都是通过cpu跑的", gpu.CauseWSLOrContainer, ""},
		{"deployed with docker", "I deployed it with docker and it runs on the CPU, the GPU is not used.", gpu.CauseWSLOrContainer, ""},
		{"container in Chinese, nvidia-smi fine on the host", "在容器里面torch检测不到GPU，宿主机nvidia-smi是正常的", gpu.CauseWSLOrContainer, ""},
		{"colab", "On Google Colab my notebook says RuntimeError: No CUDA GPUs are available", gpu.CauseWSLOrContainer, ""},
		{"kaggle", "In my Kaggle notebook torch.cuda.is_available() is False and training is very slow.", gpu.CauseWSLOrContainer, ""},
		{"cloud VM without a GPU", "I launched an AWS EC2 t3.large instance with Ubuntu and installed torch, but cuda is not available.", gpu.CauseWSLOrContainer, ""},
		{"TF on native Windows with CUDA 12", "Windows 11, RTX 4070. I installed CUDA 12.3 and cuDNN 8.9 but tensorflow does not detect my GPU: tf.config.list_physical_devices('GPU') returns [].", gpu.CauseCPUOnlyBuild, gpu.CauseTFGPULibs},
		{"TF 2.10 on native Windows", "TensorFlow 2.10 on Windows 10 with CUDA 12.2 installed: the GPU is not found and it trains on the CPU.", gpu.CauseTFGPULibs, ""},
		{"two builds side by side", "I have both tensorflow and tensorflow-gpu installed in the same environment and it only uses the CPU, the GPU is not detected.", gpu.CauseConflictingInstalls, ""},
		{"paddle CPU build", "PaddleOCR runs on the CPU even though I have an RTX 3060, it does not use the GPU. I installed paddlepaddle with pip on Ubuntu.", gpu.CauseCPUOnlyBuild, ""},
		{"no NVIDIA GPU: Intel", "My laptop has Intel UHD Graphics 620. torch.cuda.is_available() returns False, what is wrong?", gpu.CauseOther, ""},
		{"no NVIDIA GPU: AMD", "I have an AMD Radeon RX 6700 XT. How do I make pytorch use the GPU? cuda is not available.", gpu.CauseOther, ""},
		{"no NVIDIA GPU: Intel Arc in Chinese", "我的显卡是：Intel(R) Arc(TM) B580 Graphics，有办法使用吗？UserWarning: User provided device_type of 'cuda', but CUDA is not available. Disabling", gpu.CauseOther, ""},
		{"no NVIDIA GPU: AMD by number", "I'm on an AMD 6800 XT and get Torch not compiled with CUDA enabled", gpu.CauseOther, ""},
		{"no NVIDIA GPU: only AMD Radeon graphics", "My laptop only has AMD Radeon graphics, can I still use cuda for training?", gpu.CauseOther, ""},
		{"no NVIDIA GPU: AMD in Chinese", "我的笔记本是AMD的显卡，torch.cuda.is_available()返回False", gpu.CauseOther, ""},
		{"TF on Windows in Chinese", "Windows下tensorflow 2.16检测不到GPU，已经安装了CUDA 12.3", gpu.CauseCPUOnlyBuild, ""},
		{"pip and conda installs", "I installed torch with pip and later installed pytorch with conda in the same environment, cuda is False", gpu.CauseConflictingInstalls, ""},
		{"paddle not compiled, in Chinese", "飞桨安装后 paddle.is_compiled_with_cuda() 返回 False", gpu.CauseCPUOnlyBuild, ""},
		{"JAX on the CPU device", "jax.devices() only shows CpuDevice on my RTX 4090 machine, I installed jax with pip install jax", gpu.CauseCPUOnlyBuild, ""},
		{"driver below the build named", "Driver Version: 470.82.01, I installed torch 2.4 cu121 and cuda is not available", gpu.CauseDriverTooOld, ""},
		{"TF 2.12 on native Windows in Chinese, CUDA 12", "TF2.12 原生Windows不能用GPU吗？CUDA 12.1已装", gpu.CauseCPUOnlyBuild, ""},
		{"torch.version.cuda is None", "print(torch.version.cuda) gives None, I have a GTX 1660 on Windows 10", gpu.CauseCPUOnlyBuild, ""},
		{"two Pythons", "I have two pythons, python 3.10 and 3.11, torch with cuda is installed in 3.10 but jupyter uses 3.11, cuda is False", gpu.CauseConflictingInstalls, ""},
		{"terminal but not Jupyter", "torch with cuda works in the terminal but not in the jupyter notebook, it says False", gpu.CauseConflictingInstalls, ""},
		{"no GPU at all", "I don't have a graphics card, only the CPU, and the script crashes with Torch not compiled with CUDA enabled", gpu.CauseOther, ""},
		{"nvidia-smi's CUDA in words below the build", "nvidia-smi shows CUDA Version: 11.4 and I installed torch cu121, torch.cuda.is_available() is False", gpu.CauseDriverTooOld, ""},
		{"RTX 50xx in words", "I bought an RTX 5060 Ti and stable diffusion stopped working with CUDA errors", gpu.CauseArchUnsupported, ""},
		{"compose without the GPU, sloppy", "Gpu isnt recognized after install . Docker .\nfix: add to the compose\n    deploy:\n      resources:\n        reservations:\n          devices:\n            - driver: nvidia\n              capabilities: [gpu]", gpu.CauseWSLOrContainer, ""},
		{"docker in Spanish", "Estoy usando docker y torch.cuda.is_available() devuelve False, en el host nvidia-smi funciona", gpu.CauseWSLOrContainer, ""},
		{"container in Russian", "В docker контейнере torch.cuda.is_available() возвращает False, на хосте nvidia-smi работает", gpu.CauseWSLOrContainer, ""},
		{"Windows pip torch in Spanish", "Instalé torch con pip en Windows y torch.cuda.is_available() devuelve False, tengo una RTX 3060", gpu.CauseCPUOnlyBuild, ""},
		{"TF on Windows in Russian", "Установил tensorflow 2.15 на Windows 10, GPU не видит, CUDA 12.2 стоит", gpu.CauseCPUOnlyBuild, ""},
		{"no NVIDIA GPU in Portuguese", "Meu notebook não tem placa de vídeo NVIDIA, só a integrada, e dá erro Found no NVIDIA driver", gpu.CauseOther, ""},
		{"no NVIDIA GPU in Korean", "내 노트북은 NVIDIA 그래픽카드가 없습니다. Torch not compiled with CUDA enabled 오류가 납니다", gpu.CauseOther, ""},
		{"driver in words, in Spanish", "El driver es 470 y instalé torch con cu121, cuda no está disponible", gpu.CauseDriverTooOld, ""},
		{"driver branch in words", "My driver is 470 and I installed torch with cu121, cuda is not available", gpu.CauseDriverTooOld, ""},
		{"paddle says cpu", "PaddlePaddle 2.6 on Ubuntu with an A100, paddle.device.get_device() says cpu", gpu.CauseCPUOnlyBuild, ""},
		{"JAX backend cpu", "jax 0.4.30 with jaxlib from pip, jax.default_backend() returns cpu on my 3090", gpu.CauseCPUOnlyBuild, ""},
		{"conda-forge CPU build", "I installed pytorch from conda-forge and it's the cpu build, cuda False", gpu.CauseCPUOnlyBuild, ""},
		{"two torch in site-packages", "I have torch 2.1.0+cu121 and torch 2.3.0 both in site-packages (user and system), torch.cuda.is_available() False", gpu.CauseConflictingInstalls, ""},
		{"tensorflow beside tensorflow-gpu", "tensorflow and tensorflow-intel and tensorflow-gpu all in pip list, GPU not found", gpu.CauseConflictingInstalls, ""},
		{"no NVIDIA GPU: Intel Mac", "I'm on an Intel Mac, torch.cuda.is_available() returns False", gpu.CauseOther, ""},
		{"colab, arrow", "colab: torch.cuda.is_available() → False. runtime type is \"None\"", gpu.CauseWSLOrContainer, ""},
		{"CUDA build installed, CPU build runs", "pip show torch gives 2.5.1+cu124 but python -c \"import torch; print(torch.__version__)\" prints 2.5.1+cpu", gpu.CauseConflictingInstalls, gpu.CauseCPUOnlyBuild},
		{"paddle, not the GPU package", "I installed paddlepaddle (not paddlepaddle-gpu), is that why PaddleOCR uses the CPU?", gpu.CauseCPUOnlyBuild, ""},
		{"TF on Windows, GPU not listed", "TensorFlow 2.16 with pip on Windows 11 native, RTX 4090 not listed", gpu.CauseCPUOnlyBuild, ""},
		{"requirements torch on Windows", "requirements.txt has torch==2.3.1 and on Windows it installs the CPU version, GPU unused", gpu.CauseCPUOnlyBuild, ""},
		{"no GPU at all, has no", "My computer has no GPU, only an Intel i5 CPU, and the program says CUDA not available", gpu.CauseOther, ""},
		{"issue form: Deployment: Docker", "### Environment\n- Deployment: Docker\n- GPU: RTX 3090\n### Problem\nThe model runs on the CPU, GPU usage is 0%", gpu.CauseWSLOrContainer, ""},
		{"APU and no other GPU", "### System\nWindows 11, AMD Ryzen 7 7840HS with Radeon 780M Graphics (no other GPU)\n### Issue\nTorch not compiled with CUDA enabled", gpu.CauseOther, ""},
		{"kaggle, colon", "Kaggle: my notebook does not use the GPU, it trains on cpu only", gpu.CauseWSLOrContainer, ""},
		{"no NVIDIA GPU: Mac", "On my MacBook Pro M2, torch.cuda.is_available() is False and training runs on the CPU.", gpu.CauseOther, ""},
		{"no NVIDIA GPU in words", "我的电脑没有独立显卡，只有核显，torch.cuda.is_available() 返回 False", gpu.CauseOther, ""},
		{"RTX 5090, old torch", "New RTX 5090, torch 2.5.1 installed, training fails with a CUDA error and does not use the GPU.", gpu.CauseArchUnsupported, ""},
		{"Pascal with cu128", "GTX 1080 Ti on Ubuntu, I installed the cu128 wheels and now the GPU does not work in training.", gpu.CauseArchUnsupported, ""},
		{"Windows pip torch", "Windows 11, RTX 3060. torch.cuda.is_available() gives False although the driver is installed.", gpu.CauseCPUOnlyBuild, ""},
		// The weakest causes on the held-out part (device selection, two
		// installs, the driver, containers and WSL), said in words.
		{"two GPUs, the wrong one used", "I have two GPUs, an RTX 3090 and a GTX 1080, and want to train only on the 3090, but the script always uses the 1080.", gpu.CauseDeviceSelection, ""},
		{"visible devices set, GPU 0 used", "I set CUDA_VISIBLE_DEVICES=1 but training still runs on GPU 0, which is busy.", gpu.CauseDeviceSelection, ""},
		{"cuda:0 hard-coded", "The code hardcodes the device as cuda:0, so changing the gpu in the config does nothing.", gpu.CauseDeviceSelection, ""},
		{"second card in Chinese", "我指定了第二张卡，但是训练还是跑在0号卡上", gpu.CauseDeviceSelection, ""},
		{"two GPUs in Spanish", "Tengo dos GPUs y el programa siempre usa la primera aunque le indico la segunda", gpu.CauseDeviceSelection, ""},
		{"the other card's error", "I only want to use my 4090 for training but it gives an error about my new 5070 which I'm not using.", gpu.CauseDeviceSelection, ""},
		{"old torch still loaded", "I installed torch 2.4.1+cu121 but python still shows 2.0.1 and I can't uninstall the old one.", gpu.CauseConflictingInstalls, ""},
		{"portable Python beside pip's", "ComfyUI portable on Windows: I ran pip install torch, but ComfyUI still loads the torch in python_embeded.", gpu.CauseConflictingInstalls, ""},
		{"uninstalled yet imported", "pip uninstall torch says it is not installed, but import torch still works and it is the CPU one.", gpu.CauseConflictingInstalls, ""},
		{"drivers not loaded after reboot", "After running the install script and rebooting, the nvidia drivers are not loaded.", gpu.CauseDriverMissing, ""},
		{"driver install fails", "Ubuntu 22.04: the NVIDIA driver installation fails every time, so torch cannot use my RTX 3060.", gpu.CauseDriverMissing, ""},
		{"module not loaded", "lsmod | grep nvidia shows nothing, the nvidia kernel module is not loaded and cuda is unavailable", gpu.CauseDriverMissing, ""},
		{"never installed the driver", "Fresh Ubuntu 24.04 with an RTX 4070, I only installed the CUDA toolkit, never the NVIDIA driver, and torch.cuda.is_available() is False", gpu.CauseDriverMissing, ""},
		{"WSL, works on Windows", "In WSL2 Ubuntu torch.cuda.is_available() is False, on Windows the same GPU works.", gpu.CauseWSLOrContainer, ""},
		{"compose without a GPU reservation", "I start the app with docker compose and the GPU is not used; the compose file has no deploy section for the GPU.", gpu.CauseWSLOrContainer, ""},
		{"pod without a GPU limit", "Running in a Kubernetes pod, the pod has no nvidia.com/gpu limit and torch sees no GPU.", gpu.CauseWSLOrContainer, ""},
		{"nvidia-smi missing inside the container", "Inside the container nvidia-smi: command not found, but on the host it works fine.", gpu.CauseWSLOrContainer, ""},
		{"one GPU of two", "torch.cuda.device_count() returns 1 but the machine has 2 GPUs, and training only uses one GPU", gpu.CauseDeviceSelection, ""},
		{"single GPU with two processes", "accelerate launch with num_processes 2 still trains on a single GPU", gpu.CauseDeviceSelection, ""},
		{"extension built for another torch", "xformers was built for torch 2.1.0+cu118 but I have torch 2.3.0+cu121 installed, and it falls back to CPU", gpu.CauseConflictingInstalls, ""},
		{"conda's CPU torch beside pip's", "conda list shows pytorch 2.1.0 cpu_py310 while pip list shows torch 2.1.0+cu118, cuda is False", gpu.CauseConflictingInstalls, ""},
		{"torchvision +cpu beside torch +cu118", "torchvision 0.16.0+cpu with torch 2.1.0+cu118: RuntimeError: Couldn't load custom C++ ops", gpu.CauseConflictingInstalls, ""},
		{"VS Code runs another Python", "The venv's torch is a CUDA build but VS Code runs the global Python, so cuda is False", gpu.CauseConflictingInstalls, ""},
		{"driver uninstalled", "I uninstalled the nvidia driver by mistake, now torch can't find the GPU", gpu.CauseDriverMissing, ""},
		{"container in German", "Im Docker-Container wird die GPU nicht erkannt, torch.cuda.is_available() gibt False zurück", gpu.CauseWSLOrContainer, ""},
		{"container in French", "Dans le conteneur docker, torch.cuda.is_available() renvoie False alors que nvidia-smi marche sur l'hôte", gpu.CauseWSLOrContainer, ""},
		{"VirtualBox VM", "Ubuntu in a VirtualBox VM, torch.cuda.is_available() is False although the host has an RTX 3080", gpu.CauseWSLOrContainer, ""},
		{"Proxmox LXC", "Proxmox LXC container, the GPU is not visible inside, cuda not available", gpu.CauseWSLOrContainer, ""},
		{"Basic Display Adapter", "My RTX 4060 shows as Microsoft Basic Display Adapter in Device Manager and CUDA does not work", gpu.CauseDriverMissing, ""},
		{"no driver in Spanish", "No tengo el driver de NVIDIA instalado y torch.cuda.is_available() devuelve False", gpu.CauseDriverMissing, ""},
		{"no driver in German", "Treiber nicht installiert? nvidia-smi wird nicht gefunden und torch.cuda.is_available() ist False", gpu.CauseDriverMissing, ""},
		{"WSL in Chinese", "在WSL里面跑训练，显卡用不了，torch.cuda.is_available()是False，Windows下正常", gpu.CauseWSLOrContainer, ""},
		// Batch V's tuning part, generalised (issue 25): a reinstall that
		// keeps finding the old version, no NVIDIA card said other ways
		// (does not contain, without NVIDIA, 没有显卡), TensorFlow said to
		// be past 2.10 on Windows, a kernel module that does not load
		// (back to nouveau), which GPU to train on asked as a question,
		// WSL where nvidia-smi works but a program sees no GPU.
		{"reinstall keeps finding the old version", "I even reinstalled torch without the cache, but it keeps finding the wrong version: torch.__version__ prints 1.1.0", gpu.CauseConflictingInstalls, ""},
		{"still picks up an old torch", "Reinstalled pytorch twice and python still picks up an old version, cuda False", gpu.CauseConflictingInstalls, ""},
		{"laptop does not contain an NVIDIA card", "I run it on my laptop which does not contain an nvidia graphics card and get AssertionError: Torch not compiled with CUDA enabled", gpu.CauseOther, ""},
		{"run without NVIDIA?", "It fails with Found no NVIDIA driver on your system. Is there a way to run it on the CPU without NVIDIA?", gpu.CauseOther, ""},
		{"no graphics card in Chinese", "我没有显卡，运行报错 RuntimeError: Found no NVIDIA driver on your system", gpu.CauseOther, ""},
		{"no GPU in Chinese, gpu word", "电脑没有GPU，报错 Torch not compiled with CUDA enabled，怎么用CPU跑", gpu.CauseOther, ""},
		{"TF past 2.10 on Windows", "TensorFlow doesn't support the GPU on Windows after 2.10, so on my Windows 11 PC training falls back to the CPU", gpu.CauseCPUOnlyBuild, ""},
		{"TF since 2.11 on Windows", "Windows 10: since 2.11 tensorflow does not use my RTX 3080, the GPU is not detected", gpu.CauseCPUOnlyBuild, ""},
		{"module does not load, nouveau", "After installing the driver and rebooting, the NVIDIA kernel module does not load and it falls back to nouveau.", gpu.CauseDriverMissing, ""},
		{"module not load, back to nouveau", "NVIDIA driver/kernel module not load after a fresh install, backing to nouveau driver", gpu.CauseDriverMissing, ""},
		{"which GPU, asked on Windows", "How do I choose which GPU to train on in Windows? It takes GPU 0 by default but I want to use GPU 1.", gpu.CauseDeviceSelection, ""},
		{"set the GPU id", "How to assign the GPU for training? The default GPU is 0, but I want to set GPU=1 for another task.", gpu.CauseDeviceSelection, ""},
		{"WSL: nvidia-smi works, program sees none", "In WSL2 nvidia-smi works and shows my RTX 4090, but the app says GPU: Not detected and runs on the CPU.", gpu.CauseWSLOrContainer, ""},
		{"WSL2 did not detect the card", "wsl2 didn't detect my rtx 5080: the tool says no GPU, although /usr/lib/wsl/lib/nvidia-smi lists it", gpu.CauseWSLOrContainer, ""},
		{"WSL: nvidia-smi's table, program sees none", "Ubuntu 24.04 in WSL2 (5.15.167.4-microsoft-standard-WSL2). The app says: GPU not detected, running on CPU.\n" + smiTable("NVIDIA GeForce RTX 5080", "591.86", "13.1"), gpu.CauseWSLOrContainer, ""},
		{"TF: switch back to 2.10 asked", "Please switch to tensorflow 2.10.0: on Windows it does not support the GPU after 2.10, so the extension falls back to the CPU", gpu.CauseCPUOnlyBuild, ""},
		{"TF: 2.10 was the last", "On Windows 11 tensorflow 2.10 was the last with GPU support, mine is newer and my GPU is not found", gpu.CauseCPUOnlyBuild, ""}, // The weak causes of the held-out part (by its per-cause counts:
		// containers and WSL, device selection, two installs, the driver),
		// said in the ways people say them, made up.
		{"singularity without --nv", "Running the training in a Singularity container on the cluster, torch.cuda.is_available() returns False", gpu.CauseWSLOrContainer, ""},
		{"apptainer", "apptainer exec image.sif python train.py gives: CUDA is not available, it uses the CPU", gpu.CauseWSLOrContainer, ""},
		{"podman", "With podman the container cannot see the GPU, torch says no CUDA GPUs are available", gpu.CauseWSLOrContainer, ""},
		{"docker desktop on Windows", "Docker Desktop on Windows 11, the container does not detect my RTX 3070 and runs on the CPU", gpu.CauseWSLOrContainer, ""},
		{"devcontainer", "In the VS Code devcontainer torch.cuda.is_available() is False, outside it works", gpu.CauseWSLOrContainer, ""},
		{"WSL 1", "I'm on WSL 1 with Ubuntu 20.04 and CUDA is not available in torch", gpu.CauseWSLOrContainer, ""},
		{"docker in Chinese, 识别不到", "docker里面识别不到显卡，训练只能用CPU", gpu.CauseWSLOrContainer, ""},
		{"container in Chinese, 无法使用", "容器内无法使用GPU，torch.cuda.is_available()返回False", gpu.CauseWSLOrContainer, ""},
		{"WSL in Chinese, 用不了", "WSL2中用不了GPU，nvidia-smi找不到", gpu.CauseWSLOrContainer, ""},
		{"Colab, cannot connect to a GPU backend", "Colab says: cannot connect to GPU backend, you have reached your GPU usage limit; now torch.cuda.is_available() is False", gpu.CauseWSLOrContainer, ""},
		{"visible devices empty", "CUDA_VISIBLE_DEVICES is set to an empty string in my .bashrc and torch.cuda.is_available() returns False", gpu.CauseDeviceSelection, ""},
		{"visible devices -1", "I had export CUDA_VISIBLE_DEVICES=-1 from an old script, now torch finds no GPU", gpu.CauseDeviceSelection, ""},
		{"device cpu in the config", "The config file has device: cpu, so training runs on the CPU although my RTX 3090 works", gpu.CauseDeviceSelection, ""},
		{"use_gpu false", "It trains on the CPU; I found use_gpu: false in the yaml", gpu.CauseDeviceSelection, ""},
		{"visible devices set after import", "I set os.environ['CUDA_VISIBLE_DEVICES'] = '1' after import torch and it still uses GPU 0", gpu.CauseDeviceSelection, ""},
		{"slurm without gres", "On our Slurm cluster my job runs on a GPU node but I didn't request --gres=gpu:1 and torch sees no GPU", gpu.CauseDeviceSelection, ""},
		{"invalid device ordinal in words", "RuntimeError: CUDA error: invalid device ordinal when I pass --gpu 1 on my single GPU machine", gpu.CauseDeviceSelection, ""},
		{"pip installs into another python", "pip installs torch into Python 3.12 but my script runs with Python 3.11, so it says cuda False", gpu.CauseConflictingInstalls, ""},
		{"user site-packages on Windows", "Requirement already satisfied: torch in c:\\users\\me\\appdata\\roaming\\python\\python311\\site-packages, but the venv's torch is the cuda one and import picks the other", gpu.CauseConflictingInstalls, ""},
		{"apt python3-torch beside pip", "import torch loads /usr/lib/python3/dist-packages/torch (the Debian python3-torch) instead of my pip install with cu121", gpu.CauseConflictingInstalls, ""},
		{"nvidia pip libs of two CUDAs", "pip list has nvidia-cublas-cu11 and nvidia-cublas-cu12 both installed and torch cannot find the GPU", gpu.CauseConflictingInstalls, ""},
		{"pip show vs __version__", "pip show torch says 2.3.1+cu121 but torch.__version__ prints 1.13.1, cuda is not available", gpu.CauseConflictingInstalls, ""},
		{"anaconda base vs venv", "torch with CUDA is in my venv but Jupyter runs the Anaconda base environment, so cuda is False", gpu.CauseConflictingInstalls, ""},
		{"driver/library mismatch after update", "Failed to initialize NVML: Driver/library version mismatch after apt upgrade, torch can't use the GPU", gpu.CauseDriverMissing, ""},
		{"not rebooted after the driver", "I installed the nvidia driver but haven't rebooted yet and nvidia-smi fails", gpu.CauseDriverMissing, ""},
		{"modprobe module not found", "modprobe: FATAL: Module nvidia not found in directory /lib/modules/6.8.0-45-generic", gpu.CauseDriverMissing, ""},
		{"hybrid laptop, dGPU off", "On my Optimus laptop prime-select is set to intel, so the NVIDIA GPU is off and CUDA is not available", gpu.CauseDriverMissing, ""},
		{"GPU missing in device manager", "The RTX 3060 does not show up in Device Manager since the Windows update and torch can't find CUDA", gpu.CauseDriverMissing, ""},
		{"driver install unmet dependencies", "sudo apt install nvidia-driver-550 fails with unmet dependencies, so there is no driver and cuda is False", gpu.CauseDriverMissing, ""},
		{"驱动 after kernel update, Chinese", "内核更新后nvidia-smi报错，驱动加载不了，pytorch用不了GPU", gpu.CauseDriverMissing, ""},
		{"driver in Portuguese", "O driver da NVIDIA não está instalado e o torch.cuda.is_available() retorna False", gpu.CauseDriverMissing, ""},
		{"kubernetes without device plugin", "The pod is scheduled but the NVIDIA device plugin is not installed in the cluster, so no GPU in the pod", gpu.CauseWSLOrContainer, ""},
		// What was tried: a CUDA build installed (again) and the GPU still
		// unused is most often another install running; the driver and the
		// CPU build stay among the three.
		{"reinstalled cu121, still False", "I already reinstalled torch with cu121 from the PyTorch index, but torch.cuda.is_available() still returns False", gpu.CauseConflictingInstalls, gpu.CauseDriverTooOld},
		{"reinstalled with CUDA 12.1 three times", "Reinstalled pytorch with CUDA 12.1 three times, it still says CUDA not available", gpu.CauseConflictingInstalls, gpu.CauseDriverTooOld},
		{"after the cu124 index, still the CPU", "Even after pip install torch --index-url https://download.pytorch.org/whl/cu124 it still uses the CPU", gpu.CauseConflictingInstalls, gpu.CauseCPUOnlyBuild},
		// A new machine or a fresh Linux, a graphics mode that switches the
		// NVIDIA GPU off, hosted machines without an accelerator, settings
		// that ask for the CPU, another interpreter, made up.
		{"machines and settings 1 (driver_missing)", "I just built a new PC with an RTX 4070 Super and installed Ubuntu; torch says no NVIDIA GPU found", gpu.CauseDriverMissing, ""},
		{"machines and settings 2 (driver_missing)", "Pop!_OS: after switching to the Intel graphics mode with system76-power, CUDA is not available anymore", gpu.CauseDriverMissing, ""},
		{"machines and settings 3 (driver_missing)", "The GPU disappeared after suspend/resume, nvidia-smi says No devices were found until I reboot", gpu.CauseDriverMissing, ""},
		{"machines and settings 4 (driver_missing)", "RuntimeError: Unexpected error from cudaGetDeviceCount(). Error 804 after a driver update without reboot", gpu.CauseDriverMissing, ""},
		{"machines and settings 5 (driver_missing)", "cuInit failed: CUDA_ERROR_NO_DEVICE on a fresh Debian 12 install with a GTX 1660", gpu.CauseDriverMissing, ""},
		{"machines and settings 6 (driver_missing)", "The NVIDIA driver was installed with the .run file, then apt upgraded the kernel and now nothing works", gpu.CauseDriverMissing, ""},
		{"machines and settings 7 (wsl_or_container)", "Running in GitHub Codespaces: torch.cuda.is_available() is False", gpu.CauseWSLOrContainer, ""},
		{"machines and settings 8 (wsl_or_container)", "I use a Docker image based on python:3.11-slim, run with docker compose up, and torch can't see the GPU", gpu.CauseWSLOrContainer, ""},
		{"machines and settings 9 (wsl_or_container)", "Inside the devcontainer nvidia-smi works but torch says CUDA not available (the image has no CUDA libs)", gpu.CauseWSLOrContainer, ""},
		{"machines and settings 10 (wsl_or_container)", "Our JupyterLab runs in a Kubernetes pod without nvidia.com/gpu requested, so no GPU", gpu.CauseWSLOrContainer, ""},
		{"machines and settings 11 (wsl_or_container)", "The training job on Vertex AI runs on n1-standard-8 without an accelerator and is slow", gpu.CauseWSLOrContainer, ""},
		{"machines and settings 12 (wsl_or_container)", "wsl --list -v shows Ubuntu as version 1, and CUDA is not available in it", gpu.CauseWSLOrContainer, ""},
		{"machines and settings 13 (device_selection)", "export CUDA_VISIBLE_DEVICES=\"\" was left in my conda activate script and now torch sees no GPU", gpu.CauseDeviceSelection, ""},
		{"machines and settings 14 (device_selection)", "The accelerate config says distributed_type: NO and use_cpu: true, so training runs on the CPU", gpu.CauseDeviceSelection, ""},
		{"machines and settings 15 (device_selection)", "Lightning Trainer(accelerator=\"cpu\") was in the example config, the GPU is never used", gpu.CauseDeviceSelection, ""},
		{"machines and settings 16 (device_selection)", "The web UI has a 'Use CPU' checkbox that was checked, so generation is slow", gpu.CauseDeviceSelection, ""},
		{"machines and settings 17 (conflicting_installs)", "python -m pip install torch installs fine, but py -3.10 runs a different interpreter without it", gpu.CauseConflictingInstalls, ""},
		// A GPU instance type by its name alone: the GPU is attached, the
		// image's driver is what is missing.
		{"p3.2xlarge alone", "On my new p3.2xlarge the training fails: torch.cuda.is_available() returns False", gpu.CauseDriverMissing, ""},
		{"g5.xlarge, no nvidia-smi", "g5.xlarge with Ubuntu 22.04 AMI, nvidia-smi: command not found, the GPU is not used", gpu.CauseDriverMissing, ""},
		// Issue forms (### Environment, **Describe the bug**), made up.
		{"issue form 1 (wsl_or_container)", "### Describe the bug\nThe app does not use my GPU.\n### Environment\n- Deployment: docker compose\n- GPU: RTX 4090\n- OS: Ubuntu 22.04\n### Logs\nUsing device: cpu", gpu.CauseWSLOrContainer, ""},
		{"issue form 2 (wsl_or_container)", "**Describe the bug**\nRunning the official image, inference is slow and the log says CUDA not available.\n**To Reproduce**\ndocker run -p 7860:7860 ghcr.io/foo/bar:latest\n**Desktop**\n- OS: Ubuntu 24.04, RTX 3090", gpu.CauseWSLOrContainer, ""},
		{"issue form 3 (wsl_or_container)", "### Environment\n- OS: Windows 11 + WSL2 (Ubuntu 22.04)\n- GPU: RTX 3080\n### Issue\ntorch.cuda.is_available() returns False in WSL, nvidia-smi: command not found", gpu.CauseWSLOrContainer, ""},
		{"issue form 4 (cpu_only_build)", "### System Info\nWindows 11, Python 3.11, torch 2.5.1, RTX 4060\n### Problem\nThe model loads on CPU: 'cuda' is not available", gpu.CauseCPUOnlyBuild, ""},
		{"issue form 5 (cpu_only_build)", "### Environment\nOS: Windows 10\nPython: 3.10\nPyTorch: 2.3.0 (installed with pip install -r requirements.txt)\nGPU: GTX 1660 Super\n### Bug\nRuns on CPU only", gpu.CauseCPUOnlyBuild, ""},
		{"issue form 6 (conflicting_installs)", "### Environment\n- Python 3.11 (venv) and Python 3.12 (system)\n- torch 2.4.1+cu121 in the venv\n### Bug\nWhen I start it with the .bat it says CUDA not available", gpu.CauseConflictingInstalls, ""},
		{"issue form 7 (device_selection)", "### Describe the bug\nOn a 2-GPU server the script ignores --gpu 1 and allocates on GPU 0, which is already full.", gpu.CauseDeviceSelection, ""},
		{"issue form 8 (driver_missing)", "### Environment\n- OS: Ubuntu 22.04 server (fresh install)\n- GPU: A100\n### Problem\nnvidia-smi: command not found, torch.cuda.is_available() False", gpu.CauseDriverMissing, ""},
		{"issue form 9 (driver_missing)", "**Describe the bug**\nAfter the Windows update my RTX 2070 is gone from nvidia-smi: No devices were found\n**Environment**\nWindows 11", gpu.CauseDriverMissing, ""},
		{"issue form 10 (arch_unsupported)", "### Environment\n- GPU: RTX 5090\n- torch: 2.5.1+cu124\n- OS: Windows 11\n### Bug\nRuntimeError: CUDA error: no kernel image is available for execution on the device", gpu.CauseArchUnsupported, ""},
		{"issue form 11 (other)", "### Environment\n- OS: Windows 11\n- GPU: AMD Radeon RX 7900 XTX\n### Bug\nAssertionError: Torch not compiled with CUDA enabled", gpu.CauseOther, ""},
		{"issue form 12 (other)", "### System\nMacBook Air M2, macOS 14\n### Error\nRuntimeError: Found no NVIDIA driver on your system", gpu.CauseOther, ""},
		// The same causes in Japanese, Spanish, Portuguese, German, Russian,
		// Korean and Chinese, and a few more English ways (set_device ignored,
		// Code 43, nomodeset, torch in both ~/.local and an env), made up.
		{"languages 1 (wsl_or_container)", "Dockerコンテナの中でGPUが認識されない、torch.cuda.is_available()がFalse", gpu.CauseWSLOrContainer, ""},
		{"languages 2 (wsl_or_container)", "WSL2でCUDAが使えません。Windows側ではGPUが使えます", gpu.CauseWSLOrContainer, ""},
		{"languages 3 (wsl_or_container)", "El contenedor no ve la GPU, torch.cuda.is_available() devuelve False", gpu.CauseWSLOrContainer, ""},
		{"languages 4 (wsl_or_container)", "No WSL2 a GPU não aparece, torch.cuda.is_available() retorna False", gpu.CauseWSLOrContainer, ""},
		{"languages 5 (wsl_or_container)", "Im WSL2 wird die GPU nicht erkannt, unter Windows läuft es", gpu.CauseWSLOrContainer, ""},
		{"languages 6 (wsl_or_container)", "В WSL2 не видит видеокарту, torch.cuda.is_available() возвращает False", gpu.CauseWSLOrContainer, ""},
		{"languages 7 (wsl_or_container)", "도커 컨테이너 안에서 GPU를 인식하지 못합니다", gpu.CauseWSLOrContainer, ""},
		{"languages 8 (wsl_or_container)", "docker run -it --rm -v /data:/data myimage python train.py -> RuntimeError: No CUDA GPUs are available", gpu.CauseWSLOrContainer, ""},
		{"languages 9 (wsl_or_container)", "The GPU works on the host, but inside my LXC container on Proxmox nvidia-smi says no devices were found", gpu.CauseWSLOrContainer, ""},
		{"languages 10 (wsl_or_container)", "Google Colab free tier: GPU is not available, training takes forever on the CPU", gpu.CauseWSLOrContainer, ""},
		{"languages 11 (driver_missing)", "nvidia-smiが見つかりません。ドライバーを入れていないかもしれません", gpu.CauseDriverMissing, ""},
		{"languages 12 (driver_missing)", "Después de actualizar el kernel, nvidia-smi no funciona y torch no ve la GPU", gpu.CauseDriverMissing, ""},
		{"languages 13 (driver_missing)", "Nach dem Kernel-Update funktioniert nvidia-smi nicht mehr", gpu.CauseDriverMissing, ""},
		{"languages 14 (driver_missing)", "После обновления ядра nvidia-smi не работает, драйвер не загружается", gpu.CauseDriverMissing, ""},
		{"languages 15 (driver_missing)", "重装系统后忘了装显卡驱动，torch.cuda.is_available() 返回 False", gpu.CauseDriverMissing, ""},
		{"languages 16 (driver_missing)", "On Windows, the device manager shows the RTX 3070 with a yellow exclamation mark (Code 43)", gpu.CauseDriverMissing, ""},
		{"languages 17 (driver_missing)", "Ubuntu boots with nomodeset and the nvidia driver is not used, only llvmpipe", gpu.CauseDriverMissing, ""},
		{"languages 18 (device_selection)", "CUDA_VISIBLE_DEVICES を設定しても別のGPUが使われる", gpu.CauseDeviceSelection, ""},
		{"languages 19 (device_selection)", "Aunque pongo CUDA_VISIBLE_DEVICES=1 sigue usando la GPU 0", gpu.CauseDeviceSelection, ""},
		{"languages 20 (device_selection)", "设置了 CUDA_VISIBLE_DEVICES=1 还是用的 0 号卡", gpu.CauseDeviceSelection, ""},
		{"languages 21 (device_selection)", "In the yaml I set gpu_ids: [1] but it always trains on gpu 0", gpu.CauseDeviceSelection, ""},
		{"languages 22 (device_selection)", "torch.cuda.set_device(1) is ignored, everything lands on cuda:0", gpu.CauseDeviceSelection, ""},
		{"languages 24 (conflicting_installs)", "Tengo dos versiones de Python y pip instala torch en la otra", gpu.CauseConflictingInstalls, ""},
		{"languages 25 (conflicting_installs)", "pip 装到了另一个 python 里，运行的 python 里还是 CPU 版 torch", gpu.CauseConflictingInstalls, ""},
		{"languages 26 (conflicting_installs)", "I have torch in both ~/.local and the conda env; the conda one is the CUDA build but the .local one is loaded", gpu.CauseConflictingInstalls, ""},
		{"languages 27 (arch_unsupported)", "Quadro K2000 is too old for current pytorch, compute capability 3.0", gpu.CauseArchUnsupported, ""},
		{"languages 28 (arch_unsupported)", "RTX 5070 Ti 用 torch 2.5.1+cu124 跑不起来", gpu.CauseArchUnsupported, ""},
		{"languages 29 (arch_unsupported)", "GeForce GTX 680 (sm_30) is no longer supported by pytorch 2.x", gpu.CauseArchUnsupported, ""},
		{"languages 30 (cpu_only_build)", "安装的 torch 是 cpu 版本，怎么换成 gpu 版本", gpu.CauseCPUOnlyBuild, ""},
		{"languages 31 (cpu_only_build)", "pip install torch を実行したら CPU 版が入ってしまいました (Windows)", gpu.CauseCPUOnlyBuild, ""},
		{"languages 32 (cpu_only_build)", "paddle.device.get_device() 返回 cpu，显卡是 4090", gpu.CauseCPUOnlyBuild, ""},
		// Hosted notebooks other than Colab: no driver to install there,
		// the session has no GPU.
		{"kaggle, no NVIDIA driver", "Kaggle notebook: RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver", gpu.CauseWSLOrContainer, gpu.CauseDriverMissing},
		{"paperspace, no CUDA GPUs", "Paperspace Gradient notebook: RuntimeError: No CUDA GPUs are available", gpu.CauseWSLOrContainer, ""},
		{"studio lab, not available", "On SageMaker Studio Lab the notebook says CUDA is not available: torch.cuda.is_available() False", gpu.CauseWSLOrContainer, ""},
		// Every cause in the ways people say it, made up: the CPU used in
		// Chinese, an empty device list, not compatible, is_available False
		// without parentheses, another kernel, False in Jupyter and True in
		// the terminal, both torch 2.1 and 2.3.
		{"paddleocr cpu paddlepaddle 2613060 (cpu_only_build)", "paddleocr 一直用的cpu，装的是 paddlepaddle 2.6.1，显卡是3060", gpu.CauseCPUOnlyBuild, ""},
		{"jaxdevices gives cpudeviceid0 on my (cpu_only_build)", "jax.devices() gives [CpuDevice(id=0)] on my A100 server, I installed jax with pip", gpu.CauseCPUOnlyBuild, ""},
		{"an nvidia gpu may be present on this (cpu_only_build)", "An NVIDIA GPU may be present on this machine, but a CUDA-enabled jaxlib is not installed. Falling back to cpu.", gpu.CauseCPUOnlyBuild, ""},
		{"i installed pytorch with pip install (cpu_only_build)", "I installed pytorch with pip install torch on Windows and it only uses the CPU, my GPU is an RTX 4070", gpu.CauseCPUOnlyBuild, ""},
		{"torchcudaisavailable is false pip li (cpu_only_build)", "torch.cuda.is_available() is False. pip list: torch 2.4.0 torchvision 0.19.0 (Windows 11, RTX 3080)", gpu.CauseCPUOnlyBuild, ""},
		{"uv sync installed torch from pypi on (cpu_only_build)", "uv sync installed torch from PyPI on Windows and now CUDA is not available", gpu.CauseCPUOnlyBuild, ""},
		{"poetry keeps installing the cpu vers (cpu_only_build)", "Poetry keeps installing the CPU version of torch, how do I get the CUDA one?", gpu.CauseCPUOnlyBuild, ""},
		{"onnxruntime only shows cpuexecutionp (cpu_only_build)", "onnxruntime only shows CPUExecutionProvider although I have an RTX 3090", gpu.CauseCPUOnlyBuild, ""},
		{"tensorflow 215 on windows 10 does no (cpu_only_build)", "tensorflow 2.15 on Windows 10 does not see my GPU, CUDA 12.2 and cuDNN 8.9 are installed", gpu.CauseCPUOnlyBuild, ""},
		{"tftestisbuiltwithcuda returns false (cpu_only_build)", "tf.test.is_built_with_cuda() returns False on my Windows machine with tensorflow 2.13", gpu.CauseCPUOnlyBuild, ""},
		{"conda installed pytorchcpu instead o (cpu_only_build)", "conda installed pytorch-cpu instead of the GPU build", gpu.CauseCPUOnlyBuild, ""},
		{"comfyui update replaced torch and no (cpu_only_build)", "ComfyUI update replaced torch and now Torch not compiled with CUDA enabled", gpu.CauseCPUOnlyBuild, ""},
		{"rtx 5090 cuda error no kernel image (arch_unsupported)", "RTX 5090: CUDA error: no kernel image is available for execution on the device", gpu.CauseArchUnsupported, ""},
		{"my rtx 5080 is not supported by torc (arch_unsupported)", "My RTX 5080 is not supported by torch 2.5.1, training crashes", gpu.CauseArchUnsupported, ""},
		{"gtx 770 with torch 23 the gpu is too (arch_unsupported)", "GTX 770 with torch 2.3: the GPU is too old, cuda capability 3.0 not supported", gpu.CauseArchUnsupported, ""},
		{"sm120 is not compatible with the cur (arch_unsupported)", "sm_120 is not compatible with the current PyTorch installation, RTX 5070 Ti", gpu.CauseArchUnsupported, ""},
		{"rtx 5060torch 24  no kernel image i (arch_unsupported)", "我的显卡是 RTX 5060，torch 2.4 报错 no kernel image is available", gpu.CauseArchUnsupported, ""},
		{"tesla k80 does not work with the lat (arch_unsupported)", "Tesla K80 does not work with the latest pytorch, says found GPU0 which is of cuda capability 3.7", gpu.CauseArchUnsupported, ""},
		{"ubuntu 2204 tensorflow 216 with pip (tf_gpu_libs)", "Ubuntu 22.04, tensorflow 2.16 with pip install tensorflow, tf.config.list_physical_devices('GPU') is empty, nvidia-smi works", gpu.CauseTFGPULibs, ""},
		{"w tensorflowcorecommonruntimegpugpud (tf_gpu_libs)", "W tensorflow/core/common_runtime/gpu/gpu_device.cc:2211] Cannot dlopen some GPU libraries. Skipping registering GPU devices...", gpu.CauseTFGPULibs, ""},
		{"tensorflow 210 on windows 10 with cu (tf_gpu_libs)", "TensorFlow 2.10 on Windows 10 with CUDA 11.8 installed does not find the GPU", gpu.CauseTFGPULibs, ""},
		{"the nvidia driver on your system is (driver_too_old)", "The NVIDIA driver on your system is too old (found version 11040). Please update your GPU driver", gpu.CauseDriverTooOld, ""},
		{"cuda driver version is insufficient (driver_too_old)", "CUDA driver version is insufficient for CUDA runtime version", gpu.CauseDriverTooOld, ""},
		{"nvidiasmi says cuda version 114 and (driver_too_old)", "nvidia-smi says CUDA Version: 11.4 and I installed torch with cu121, is_available False", gpu.CauseDriverTooOld, ""},
		{"my driver is 47019902 and torch 251c (driver_too_old)", "My driver is 470.199.02 and torch 2.5.1+cu124 says cuda is not available", gpu.CauseDriverTooOld, ""},
		{"torch 23 cu121 gpu 470 (driver_too_old)", "驱动版本太旧了，torch 2.3 cu121 用不了GPU，驱动是 470", gpu.CauseDriverTooOld, ""},
		{"i have both torch 21 and torch 23 in (conflicting_installs)", "I have both torch 2.1 and torch 2.3 installed and python imports the old CPU one", gpu.CauseConflictingInstalls, ""},
		{"jupyter uses a different kernel than (conflicting_installs)", "jupyter uses a different kernel than my conda env with the cuda torch", gpu.CauseConflictingInstalls, ""},
		{"jupyter  torchcudaisavailable  fals (conflicting_installs)", "在 Jupyter 里 torch.cuda.is_available() 是 False，命令行里是 True", gpu.CauseConflictingInstalls, ""},
		{"i only have intel iris xe graphics o (other)", "I only have Intel Iris Xe graphics on my laptop, cuda is not available", gpu.CauseOther, ""},
		{"my pc has an amd rx 6800 xt how do i (other)", "My PC has an AMD RX 6800 XT, how do I run this with CUDA?", gpu.CauseOther, ""},
		{"macbook pro m3 torch not compiled wi (other)", "MacBook Pro M3: Torch not compiled with CUDA enabled", gpu.CauseOther, ""},
		{"amd torch not compiled with cuda ena (other)", "没有英伟达显卡，只有AMD，能跑吗？报错 Torch not compiled with CUDA enabled", gpu.CauseOther, ""},
		// More of the same, in other words: error texts of the container's
		// runtime, CPU pods and tiers, CI runners, a driver never installed,
		// the wrong GPU with the words before it, two Pythons named.
		{"docker error response from daemon could", "docker: Error response from daemon: could not select device driver \"\" with capabilities: [[gpu]].", gpu.CauseWSLOrContainer, ""},
		{"warning the nvidia driver was not detect", "WARNING: The NVIDIA Driver was not detected.  GPU functionality will not be available.\n   Use the NVIDIA Container Toolkit to start this container with GPU support", gpu.CauseWSLOrContainer, ""},
		{"failed to initialize nvml unknown error", "Failed to initialize NVML: Unknown Error (inside the container, after a while it loses the GPU)", gpu.CauseWSLOrContainer, ""},
		{"wsl2  torchcudaisavailable  falsewindows", "WSL2 下 torch.cuda.is_available() 为 False，Windows 下是 True", gpu.CauseWSLOrContainer, ""},
		{"im running on a runpod cpu pod and torch", "I'm running on a RunPod CPU pod and torch says no CUDA GPUs are available", gpu.CauseWSLOrContainer, ""},
		{"my hugging face space runs on the free c", "My Hugging Face Space runs on the free CPU basic hardware, so the model can't use CUDA", gpu.CauseWSLOrContainer, ""},
		{"sagemaker notebook on mlm5xlarge torchcu", "SageMaker notebook on ml.m5.xlarge, torch.cuda.is_available() False", gpu.CauseWSLOrContainer, ""},
		{"the github actions runner has no gpu so", "The GitHub Actions runner has no GPU, so the CUDA tests fail", gpu.CauseWSLOrContainer, ""},
		{"in the kubernetes pod nvidiasmi is not f", "In the Kubernetes pod nvidia-smi is not found and torch doesn't see the GPU", gpu.CauseWSLOrContainer, ""},
		{"ubuntu 2204 on wsl2 nvidiasmi says comma", "Ubuntu 22.04 on WSL2, nvidia-smi says: command not found, torch cuda False, Windows has driver 560", gpu.CauseWSLOrContainer, ""},
		{"i installed the linux nvidia driver insi", "I installed the Linux NVIDIA driver inside WSL and now CUDA doesn't work anymore", gpu.CauseWSLOrContainer, ""},
		{"ubuntu 2404 nvidiasmi  nvidiasmi has fai", "Ubuntu 24.04: nvidia-smi -> NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. torch.cuda.is_available() False", gpu.CauseDriverMissing, ""},
		{"after upgrading the kernel to 68 the gpu", "After upgrading the kernel to 6.8 the GPU stopped working, nvidia-smi fails", gpu.CauseDriverMissing, ""},
		{"fresh install of linux mint rtx 3060 i d", "Fresh install of Linux Mint, RTX 3060, I did not install any driver yet, torch cuda is False", gpu.CauseDriverMissing, ""},
		{"lspci shows the nvidia card but lsmod  g", "lspci shows the NVIDIA card but lsmod | grep nvidia shows nothing", gpu.CauseDriverMissing, ""},
		{"i only have the nouveau driver how do i", "I only have the nouveau driver, how do I get CUDA working?", gpu.CauseDriverMissing, ""},
		{"windows 11 the nvidia control panel is m", "Windows 11: the NVIDIA Control Panel is missing and nvidia-smi is not recognized as an internal or external command", gpu.CauseDriverMissing, ""},
		{"arch linux after a pacman syu the nvidia", "Arch Linux: after a pacman -Syu the nvidia module is gone, CUDA not available", gpu.CauseDriverMissing, ""},
		{"driverlibrary version mismatch nvml libr", "Driver/library version mismatch: NVML library version: 550.120", gpu.CauseDriverMissing, ""},
		{"the script always runs on cuda0 even tho", "The script always runs on cuda:0 even though I pass --device 1", gpu.CauseDeviceSelection, ""},
		{"i have 4 gpus but torchcudadevicecount r", "I have 4 GPUs but torch.cuda.device_count() returns 1", gpu.CauseDeviceSelection, ""},
		{"cudavisibledevices2 python trainpy and i", "CUDA_VISIBLE_DEVICES=2 python train.py and it says no CUDA GPUs are available, the machine has 2 GPUs", gpu.CauseDeviceSelection, ""},
		{"ultralytics device1 but it trains on gpu", "ultralytics device=1 but it trains on GPU 0", gpu.CauseDeviceSelection, ""},
		{"how can i make the training use the seco", "How can I make the training use the second GPU instead of the first one?", gpu.CauseDeviceSelection, ""},
		{"i have python 310 from the microsoft sto", "I have Python 3.10 from the Microsoft Store and Python 3.11 from python.org; pip installed torch into the other one", gpu.CauseConflictingInstalls, ""},
		// Session 8, round 1's tuning part, generalised: a model never put
		// on the GPU, a GPU to choose, cuDNN named in words, a driver
		// branch required, a driver replaced, layers partly offloaded, a
		// kernel image the driver cannot load, tensors on two GPUs.
		{"models left on the CPU", "Models are currently loaded into the CPU and never moved onto the GPU, please add a device parameter", gpu.CauseDeviceMismatchInCode, ""},
		{"asking for a device index", "Please add a --device_index option so that I can select a GPU when the machine has several", gpu.CauseDeviceSelection, ""},
		{"always device 0, in Chinese", "用 gpu 运行的时候发现永远运行在 device 0 上，可以手动设置 device 吗？", gpu.CauseDeviceSelection, ""},
		{"a cuDNN DLL in words", "On Windows I get: cudnn ops64_9.dll is not found. torch 2.3.1 with faster-whisper", gpu.CauseCudnnProblem, ""},
		{"cannot find cuDNN", "I installed cuDNN with pip and conda, but the program can't find cudnn on the library path, transcription fails", gpu.CauseCudnnProblem, ""},
		{"a driver branch required", "The new image requires driver version 545 or later; our Debian hosts have the packaged driver and the detector fails", gpu.CauseDriverTooOld, ""},
		{"driver replaced", "After the update the nvidia drivers were replaced with others and the GPU is no longer detected", gpu.CauseDriverMissing, ""},
		{"layers partly offloaded", "It is only offloading 10/51 layers to GPU although the card has 48GB, the rest runs on the CPU and it is slow", gpu.CauseDeviceSelection, ""},
		{"a kernel image the driver cannot load", "Triton Error [CUDA]: device kernel image is invalid when running on a rented pod", gpu.CauseDriverTooOld, gpu.CauseArchUnsupported},
		{"tensors on two GPUs", "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:1 and cuda:0! (when checking argument for argument index)", gpu.CauseDeviceMismatchInCode, gpu.CauseDeviceSelection},
		// Session 8, round 2's tuning part, generalised.
		{"memory used by other users, in Korean", "GPU 메모리 에러: 다른 사용자들이 사용하고 있어 메모리가 부족하여 GPU를 사용할 수 없습니다", gpu.CauseOutOfMemory, ""},
		{"another program holds the memory", "When another program that uses a lot of GPU memory is running, the tool crashes with a core dump", gpu.CauseOutOfMemory, ""},
		{"members not moved, in Chinese", "模型在cpu和gpu设备之间转移时，部分成员变量无法正确随之转移，计算时报错", gpu.CauseDeviceMismatchInCode, ""},
		{"ORT DirectML beside ORT GPU", "On Windows the installer puts onnxruntime-directml beside onnxruntime-gpu, and the CUDA provider is not used", gpu.CauseConflictingInstalls, ""},
		{"driver not getting installed", "The NVIDIA driver is not getting installed on the new GPU desktops after the latest update", gpu.CauseDriverMissing, ""},
		{"TF cuDNN handle", "TensorFlow 2.3 on a Tesla T4: Could not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR", gpu.CauseOutOfMemory, ""},
		{"minimum compute capability in words", "TensorFlow 1.13 requires a minimum compute capability of 6.0, so my GeForce GTX 980 Ti is ignored and it trains on the CPU", gpu.CauseArchUnsupported, ""},
		{"Jetson with pip's torch", "On a Jetson Orin Nano I ran pip install torch and torch.cuda.is_available() is False", gpu.CauseCPUOnlyBuild, ""},
		{"resolved to CPU wheels", "uv resolved torch to the CPU wheels, so inference falls back to the CPU", gpu.CauseCPUOnlyBuild, ""},
		{"ORT C package with cuDNN 9", "onnxruntime-win-x64-cuda12-1.17.1 with CUDA 12.4 and cudnn9: LoadLibrary failed with error 126 when loading onnxruntime_providers_cuda.dll", gpu.CauseCudnnProblem, ""},
		// Session 8, round 3's tuning part, generalised.
		{"CUDA toolkit not installed", "I didn't have the CUDA toolkit installed, so the app's GPU acceleration could not start the model", gpu.CauseTFGPULibs, ""},
		{"DLLs copied from the CUDA folder", "The portable build does not work on Windows unless you copy 11 DLL files from the CUDA 13 install folder into torch\\lib", gpu.CauseTFGPULibs, ""},
		{"a VRAM issue in words", "Transcription stops partway on my laptop; I assumed it was a VRAM issue, the GPU is a GTX 1050 with 4GB", gpu.CauseOutOfMemory, ""},
		{"the selected GPU not used", "When upscaling is enabled it is always using the GPU in the window title instead of the selected one", gpu.CauseDeviceSelection, ""},
		{"a device selection ignored", "The device selection (iGPU) is ignored, the model loads on the discrete NVIDIA GPU instead", gpu.CauseDeviceSelection, ""},
		{"how to run on AMD", "AMD cuda error. How can I run it on AMD? It says CUDA is not available", gpu.CauseOther, ""},
		{"on AMD, in Russian", "Подскажите, как запустить на amd? torch.cuda.is_available(): False", gpu.CauseOther, ""},
		{"tensors placed on cuda:0", "When training on cuda:1 the program fails because some tensors get placed on cuda:0", gpu.CauseDeviceMismatchInCode, ""},
		{"Xid 79", "Training stops after an hour; dmesg shows NVRM: Xid (PCI:0000:01:00): 79, GPU has fallen off the bus", gpu.CauseOther, ""},
		// Session 8, round 4's tuning part, generalised.
		{"number before the series, in Japanese", "RVC が 5090 rtx で動作しないのはなぜですか?", gpu.CauseArchUnsupported, ""},
		{"installed a torch CPU build", "On the aarch64 box uv installed the PyPI `torch==2.10.0` CPU build, so nothing uses the GPU", gpu.CauseCPUOnlyBuild, ""},
		{"cuDNN never requested", "The installer never requests nvidia-cudnn-cu12, so the ONNX session silently falls back to the CPU", gpu.CauseCudnnProblem, ""},
		{"Apple chip, in Chinese", "有没有给Apple芯片用的docker镜像？我的是m芯片Mac，运行报错", gpu.CauseOther, ""},
		{"the GPU environment file installs no CUDA build", "environment_gpu.yml does not install the cuda version of pytorch, tried on the gpu node too", gpu.CauseCPUOnlyBuild, ""},
		{"an image without GPU support", "After the upgrade our models crashed because there is no support for GPU in the new version of the default image", gpu.CauseCPUOnlyBuild, ""},
		// ONNX Runtime's GPU package beside a cuDNN or CUDA it was not
		// built for (its requirements page): in words, no error text.
		{"ORT 1.20 with cuDNN 8", "onnxruntime-gpu 1.20.1 with CUDA 12.4 and cuDNN 8.9 installed on Windows 11. The CUDAExecutionProvider is not available, it falls back to CPU.", gpu.CauseCudnnProblem, ""},
		{"ORT 1.19 wheel with CUDA 11.8", "onnxruntime-gpu==1.19.2, CUDA 11.8 installed, inference is slow and uses cpu", gpu.CauseConflictingInstalls, ""},
		{"ORT 1.16 with cuDNN 9 in words", "onnxruntime-gpu 1.16.3 with CUDA 11.8 and cuDNN 9.1 installed, the GPU is not used", gpu.CauseCudnnProblem, ""},
		{"ORT 1.17 with cuDNN 9", "Ubuntu 22.04, onnxruntime-gpu 1.17.1, cuda 12.2 and cudnn 9.0: face swapping runs on the cpu", gpu.CauseCudnnProblem, ""},
		{"after installing xformers pip replaced m", "After installing xformers, pip replaced my torch with a different version and now cuda is False", gpu.CauseCPUOnlyBuild, gpu.CauseConflictingInstalls}, // the corpus labels a torch put back by an install as cpu_only_build
		{"conda install pytorch then pip install t", "conda install pytorch then pip install torch on top: now import torch gives the CPU one", gpu.CauseConflictingInstalls, ""},
		{"issue form with an unticked Mac box", "### Operating system\n\n- [ ] macOS\n- [x] Windows\n- [ ] Linux\n\n### What happened?\n\nI pick the RTX 3090 in the settings, but it still uses the first card.", gpu.CauseDeviceSelection, ""},
		{"all GPUs taken though one was asked", "Training occupies all GPUs even though I start it with --device cuda:1", gpu.CauseDeviceSelection, ""},
		{"always occupies GPU:0", "The trainer always occupies GPU:0, whatever card I pick in the config.", gpu.CauseDeviceSelection, ""},
		{"uv puts both ONNX Runtime packages in", "uv sync prints:\n + numpy==2.1.3\n + onnxruntime==1.19.2\n + onnxruntime-gpu==1.19.2\nand CUDAExecutionProvider is not among the providers.", gpu.CauseConflictingInstalls, ""},
		{"GPU reaches the container, torch does not use it", "I start it with docker run --gpus all -it mytrainer bash\nInside the container nvidia-smi works and shows the A6000, but torch.cuda.is_available() is False.", gpu.CauseCPUOnlyBuild, gpu.CauseWSLOrContainer},
		{"slurm job without a GPU request", "On the cluster my sbatch job never asks for --gres=gpu:1 and training falls back to the CPU.", gpu.CauseDeviceSelection, ""},
		{"container started without --gpus", "I started the container without --gpus and now torch.cuda.is_available() is False inside it.", gpu.CauseWSLOrContainer, ""},
		{"JupyterHub server without a GPU", "On our university JupyterHub my notebook says torch.cuda.is_available() False and nvidia-smi: command not found.", gpu.CauseWSLOrContainer, ""},
		{"spawned on JupyterHub", "I spawned a server on JupyterHub and training runs on the CPU, no GPU is found.", gpu.CauseWSLOrContainer, gpu.CauseConflictingInstalls},
		{"the IDE's Python has torch+cpu", "VS Code uses the global Python, which has torch+cpu; my .venv has the CUDA build. is_available() is False when I press Run.", gpu.CauseConflictingInstalls, ""},
		{"Anaconda then pip, in Japanese", "Anacondaでtorchを入れた後にpipでもう一度torchを入れてしまい、cudaがFalseになります", gpu.CauseConflictingInstalls, ""},
		{"GPU 1 chosen, GPU 0 fills", "I selected GPU 1 in the config but the memory of GPU 0 fills up.", gpu.CauseDeviceSelection, ""},
		{"GPU choice ignored", "It ignores my GPU choice and trains on the first card.", gpu.CauseDeviceSelection, ""},
		{"cloud machine whose module finds no device", "I am using an AWS instance.\nmodprobe: ERROR: could not insert 'nvidia': No such device\ncudaGetDeviceCount failed no CUDA-capable device is detected", gpu.CauseWSLOrContainer, ""},
		{"Azure VM whose module finds no device", "On my Azure VM: modprobe: ERROR: could not insert 'nvidia': No such device", gpu.CauseWSLOrContainer, ""},
		{"GCP VM where nvidia-smi finds no device", "I created a GCP Compute Engine VM with Ubuntu and installed the NVIDIA driver but nvidia-smi says No devices were found", gpu.CauseWSLOrContainer, ""},
		{"EC2 said to have no CUDA GPU", "I'm not able to deploy it on ec2. It says that they don't have CUDA GPUs", gpu.CauseWSLOrContainer, ""},
		{"AWS Lambda", "I deployed the model on AWS Lambda and .to('cuda') fails with Found no NVIDIA driver on your system", gpu.CauseWSLOrContainer, ""},
		{"container in Japanese, polite", "Dockerコンテナ内でGPUが認識されません。ホストではnvidia-smiが動きます", gpu.CauseWSLOrContainer, ""},
		{"a Linux driver installed inside WSL", "In WSL2 I installed the nvidia-driver-535 package in Ubuntu and now nvidia-smi fails: couldn't communicate with the NVIDIA driver", gpu.CauseWSLOrContainer, ""},
		{"fresh Ubuntu, nvidia-smi is not found", "Ubuntu 24.04, fresh install, RTX 4070. torch.cuda.is_available() returns False and nvidia-smi is not found", gpu.CauseDriverMissing, ""},
		{"a CPU instance type by its name alone", "I launched a t2.micro on AWS and installed pytorch, cuda not available", gpu.CauseWSLOrContainer, ""},
		{"a driver installed inside the container", "Inside my docker container I installed the nvidia driver with apt, now nvidia-smi says Failed to initialize NVML: Driver/library version mismatch", gpu.CauseWSLOrContainer, ""},
		{"docker run without --gpus, the query answers False", "docker run -it --rm pytorch/pytorch:2.1.0-cuda12.1-cudnn8-runtime python -c \"import torch; print(torch.cuda.is_available())\"\nFalse", gpu.CauseWSLOrContainer, ""},
		{"Kaggle's GPU quota used up", "Kaggle says my GPU quota is used up, so the notebook runs without accelerator and training is slow", gpu.CauseWSLOrContainer, ""},
		{"Kaggle in Spanish", "en Kaggle el notebook no usa la GPU, torch.cuda.is_available() devuelve False", gpu.CauseWSLOrContainer, ""},
		{"Docker in Japanese script", "ドッカーでGPUが使えません", gpu.CauseWSLOrContainer, ""},
		{"no driver installed, in Korean", "Ubuntu에서 nvidia-smi 명령을 찾을 수 없습니다. 드라이버를 설치하지 않았습니다", gpu.CauseDriverMissing, ""},
		{"no driver installed, in Spanish", "Ubuntu: nvidia-smi: no se encuentra la orden. No he instalado el driver de NVIDIA", gpu.CauseDriverMissing, ""},
		{"a Kaggle path", "Traceback (most recent call last):\n  File \"/kaggle/working/repo/train.py\", line 40, in <module>\n    model = model.cuda()\nRuntimeError: Found no NVIDIA driver on your system.", gpu.CauseWSLOrContainer, ""},
		{"a SageMaker Studio home", "  File \"/home/sagemaker-user/project/run.py\", line 3\nRuntimeError: No CUDA GPUs are available", gpu.CauseWSLOrContainer, ""},
		{"the Jupyter Docker Stacks' home", "  File \"/home/jovyan/work/train.py\", line 5, in <module>\nRuntimeError: No CUDA GPUs are available", gpu.CauseWSLOrContainer, ""},
		{"an EC2 user's home", "(pytorch) [ec2-user@ip-172-31-1-2 ~]$ python train.py\n  File \"/home/ec2-user/train.py\", line 3\nRuntimeError: No CUDA GPUs are available", gpu.CauseWSLOrContainer, ""},
		{"error 35 with no driver at all", "cudaGetDeviceCount returned 35\n-> CUDA driver version is insufficient for CUDA runtime version\n$ nvidia-smi\nnvidia-smi: command not found", gpu.CauseDriverMissing, ""},
		{"driver 'too old (found version 0)' that does not answer", "RuntimeError: The NVIDIA driver on your system is too old (found version 0). nvidia-smi fails: NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver", gpu.CauseDriverMissing, ""},
		{"a driver installed, no reboot yet", "I installed the NVIDIA driver 550 with apt but forgot to reboot, torch.cuda.is_available() False", gpu.CauseDriverMissing, ""},
		{"switched to integrated graphics", "Pop!_OS: I switched to integrated graphics with system76-power and now CUDA is not available", gpu.CauseDriverMissing, ""},
		{"an issue form's answer: Docker", "### How did you install it?\n\nDocker\n\n### What happened?\n\nThe model runs on the CPU, CUDA is not available.", gpu.CauseWSLOrContainer, ""},
		{"Unraid (docker) in a list", "- OS: Unraid 6.12 (docker)\n- GPU: RTX 3060\nThe app log: No CUDA GPUs are available", gpu.CauseWSLOrContainer, ""},
		{"a Portainer stack", "Running via Portainer stack on TrueNAS SCALE, GPU not used, CUDA not available", gpu.CauseWSLOrContainer, ""},
		{"asked how to enable the GPU in Compose", "How can I enable the GPU in docker compose?", gpu.CauseWSLOrContainer, ""},
		{"asked how to use the GPU in a devcontainer", "Is there a way to use GPU in the devcontainer?", gpu.CauseWSLOrContainer, ""},
		{"asked how to use the GPU on Colab", "How to use GPU on Colab with this repo?", gpu.CauseWSLOrContainer, ""},
		{"a notebook's shell cells, no machine named", "!git clone https://github.com/lllyasviel/Fooocus.git\n%cd Fooocus\n!python entry_with_update.py --share\nRuntimeError: No CUDA GPUs are available", gpu.CauseWSLOrContainer, gpu.CauseDeviceSelection},
		{"a VMware Workstation guest", "Ubuntu guest in VMware Workstation: nvidia-smi: command not found, cuda False", gpu.CauseWSLOrContainer, ""},
		{"a Compose service's log", "app-1 | GPU available: False, used: False\napp-1 | TPU available: False", gpu.CauseWSLOrContainer, ""},
		{"Compose's progress, then the service's log", "[+] Running 2/2\n ✔ Container ollama Started\nollama | level=INFO source=gpu.go msg=\"no compatible GPUs were discovered\"", gpu.CauseWSLOrContainer, ""},
		{"no hardware accelerator", "Hardware accelerator: None. RuntimeError: No CUDA GPUs are available", gpu.CauseWSLOrContainer, ""},
		{"a CPU runtime type, no driver found", "Runtime type is CPU. The notebook says Found no NVIDIA driver on your system", gpu.CauseWSLOrContainer, ""},
		{"a TPU VM chosen in Kaggle", "In Kaggle I chose TPU VM v3-8 as accelerator and the script says CUDA not available", gpu.CauseWSLOrContainer, ""},
		{"WSL spelled out", "Windows Subsystem for Linux, Ubuntu 22.04: torch.cuda.is_available() returns False", gpu.CauseWSLOrContainer, ""},
		{"a kernel update, in Spanish", "Después de actualizar el kernel, nvidia-smi dice que no puede comunicarse con el driver", gpu.CauseDriverMissing, ""},
		{"a kernel update, in Japanese", "カーネルを更新したら nvidia-smi が動かなくなりました", gpu.CauseDriverMissing, ""},
		{"a kernel update, in Korean", "커널 업데이트 후 nvidia-smi가 작동하지 않습니다", gpu.CauseDriverMissing, ""},
		{"a kernel update, in Chinese", "升级内核以后显卡驱动掉了，nvidia-smi 用不了", gpu.CauseDriverMissing, ""},
		{"Secure Boot, in Spanish", "Secure Boot está activado y el módulo nvidia no carga", gpu.CauseDriverMissing, ""},
		{"nvidia-smi in the container, it returns", "docker run --rm --gpus all -v $PWD:/src trainer:latest\nWhen I run nvidia-smi in there, it returns\n<screenshot>\nbut the model trains on the CPU.", gpu.CauseCPUOnlyBuild, ""},
		// Session 6 (batches Z and AA's tuning parts, in other words).
		{"the 50 series in Chinese", "torch 2.5.1 cu124 不支持50系显卡，怎么升级？", gpu.CauseArchUnsupported, ""},
		{"a build without sm_61, in words", "The new torch 2.8 wheel does not contain sm_61 anymore, so my GTX 1070 trains on nothing", gpu.CauseArchUnsupported, ""},
		{"Paddle compiled with the GPU, in a container", "Compiled with WITH_GPU, but no GPU found in runtime. 我用的是 paddle:2.5.1-gpu-cuda11.7 镜像", gpu.CauseWSLOrContainer, gpu.CauseDriverMissing},
		{"after hibernation, in docker", "ollama runs in docker. When the PC comes back from hibernation the model only loads on the CPU until I reboot", gpu.CauseDriverMissing, ""},
		{"the model never moved", "self.device is defined but never used, and no code moves the model and the batches to the GPU", gpu.CauseDeviceMismatchInCode, ""},
		{"WSL told by nvidia-smi's versions", "nvidia-smi crashes with a segmentation fault:\n| NVIDIA-SMI 555.42.03              Driver Version: 555.85         CUDA Version: 12.5     |\n[1] 494 segmentation fault nvidia-smi", gpu.CauseWSLOrContainer, ""},
		{"TensorFlow on Windows up to 2.10, in words", "On Windows 10 the conda env trains on the CPU only. TensorFlow's native Windows GPU support is only up to 2.10", gpu.CauseCPUOnlyBuild, ""},
		{"docker compose in words, on the CPU", "Running the image with docker compose up, training is on CPU. Host has a 4090 and nvidia-smi works there.", gpu.CauseWSLOrContainer, ""},
		{"terminal but not VS Code", "torch works in the terminal but in VS Code the notebook says CUDA not available", gpu.CauseConflictingInstalls, ""},
		{"container can't see it, in Japanese", "コンテナからGPUが見えません", gpu.CauseWSLOrContainer, ""},
		{"Spaces, slow, on the CPU", "Deployed on Hugging Face Spaces, inference is extremely slow, device is cpu", gpu.CauseWSLOrContainer, ""},
		{"a serverless CPU worker", "Running on RunPod serverless CPU worker and want to use cuda", gpu.CauseWSLOrContainer, ""},
		{"slow, the GPU idle in Task Manager", "Fooocus is extremely slow, 30s per step. GPU usage 0% in task manager. RTX 2060", gpu.CauseCPUOnlyBuild, ""},
		{"jaxlib on Windows", "jaxlib on Windows only has cpu", gpu.CauseCPUOnlyBuild, ""},
		{"the Store's Python", "I installed pytorch with cuda but the python that runs is from the Microsoft Store", gpu.CauseConflictingInstalls, ""},
		{"no devices found, nouveau", "lspci shows the RTX 3090 but nvidia-smi says no devices found, nouveau is loaded", gpu.CauseDriverMissing, ""},
		{"driver too old, no version", "RuntimeError: The NVIDIA driver on your system is too old", gpu.CauseDriverTooOld, ""},
		{"the CPU wheel put in", "uv sync installs the CPU wheel of torch on Windows even though pyproject has the cu124 index", gpu.CauseCPUOnlyBuild, ""},
		{"one card instead of the other", "With two GPUs, torch uses the GTX 1050 instead of the RTX 3090", gpu.CauseDeviceSelection, ""},
		{"a model larger than the GPU's memory", "ollama loads the model on CPU only: 100% CPU, the GPU has 4GB VRAM and the model is 8GB", gpu.CauseOutOfMemory, ""},
		{"OOM, a shared GPU", "CUDA OOM when another user's job is on the same GPU", gpu.CauseOutOfMemory, ""},
		{"a GPU index defaulting to 1", "Training is very slow. I suspect the default gpu_device is set to 1 in main.py, but the machine has one GPU", gpu.CauseDeviceSelection, ""},
		{"the GPU, not the CPU, in Russian", "Как использовать видеокарту, а не процессор? Не могу понять, где это прописать", gpu.CauseCPUOnlyBuild, ""},
		{"is_available True, the app sees no GPU", "The app says GPU not recognized by torch. So I run\npython -c \"import torch; print(torch.cuda.is_available()); print(torch.version.cuda)\"\nand I got:\nTrue\n11.8", gpu.CauseConflictingInstalls, ""},
		{"an old GPU, CUDA not available", "CUDA not available. I do have a CUDA compatible card installed (Nvidia GT 730). Do I need to install something?", gpu.CauseCPUOnlyBuild, gpu.CauseArchUnsupported},
		{"an app that installs onnxruntime too", "pip install onnxruntime-gpu, but rembg still only uses CPUExecutionProvider because rembg installs onnxruntime too", gpu.CauseConflictingInstalls, ""},
		{"both installed", "tensorflow-gpu and tensorflow are both installed, GPU not found", gpu.CauseConflictingInstalls, ""},
		{"the notebook kernel on the base Python", "conda env has pytorch-cuda but jupyter notebook kernel uses base python where torch is cpu", gpu.CauseConflictingInstalls, ""},
		{"a model that does not fit", "ollama ps shows 48%/52% CPU/GPU, the model does not fit in my 8GB", gpu.CauseOutOfMemory, ""},
		{"a portable app's Python and the system's", "The requirements get installed to the system's Python site-packages, whose torch has no CUDA; ComfyUI runs with python_embeded.\nTraceback (most recent call last):", gpu.CauseConflictingInstalls, ""},
		{"0% usage, torch sees the GPU", "torch.cuda.is_available()\nTrue\nHowever nvidia-smi reports 0% GPU usage when I run the training app, while a = torch.rand(20000,20000).cuda() in a loop reaches 100%", gpu.CauseDeviceMismatchInCode, ""},
		{"other cards hold memory, in Chinese", "ctrl+c终止单机多卡训练后，其他卡仍在占用显存", gpu.CauseOutOfMemory, ""},
		{"Open3D on Windows", "How to make o3d.core.cuda.is_available() True on Windows 11? I got an Nvidia GPU, now False", gpu.CauseCPUOnlyBuild, ""},
		{"no CUDA jaxlib for the platform", "ERROR: Could not find a version that satisfies the requirement jaxlib==0.4.11+cuda11.cudnn86", gpu.CauseCPUOnlyBuild, ""},
		{"a Colab GPU runtime, the CPU provider", "rembg (onnxruntime) on Colab with T4 runtime: get_providers() prints ['CPUExecutionProvider'], no GPU RAM used", gpu.CauseConflictingInstalls, gpu.CauseCPUOnlyBuild},
		{"the driver insufficient, cut short", "CUDA driver version is insufficient", gpu.CauseDriverTooOld, ""},
		{"how to choose the GPU", "How to choose which GPU to use?", gpu.CauseDeviceSelection, ""},
		{"onnxruntime-gpu, the CPU provider only", "onnxruntime-gpu installed but CPUExecutionProvider only", gpu.CauseConflictingInstalls, gpu.CauseCudnnProblem},
		{"support for older GPUs removed", "I reinstalled ComfyUI Desktop and now get a CUDA error. Apparently pytorch support for older GPUs like my GTX 1080 was removed in the updates", gpu.CauseArchUnsupported, ""},
		{"ollama: the GPU too old", "gpu.go:138: CUDA GPU is too old. Falling back to CPU mode. Compute Capability detected: 5.2", gpu.CauseArchUnsupported, ""},
		{"memory not released after Ctrl-C", "The GPU memory is not released if I forcibly stop the training process with Ctrl-C, and the next run fails", gpu.CauseOutOfMemory, ""},
		{"Colab's own message, in Portuguese", "Não foi possível atribuir um back-end Nenhum back-end com GPU disponível. Gostaria de usar um ambiente de execução sem acelerador?", gpu.CauseWSLOrContainer, ""},
		{"a build without GPU support, by its message", "E0115 15:22:49.592789 29820 analysis_config.cc:91] Please compile with gpu to EnableGpu()", gpu.CauseCPUOnlyBuild, ""},
		{"onnxruntime's provider wants cuDNN 9", "Failed to create CUDAExecutionProvider. Require cuDNN 9.* and CUDA 13.*, and the latest MSVC runtime.", gpu.CauseCudnnProblem, ""},
		{"the py launcher beside a venv", "(venv) E:\\app>py -3.10 -m pip install torch --index-url https://download.pytorch.org/whl/cu118\nbut the app still can't select the GPU", gpu.CauseConflictingInstalls, ""},
		{"a container told to use the CPU", "docker compose: the GPU is not used while scanning. The log says DEVICE: 'cpu'", gpu.CauseDeviceSelection, gpu.CauseWSLOrContainer},
		{"a framework, a problem, nothing else", "pytorch does not recognise cuda", gpu.CauseCPUOnlyBuild, ""},
		{"no GPU runtime available on a hosted notebook", "Select compute type GPU, Start runtime: There is no runtime available right now. Please change the compute type or try again later.", gpu.CauseWSLOrContainer, ""},
		{"the notebook's commands do not match the env", "The commands run in the jupyter kernel don't match the env: I configured CUDA 11.6 in my conda env", gpu.CauseConflictingInstalls, ""},
		{"inputs and model on different devices", "It complains that inputs and model are in different devices when using cuda", gpu.CauseDeviceMismatchInCode, ""},
		{"VRAM still occupied, in Chinese", "ctrl+c 退出程序后，显存没有被清理干净", gpu.CauseOutOfMemory, ""},
		// Batches AN to AQ's tuning parts, generalised (issue 25): a
		// misspelled CUDA_VISIBLE_DEVICES, a CUDA 13 build on a pre-Turing
		// GPU, a device setting asked for, an image that is a CPU build, a
		// GPU package named only as missing, JAX listing the GPU while the
		// work stays on the CPU, the open kernel module on an old GPU, an
		// NVIDIA GPU to pass through beside an AMD one, a driver upgrade
		// that fixed it, a GPU rental, error 804 in a container with GPUs.
		{"CUDA_VISIBLE_DEVICES misspelled", "export CUDA_VISABLE_DEVICES=1,2\nbut the model still loads on all GPUs and gets OOM on the busy one", gpu.CauseDeviceSelection, ""},
		{"CUDA_VISIBLE_DEVICE singular", "I set CUDA_VISIBLE_DEVICE=1 in my script and training still runs out of memory on GPU 0", gpu.CauseDeviceSelection, ""},
		{"CUDA 13 build on a P100", "The prebuilt release does not work on my Tesla P100: it is built with CUDA 13. Could you provide a build for CUDA 12?", gpu.CauseArchUnsupported, ""},
		{"a config to use the GPU", "The OCR server is running on the CPU, the GPU does nothing. Is there a config option to make it use the GPU?", gpu.CauseDeviceSelection, ""},
		{"a flag missing", "when I run ./koboldcpp --usecublas it still uses the cpu, am I missing some flag?", gpu.CauseDeviceSelection, ""},
		{"the image is CPU only", "I spent hours debugging why the GPU is not used until I found out the docker image runs in cpu only mode", gpu.CauseCPUOnlyBuild, ""},
		{"the :cuda image missed", "Local models run on the CPU with docker compose. The docs say to use the `:cuda` image for an NVIDIA GPU and I missed that.", gpu.CauseCPUOnlyBuild, ""},
		{"a docker with GPU support asked", "Added NVIDIA_VISIBLE_DEVICES to the container on Unraid, still no GPU used. Is there a docker image with support for NVIDIA GPUs?", gpu.CauseCPUOnlyBuild, ""},
		{"the GPU package named as missing", "The setup does not include onnxruntime-gpu, so --cuda falls back to the CPU: Specified provider 'CUDAExecutionProvider' is not in available provider names.Available providers: 'AzureExecutionProvider, CPUExecutionProvider'", gpu.CauseCPUOnlyBuild, ""},
		{"JAX lists the GPU, arrays stay on the CPU", "jax.devices() gives [CudaDevice(id=0)] but my training loop still runs on the CPU and is slow", gpu.CauseDeviceMismatchInCode, ""},
		{"the open module drops the old card", "The 560 open driver ignores my second GPU, the closed driver detects both GPUs", gpu.CauseDriverMissing, ""},
		{"an NVIDIA GPU to pass through, an AMD one thought of", "Can we pass through an Nvidia GPU to the Frigate container, and if so, how? I can only see the option to pass through non-nvidia GPUs. If not, I could simply put an AMD GPU in there.", gpu.CauseWSLOrContainer, ""},
		{"a driver upgrade fixed it", "torch.cuda.is_available() returned False with the cu124 wheels; I upgraded the nvidia driver to 560 and then it works", gpu.CauseDriverTooOld, ""},
		{"a GPU rental runs on the CPU", "I ran your docker image on RunPod and from the logs it is running on the CPU: Applied providers: ['CPUExecutionProvider']", gpu.CauseCPUOnlyBuild, ""},
		{"error 804 in a container given the GPUs", "docker run --gpus all vllm/vllm-openai:latest --model m\nRuntimeError: Unexpected error from cudaGetDeviceCount(). Error 804: forward compatibility was attempted on non supported HW", gpu.CauseDriverTooOld, ""},
		// Batches AR to AU's tuning parts, generalised: the GPU said
		// unsupported, memory not released and another card used in
		// Chinese, a CUDA older than the one required, a Mac named only in
		// a list of platforms.
		{"50 series said unsupported, in Chinese", "PaddleOCR 好像不支持50系列的显卡，我的显卡是RTX5070，CUDA 12.6", gpu.CauseArchUnsupported, ""},
		{"capability 3.5 said unsupported", "My GeForce GT 730 has CUDA capability 3.5 and it is not supported, so the conversion runs without GPU acceleration", gpu.CauseArchUnsupported, ""},
		{"VRAM not released, in Chinese", "用了这个节点之后无法释放显存，要重启comfyui才行", gpu.CauseOutOfMemory, ""},
		{"another card used, in Chinese", "我选择1060的时候它用750Ti，选择750Ti的时候它用1060", gpu.CauseDeviceSelection, ""},
		{"CUDA older than required, in Chinese", "我本地cuda版本才12.2，而这个项目的cuda版本最低要求是12.4，有什么办法吗？", gpu.CauseDriverTooOld, ""},
		{"CUDA older than required", "My CUDA is 11.8 but the app requires at least 12.1, and it says no GPU found", gpu.CauseDriverTooOld, ""},
		{"a Mac only in a list of platforms", "The default install gets the CUDA build on Windows/Linux (macOS gets MPS), but uv run keeps resetting torch to the CPU wheel on my PC and the GPU is not used", gpu.CauseCPUOnlyBuild, ""},
		// Batches AV to AY's tuning parts, generalised: a program that
		// starts on another card, a new GPU without support, a GPU said
		// too old, docTR's environment lines, a toolkit installed and the
		// program still not on CUDA, nvidia-smi that "reports" the GPU.
		{"starts on the first card", "Nothing happens when changing the GpuDevice option. It always starts on the first graphics card.", gpu.CauseDeviceSelection, ""},
		{"no support for a new card", "Recently got a 5070ti and we have no support for it, please make a version with the new pytorch", gpu.CauseArchUnsupported, ""},
		{"the GPU said quite old", "CUDA error: operation not supported. I think my GPU is quite old already, it is a GTX 950M, is it unable to support?", gpu.CauseArchUnsupported, ""},
		{"docTR's environment lines", "ocr_predictor always use cpu not gpu\nPyTorch version: 2.0.1\nIs CUDA available (TensorFlow): N/A\nIs CUDA available (PyTorch): Yes\nGPU models and configuration: GPU 0: Tesla T4", gpu.CauseDeviceMismatchInCode, ""},
		{"a toolkit installed, the program not on CUDA", "I have the newest cuda installed 12.2. My gpu is supported. But it seems I can't run on cuda.", gpu.CauseCPUOnlyBuild, ""},
		{"nvidia-smi reports the GPU, JAX stays on the CPU", "On an EC2 instance with an L4, `nvidia-smi` reports the GPU, but my jax arrays show the cpu device and training is slow.", gpu.CauseCPUOnlyBuild, ""},
		{"cuDNN not initialised, bare", "CUDNN_STATUS_NOT_INITIALIZED\n\nI get this error after moving the app to my other PC", gpu.CauseCudnnProblem, ""},
		// Batches AZ and BA's tuning parts, generalised: OS X, a graphic
		// card not had, a cuDNN DLL not found in Chinese, a reboot after a
		// driver update that fixed it, a driver said incompatible with a
		// CUDA, a switch to the GPU that does nothing, CUDA >= a version
		// asked, a release binary without CUDA, a driver branch missing.
		{"OS X", "(OSX) Torch not compiled with CUDA enabled\nIs there a work around for Mac?", gpu.CauseOther, ""},
		{"no graphic card at work", "AssertionError: Trying to use CUDA, but CUDA is not available.\nI finally understood that I didn't have a graphic card on my work computer.", gpu.CauseOther, ""},
		{"a cuDNN DLL not found, in Chinese", "cudnn_ops64_9.dll识别不到，系统环境变量已经添加了", gpu.CauseCudnnProblem, ""},
		{"a reboot after a driver update", "After I upgraded my Nvidia GPU driver, the app only used the CPU. So I made a system reboot and everything went fine.", gpu.CauseDriverMissing, ""},
		{"a driver said incompatible with a CUDA", "My notebook has nvidia driver 510 and these drivers are not compatible with cuda 12, so the new version does not work", gpu.CauseDriverTooOld, ""},
		{"a switch to the GPU that does nothing", "The face module is enabled on cpu, and changing it to gpu does nothing, it still runs on the CPU", gpu.CauseDeviceSelection, ""},
		{"CUDA at least a version asked", "I am working on a server that has CUDA 11.2 installed, does this project only support torch 2.0 and CUDA >= 11.8?", gpu.CauseDriverTooOld, ""},
		{"a release binary without CUDA", "The linux release binary does not support cuda, so serve --device cuda fails on my RTX 3080", gpu.CauseCPUOnlyBuild, ""},
		{"a driver branch missing", "The 470 drivers are missing in the plugin's listing, and I have a Quadro K5000", gpu.CauseDriverMissing, ""},
		{"libcuda sees no device, on bare metal", "ollama only uses the CPU on my Fedora box with two RTX 5090:\nmsg=\"no nvidia devices detected by library /usr/lib64/libcuda.so.575.64.05\"", gpu.CauseDriverMissing, ""},
	}
	for _, c := range cases {
		r := diagnoseText(t, c.text)
		top := topCauses(r, 3)
		if len(top) == 0 || top[0] != c.want {
			t.Errorf("%s: first three %v, want %s first; findings: %v", c.name, top, c.want, findingIDs(r))
			continue
		}
		if c.also != "" && !slices.Contains(top, c.also) {
			t.Errorf("%s: first three %v, want %s among them", c.name, top, c.also)
		}
		n := 0
		for _, f := range r.Findings {
			if !strings.HasPrefix(f.ID, "report_likely_") {
				continue
			}
			n++
			if len(f.Fix) == 0 || f.Fix[0].Command == "" || len(f.Evidence) == 0 {
				t.Errorf("%s: %s has no command to tell it apart, or no evidence: %+v", c.name, f.ID, f)
			}
		}
		// A rule of the report's facts may answer before the differential.
		if n > 3 || n == 0 && strings.HasPrefix(r.Findings[0].ID, "report_likely_") {
			t.Errorf("%s: %d likely causes, want 1 to 3", c.name, n)
		}
	}
}

// TestNoNVIDIAGPU: a report that says there is no NVIDIA GPU, names only
// an AMD one or runs on a Mac gets that first, before the CPU-only torch
// it shows (the right build there); a Colab notebook's local Radeon, and a
// laptop's Intel graphics beside an eGPU, do not count.
func TestNoNVIDIAGPU(t *testing.T) {
	notCompiled := "AssertionError: Torch not compiled with CUDA enabled\n"
	cases := []struct {
		name, text, first string
	}{
		{"Mac", notCompiled + "not sure why..? im on an m1 macbook pro if that helps.", "macos_no_cuda"},
		{"AMD card", "The amd graphics card I use displays \"Torch not compiled with CUDA enabled\"", "report_no_nvidia_gpu"},
		{"said", notCompiled + "My GPU is unfortunately not by nvidia, is there an alternative?", "report_no_nvidia_gpu"},
		{"Colab with a local Radeon", "RuntimeError: Found no NVIDIA driver on your system. on every Google Colab notebook\ni have installed gpu GIGABYTE Radeon RX 6600 Eagle 8G", "report_colab_no_gpu_runtime"},
		{"NVIDIA named", notCompiled + "Windows 11, RTX 3060 and Intel UHD Graphics 770", "report_torch_not_compiled_with_cuda"},
		// Intel graphics the person says are the machine's own count; Intel
		// graphics a line lists beside an NVIDIA GPU do not.
		{"Intel, own", notCompiled + "My laptop is an Intel Iris Xe Graphics notebook, what can I do?", "report_no_nvidia_gpu"},
		{"Intel, listed", notCompiled + "Display adapters: Intel(R) UHD Graphics 620", "report_torch_not_compiled_with_cuda"},
		{"Intel, own beside GeForce", notCompiled + "I have Intel UHD Graphics and a GeForce GTX 1650", "report_torch_not_compiled_with_cuda"},
		// Intel graphics named alone in the person's words, with no NVIDIA
		// GPU anywhere, are the machine's; an AMD card by its number; a
		// Colab the person says works is not where it fails.
		{"Intel alone in words", "Intel ARC GPU\nAny way to run it without cuda? " + notCompiled, "report_no_nvidia_gpu"},
		{"Intel alone beside an RTX", "Intel ARC GPU and an RTX 4060\n" + notCompiled, "report_torch_not_compiled_with_cuda"},
		{"AMD by number", notCompiled + "请问是不是不支持AMD显卡？我是AMD 6600XT", "report_no_nvidia_gpu"},
		{"on mac, my M3 Pro", "Torch not compiled with CUDA enabled\n\nI tried to deploy it on mac and it says Torch not compiled with CUDA enabled, my M3 pro does not have cuda.", "macos_no_cuda"},
		{"m1mac", "how to run this on my m1mac without cuda?\n" + notCompiled, "macos_no_cuda"},
		{"a macOS home folder in the traceback", "Traceback (most recent call last):\n  File \"/Users/kim/proj/train.py\", line 12, in <module>\n    model.cuda()\n" + notCompiled, "macos_no_cuda"},
		{"Mac in Chinese", "在苹果电脑上运行报错 " + notCompiled, "macos_no_cuda"},
		{"WSL's Windows home is not a Mac", "Traceback (most recent call last):\n  File \"/mnt/c/Users/kim/proj/train.py\", line 12, in <module>\n" + notCompiled, "report_torch_not_compiled_with_cuda"},
		{"Mac with the M1 chip, in Spanish", "Estoy en una Mac con chip M1 y me sale " + notCompiled, "macos_no_cuda"},
		{"Mac M1, in Japanese", "Mac M1で" + notCompiled, "macos_no_cuda"},
		{"misspelt, Colab worked", notCompiled + "i don't have nivida gpu but with google colab i could use it", "report_no_nvidia_gpu"},
	}
	for _, c := range cases {
		r := diagnoseText(t, c.text)
		if r.Findings[0].ID != c.first {
			t.Errorf("%s: first %s, want %s; findings %v", c.name, r.Findings[0].ID, c.first, findingIDs(r))
		}
	}
}

// TestAlternatives: an error text that usually means its cause, alone,
// keeps its finding first and gets the other causes of the same text named
// after it with the commands that tell them apart; a text that proves its
// cause gets none.
func TestAlternatives(t *testing.T) {
	r := diagnoseText(t, "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx")
	top := topCauses(r, 3)
	if len(top) != 3 || top[0] != gpu.CauseDriverMissing || !slices.Contains(top, gpu.CauseWSLOrContainer) || !slices.Contains(top, gpu.CauseOther) {
		t.Fatalf("first three %v, want driver_missing then wsl_or_container and other; findings %v", top, findingIDs(r))
	}
	for _, f := range r.Findings[1:3] {
		if !strings.HasPrefix(f.ID, "report_likely_") || len(f.Fix) != 1 || f.Fix[0].Command == "" {
			t.Errorf("alternative %s: %+v", f.ID, f)
		}
	}
	r = diagnoseText(t, "RuntimeError: CUDA error: no kernel image is available for execution on the device")
	for _, f := range r.Findings {
		if strings.HasPrefix(f.ID, "report_likely_") {
			t.Errorf("a strong error text got an alternative: %s", f.ID)
		}
	}
}

func findingIDs(r gpu.Report) []string {
	var ids []string
	for _, f := range r.Findings {
		ids = append(ids, f.ID)
	}
	return ids
}

// TestCueNeedles: the cues' patterns, which run only around their
// literals (given or derived), find on every report of the corpus what
// their regexps find on the whole text.
func TestCueNeedles(t *testing.T) {
	texts := []string{"on my AWS EC2 t3.large instance, then a c5.xlarge one", "### TensorFlow version\n\n2.14.0",
		"a g4dn.xlarge, an Azure NC6 and a T4 instance", "the CPU package and the GPU package, both torch and tensorflow-gpu",
		"conda wants a cpu version of pytorch,\nbut I have installed a GPU version pytorch; 装了CPU和GPU两个版本",
		"it always uses the 1080; I want to train only on the 3090; gpu0 is used instead; 指定了第二张卡但还是跑在0号卡; 两张卡",
		"I can't uninstall torch 2.1; it still shows 2.0.1; installed 2.4.1 but it shows 2.0.1; torch 2.10.0+cuda126",
		"a VirtualBox VM with GPU passthrough, passed through the gpu; Basic Display Adapter; no tengo el driver; Treiber nicht installiert; nvidia-smi wird nicht gefunden",
		"device_count() returns 1 with 2 gpus; only uses one gpu; trains on a single gpu; built for torch 2.1; conda list and pip list; vs code runs the global python; uninstalled the nvidia driver; 0.16.0+cpu",
		"with two GPUs, torch uses the GTX 1050 instead of the RTX 3090; the default gpu_device is set to 1; how to choose which GPU to use?",
		"the GPU memory is not released; pytorch support for older GPUs was removed; no code moves the model to the GPU",
		"the GPU has 4GB VRAM and the model is 8GB; Colab with T4 runtime; on Kaggle with a P100; the GPU runtime is enabled",
		"the NVIDIA driver is not getting installed; the nvidia drivers were replaced with others; image 23-12 requires driver version 545 or later",
		"it is only offloading 10/51 layers to GPU; some tensors get placed on cuda:0; I didn't have the CUDA toolkit installed",
		"TF 1.13 requires a minimum compute capability of 6.0; a Jetson Orin Nano with L4T; onnxruntime-gpu 1.20.1 with cuDNN 8.9 and CUDA 12.4; cudnn64_9.dll",
		"the installer never requests nvidia-cudnn-cu12; it can't find cudnn; the linux release binary does not support cuda; I have the newest cuda installed 12.2 but it can't run on cuda; the 560 open driver ignores it, the closed driver works"}
	for _, part := range []string{"tuning", "heldout"} {
		rs, err := corpus.Load(filepath.Join("..", "testdata", "corpus"), part)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			texts = append(texts, r.Text)
		}
	}
	for _, re := range []*catalog.Pattern{hostedRE, cloudRE, gpuVMRE, cpuVMRE, smiWorksRE, cudaNARE, hostOnlyRE, windowsRE,
		tfRE, tfVersionRE, cuda12RE, windowsWSLRE, torchRE, cpuBuildRE, notBuiltRE, paddleRE, jaxRE, jaxCUDARE, ortRE, ortCPURE,
		bothInstallsRE, otherEnvRE, variantRE, smiFailsRE, noDriverRE, afterUpdRE, oldDriverRE, oomRE, selectRE, mismatchRE,
		gpuIdleRE, cudnnWordsRE, tfLibsRE, twoBuildsRE, stuckInstallRE, wrongGPURE, twoGPUsRE, cudaTagRE, vmRE, basicDisplayRE,
		otherCardRE, gpuIDSetRE, chooseGPURE, memoryHeldRE, oldGPUDroppedRE, neverMovedRE, vramRE, modelSizeRE, gpuSessionRE, cpuTierRE,
		driverAbsentRE, driverReplacedRE, driverRequiredRE, offloadRE, placedRE, cudaRuntimeMissingRE, minCCRE, jetsonRE,
		ortGPUVersionRE, cudnnMajorRE, cudaMajorRE, buildNoCUDARE, toolkitOnlyRE, openModuleRE, cudnnLibRE, cudnnAbsentRE} {
		found := 0
		for _, text := range texts {
			low := newReading(&gpu.Facts{Paste: &gpu.PasteFacts{Text: text}}).low
			want := re.Regexp().FindAllStringIndex(low, -1)
			found += len(want)
			if got := re.FindAllIndex(low, -1); !slices.EqualFunc(got, want, slices.Equal) {
				t.Errorf("%.50s… on %.80q: found %v, the regexp %v", re, text, got, want)
			}
		}
		if found == 0 {
			t.Errorf("%.50s… found nothing in the corpus", re)
		}
	}
}

// TestTwoBuildsInWords: a report that says the CPU and the GPU build are
// both installed names two builds side by side first, before the CPU
// build its words also describe, with the commands of its framework.
func TestTwoBuildsInWords(t *testing.T) {
	cases := []struct {
		name, text, command string
	}{
		{"Paddle, Chinese", "服务器上安装了CPU和GPU两个版本的paddle，但似乎是默认使用CPU版本", "paddlepaddle-gpu"},
		{"conda over pip", "conda install wants to install a CPU version pytorch, but I have installed a GPU version pytorch", "download.pytorch.org"},
		{"TensorFlow", "I have the CPU package and the GPU package of tensorflow installed, tf.config.list_physical_devices('GPU') is []", "tensorflow[and-cuda]"},
	}
	for _, c := range cases {
		r := diagnoseText(t, c.text)
		f := r.Findings[0]
		if f.ID != "report_cpu_and_gpu_builds_installed" {
			t.Errorf("%s: first %s, want report_cpu_and_gpu_builds_installed; findings %v", c.name, f.ID, findingIDs(r))
			continue
		}
		if len(f.Fix) < 2 || !strings.Contains(f.Fix[1].Command, c.command) {
			t.Errorf("%s: fix %+v, want a command with %q", c.name, f.Fix, c.command)
		}
	}
	// One build named, not two.
	if r := diagnoseText(t, "I installed the CPU version of pytorch by mistake"); r.Findings[0].ID == "report_cpu_and_gpu_builds_installed" {
		t.Errorf("one CPU build: findings %v", findingIDs(r))
	}
}

// TestPossibleCausesOfATroubleTold: a report that tells of trouble but
// whose facts and words name no cause first still gets, after what the
// doctor says of it, the causes it leans toward, each with the command
// that tells it apart; the first finding stays what it was, and a healthy
// text gets none.
func TestPossibleCausesOfATroubleTold(t *testing.T) {
	rep := diagnoseText(t, "Training my YOLO model on my laptop is very slow, it takes forever per epoch. What should I check to make it use the graphics card?")
	if len(rep.Findings) == 0 || rep.Findings[0].ID != "report_nothing_recognised" {
		t.Fatalf("first finding: %+v", rep.Findings)
	}
	var possible []gpu.Cause
	for _, f := range rep.Findings {
		if !strings.HasPrefix(f.ID, "report_possible_") {
			continue
		}
		possible = append(possible, f.Cause)
		if f.Severity != gpu.SevWarning || len(f.Fix) == 0 || f.Fix[0].Command == "" || len(f.Evidence) == 0 {
			t.Errorf("%s: want a warning with evidence and a command, got %+v", f.ID, f)
		}
	}
	if len(possible) < 2 || len(possible) > 3 || possible[0] != gpu.CauseCPUOnlyBuild {
		t.Errorf("possible causes %v, want 2 or 3, the CPU-only build first", possible)
	}
	if got := topCauses(rep, 3); len(got) != 3 {
		t.Errorf("first three causes %v, want three", got)
	}
	healthy := diagnoseText(t, "Training my YOLO model on my laptop at 12 it/s per epoch with the graphics card, all good, thanks for the great tool.")
	for _, f := range healthy.Findings {
		if strings.HasPrefix(f.ID, "report_possible_") {
			t.Errorf("healthy text got %s", f.ID)
		}
	}
}

// TestDifferentialFixNotTwice: the first likely cause's command is not
// repeated in its fix.
func TestDifferentialFixNotTwice(t *testing.T) {
	rep := diagnoseText(t, "After updating, stable diffusion webui is much slower than before and uses the CPU, no idea what happened.")
	if len(rep.Findings) == 0 || !strings.HasPrefix(rep.Findings[0].ID, "report_likely_") {
		t.Fatalf("first finding: %+v", rep.Findings)
	}
	seen := map[string]bool{}
	for _, st := range rep.Findings[0].Fix {
		if st.Command != "" && seen[st.Command] {
			t.Errorf("command twice: %s", st.Command)
		}
		seen[st.Command] = true
	}
}

// TestBuildCheckPerFramework: the command that tells a CPU build apart is
// the one for the program the report is about, not torch's for all.
func TestBuildCheckPerFramework(t *testing.T) {
	cases := []struct{ text, want string }{
		{"ollama runs on the CPU only, my RTX 3060 is not used", "ollama ps"},
		{"llama-cpp-python does not offload to the GPU, everything runs on the CPU", "llama_supports_gpu_offload"},
		{"koboldcpp uses the cpu, not my 4080", "--list-devices"},
		{"PaddleOCR runs on the CPU", "is_compiled_with_cuda"},
		{"torch with ollama embeddings runs on the CPU", "torch.version.cuda"},
	}
	for _, c := range cases {
		f := paste.Parse(c.text, time.Now())
		j := &judge{f: f, m: mustMatrix(t)}
		if got := j.buildCheck(j.reading()).Command; !strings.Contains(got, c.want) {
			t.Errorf("%q: command %q, want one with %q", c.text, got, c.want)
		}
	}
}

// TestTorchCapabilityRange: torch's "Found GPU0 … which is of cuda
// capability X" warning read with the range beside it: a GPU above the
// range is called too new, not too old, and one above it within the same
// major version (GB10, 12.1, against kernels up to 12.0) runs them, so the
// warning proves nothing.
func TestTorchCapabilityRange(t *testing.T) {
	warn := func(name, cc, lo, hi string) string {
		return "UserWarning:\n    Found GPU0 " + name + " which is of cuda capability " + cc + ".\n    Minimum and Maximum cuda capability supported by this version of PyTorch is\n    (" + lo + ") - (" + hi + ")\n"
	}
	find := func(rep gpu.Report) *gpu.Finding {
		for i, f := range rep.Findings {
			if f.ID == "report_torch_gpu_too_old" {
				return &rep.Findings[i]
			}
		}
		return nil
	}
	gb10 := diagnoseText(t, "Is this expected?\n"+warn("NVIDIA GB10", "12.1", "8.0", "12.0"))
	if f := find(gb10); f != nil {
		t.Errorf("GB10 against kernels up to 12.0: %q, want no such finding", f.Title)
	}
	if top := topCauses(gb10, 3); slices.Contains(top, gpu.CauseArchUnsupported) {
		t.Errorf("GB10 against kernels up to 12.0: causes %v, want no arch_unsupported (the build's 12.0 kernels run on 12.1)", top)
	}
	f := find(diagnoseText(t, warn("NVIDIA GeForce RTX 5090", "12.0", "5.0", "9.0")))
	if f == nil || !strings.Contains(f.Title, "newer than the build's kernels (up to 9.0)") {
		t.Errorf("RTX 5090 against kernels up to 9.0: %+v, want the GPU called newer than the build", f)
	}
	if f := find(diagnoseText(t, warn("NVIDIA GeForce GTX 1080", "6.1", "7.5", "12.0"))); f == nil || f.Cause != gpu.CauseArchUnsupported {
		t.Errorf("GTX 1080 against kernels from 7.5: %+v, want arch_unsupported", f)
	}
}
