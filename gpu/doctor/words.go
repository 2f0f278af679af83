package doctor

import (
	_ "embed"
	"regexp"
	"strings"
	"sync"

	"gpuwizard/gpu"
	"gpuwizard/gpu/internal/wordmodel"
)

// wordModelFile is the word model, generated from the tuning part of the
// corpus by `go run ./gpu/internal/wordmodel/gen` (TestWordModelReproducible
// checks that it is what the generator writes).
//
//go:embed wordmodel.txt
var wordModelFile []byte

var embeddedWordModel = sync.OnceValue(func() *wordmodel.Model {
	m, err := wordmodel.Parse(wordModelFile)
	if err != nil {
		panic(err)
	}
	return m
})

// wordSettings say when the word fallback speaks.
type wordSettings struct {
	on        bool
	threshold float64 // the least posterior probability of the cause
	minWords  int     // the least number of the model's features the report holds
	trouble   bool    // the report must say something failed (troubleWords)
	// weakOther: the fallback speaks also beside findings that name no
	// cause (weak, cause other: "PyTorch sees no GPU, and the report does
	// not say why"), and takes them in as its symptoms.
	weakOther bool
	model     func() *wordmodel.Model
}

// words are the fallback's settings. The threshold and the weak-other
// choice were chosen by 3 times 5-fold cross-validation of the whole doctor
// on the tuning part of the corpus (go test -run
// TestWordFallbackCrossValidation -v ./gpu/doctor -args -wordcv): the best
// score, and among equals the highest threshold. The trouble words are not
// chosen by score (they cost 3 of 1338 fold-reports): without them, pieces
// of healthy reports get a warning (TestWordFallbackQuietOnHealthyPieces).
// minWords never changed a score; it is a floor.
var words = wordSettings{on: true, threshold: 0.5, minWords: 5, trouble: true, weakOther: false, model: embeddedWordModel}

// causeWords say a cause in words, for a finding's title.
var causeWords = map[gpu.Cause]string{
	gpu.CauseDriverMissing:        "an NVIDIA driver that is missing or not loaded",
	gpu.CauseWSLOrContainer:       "a container, WSL or hosted runtime that does not get the GPU",
	gpu.CauseDriverTooOld:         "a driver too old for the framework's CUDA",
	gpu.CauseCPUOnlyBuild:         "a CPU-only build of the framework",
	gpu.CauseArchUnsupported:      "a GPU the framework's build has no kernels for",
	gpu.CauseConflictingInstalls:  "clashing installs of the framework or CUDA",
	gpu.CauseCudnnProblem:         "a missing or mismatched cuDNN",
	gpu.CauseTFGPULibs:            "TensorFlow without the CUDA libraries it needs",
	gpu.CauseDeviceSelection:      "a GPU hidden or wrongly selected (CUDA_VISIBLE_DEVICES, device index)",
	gpu.CauseOutOfMemory:          "GPU memory running out",
	gpu.CauseDeviceMismatchInCode: "tensors on different devices in the code",
}

// troubleWords say that something failed, as whole words; a report
// without any is not a report of a problem (a healthy nvidia-smi table, a
// pip list), and the fallback stays silent on it.
var troubleWords = []string{"error", "failed", "fails", "failure", "cannot", "can't", "can not", "couldn't", "could not",
	"unable", "not able to", "not found", "not available", "not detected", "not recognized", "not recognised", "not working", "not work",
	"doesn't", "does not", "isn't", "won't", "didn't", "did not", "exception", "traceback", "problem", "issue", "issues", "wrong",
	"crash", "crashed", "crashes", "segmentation fault", "segfault", "core dumped", "not runable", "not runnable", "not running", "mismatch", "missing", "invalid", "out of memory", "available: false", "available() false",
	"available()) false", "returns false", "returned false", "return false", "is false", "only cpu", "cpu only", "uses cpu",
	"using cpu", "uses the cpu", "using the cpu", "runs on cpu", "on the cpu", "instead of gpu", "instead of the gpu",
	"no cuda", "no gpu", "no nvidia", "no device", "no compatible gpu", "no compatible gpus",
	// Chinese, Japanese, Korean: error, failed, cannot, not detected,
	// not used, only the CPU, through or on the CPU.
	"错误", "报错", "失败", "无法", "不能", "不了", "检测不到", "识别不到", "找不到", "没有使用", "没用上", "只用cpu", "用的是cpu",
	"通过cpu", "使用cpu", "在cpu上", "跑在cpu", "cpuで動", "cpuのみ", "cpu로", "cpu만",
	"返回false", "返回 false", "为false", "是false", "不可用", "用不了", "stopped working", "stops working",
	"gives none", "returns none", "prints none", "only has cpuexecutionprovider", "says false", "shows false", "prints false", "gives false",
	"isnt", "doesnt", "wont", "cant", "didnt",
	// Spanish, Portuguese, Russian: returns False, does not detect or
	// see, does not work, not available, error.
	"devuelve false", "retorna false", "возвращает false", "no detecta", "não detecta", "не видит", "не находит",
	"no funciona", "não funciona", "не работает", "no está disponible", "não está disponível", "недоступ", "erro", "ошибка",
	"no reconoce", "não reconhece", "인식하지", "못합니다", "찾을 수 없", "no se encuentra", "não encontrado", "не найден",
	"nicht gefunden", "introuvable", "no puede", "no carga", "動かなく", "使えなく", "작동하지", "不能用", "掉了", "没有效果", "没效果", "没有任何效果", "没反应", "没有反应",
	// A device query that answers the CPU, or CUDA off.
	"says cpu", "returns cpu", "shows cpu", "gives cpu", "only lists the cpu", "only lists cpu", "without cuda", "cuda false",
	"→ false", "-> false", "=> false", "+cpu", "not listed", "isn't listed", "not showing", "gpu unused", "gpu is unused",
	"gpu not used", "gpu is not used", "gpu isn't used", "only shows cpu", "only shows the cpu", "only shows cpudevice",
	"エラー", "動作しない", "動作しません", "できない", "認識しない", "認識されない", "使えない", "認識されません", "認識しません", "認識できない", "認識できません",
	"できません", "使えません", "動かない", "動きません", "見つかりません", "没有用上", "用不上", "识别不了", "不识别", "检测不了", "falseになり", "falseになる", "falseが返", "오류", "에러", "실패", "인식", "안됩니다", "안 됩니다",
	// The wrong GPU, an install that does not take, a driver not loaded.
	"always uses", "always use cpu", "always on cpu", "cpu not gpu", "cpu, not gpu", "still uses", "still runs", "still shows", "still loads", "does nothing", "not loaded", "unavailable",
	"not installed", "wrong gpu", "不生效", "无效", "还是跑在", "siempre usa", "only uses one", "only one gpu", "single gpu",
	"stays at 0", "falls back", "fell back", "fall back", "is on cpu", "is on the cpu", "are on cpu", "are on the cpu", "goes to cpu",
	"goes to the cpu", "happens on cpu", "happens on the cpu",
	// Slowness, an idle GPU, a CPU-only device list, and Python's
	// exceptions (whose names hold "error" inside a word).
	"slow", "slowly", "takes forever", "很慢", "非常慢", "太慢", "遅い", "느려", "muy lento", "muito lento", "медленно",
	"usage 0%", "usage is 0%", "usage at 0%", "0% usage", "utilization 0%", "utilization is 0%", "0% utilization", "gpu at 0%", "gpu is at 0%",
	"only has cpu", "only have cpu", "only the cpu", "want to use cuda", "want to use the gpu", "no devices found", "no device found",
	"nouveau is loaded", "nouveau loaded", "見えない", "見えません", "看不到", "看不见", "보이지 않",
	"runtimeerror", "importerror", "oserror", "assertionerror", "valueerror", "typeerror", "attributeerror", "modulenotfounderror",
	"notimplementederror", "outofmemoryerror", "cudaerror",
	"oom", "complains", "still occupied", "仍在占用", "没有被清理", "没有被释放", "mismatches the env", "doesn't match the env", "not released", "not freed", "显存不释放", "too old", "没有用gpu", "没用gpu", "没有使用gpu", "не использует", "cpuexecutionprovider only", "占用显存", "显存被占用", "100% cpu", "['cpuexecutionprovider']", "still only", "only uses cpu", "only uses the cpu", "is cpu", "does not fit", "doesn't fit", "cpu/gpu", "а не процессор", "вместо процессора", "而不是cpu", "而不是 cpu", "en lugar de la cpu", "em vez da cpu", "statt der cpu", "au lieu du cpu", "cpu wheel", "cpu-only wheel", "the cpu version", "the cpu build",
	// A kernel module that does not load; which GPU to train on, asked.
	"not load", "doesn't load", "does not load", "fails to load", "failed to load", "back to nouveau",
	"which gpu", "assign gpu", "assign the gpu", "choose the gpu", "select the gpu", "specify the gpu", "set the gpu",
	"want to use gpu", "want to set gpu", "want to train on gpu",
	// An import that finds another copy; a setting that asks for the CPU.
	"picks the other", "picks the wrong", "loads the wrong", "instead of my", "use_gpu: false", "use_cuda: false", "device: cpu",
	// Nothing where something should be; a GPU or CUDA to get working.
	"shows nothing", "returns nothing", "prints nothing", "get cuda working", "get the gpu working", "get gpu working",
	"make cuda work", "make the gpu work", "always runs", "always trains", "always picks", "still trains", "still picks",
	"did not install", "didn't install", "haven't installed", "gives the cpu one", "is the cpu one",
	// Not compatible or supported; an empty device list; is_available
	// False written without its parentheses; another kernel or
	// environment; the CPU used, in Chinese, spaced.
	"not compatible", "incompatible", "not supported", "unsupported", "not currently supported", "not yet supported",
	"isn't supported", "is not currently supported", "no support for", "is empty", "returns []", "gives []", "prints []",
	"empty list", "available false", "is_available false", "only shows cpuexecutionprovider", "only cpuexecutionprovider",
	"different kernel", "wrong kernel", "another kernel", "different environment", "wrong environment",
	"是 false", "为 false", "用的cpu", "一直用cpu", "都是cpu", "只能用cpu", "走的cpu",
	// More languages: cannot use, not found, does not work (Japanese),
	// no longer works (German), returns cpu, still the CPU build, is
	// ignored (Chinese, English), the GPU in Device Manager.
	"別のgpu", "nicht mehr", "返回 cpu", "返回cpu",
	"nothing works", "never used", "without an accelerator", "without a gpu", "no accelerator", "without accelerator",
	"quota is used up", "quota exceeded", "usage limits", "no usa la gpu", "não usa a gpu",
	"different interpreter", "wrong interpreter", "another interpreter", "different python", "wrong python", "another python",
	"还是cpu", "还是 cpu", "忘了装", "不支持", "不兼容", "在 cpu 上", "运行在 cpu", "跑在 cpu", "运行在cpu", "cpu 上推理", "cpu上推理", "非対応", "지원하지", "не могу", "не используе", "не поддерж", "is ignored", "are ignored", "gets ignored", "被忽略", "yellow exclamation", "code 43", "cpu版", "cpu 版", "not used",
	// German and French: not recognised, does not work, returns False,
	// error, not available.
	"nicht erkannt", "funktioniert nicht", "gibt false", "fehler", "nicht verfügbar",
	"renvoie false", "retourne false", "ne fonctionne pas", "ne marche pas", "pas détecté", "pas reconnu", "erreur", "non disponible"}

// hasTrouble: the text says that something failed. What tools print on
// a working machine says nothing: collect_env's "Could not collect" and
// "Is XPU available: False", nvidia-smi -q's error counters.
func hasTrouble(text string) string {
	if len(text) > wordmodel.MaxBytes {
		if w := hasTrouble(text[:wordmodel.MaxBytes/2]); w != "" {
			return w
		}
		return hasTrouble(text[len(text)-wordmodel.MaxBytes/2:])
	}
	low := strings.ReplaceAll(strings.ToLower(text), "could not collect", "")
	if strings.Contains(low, "  : ") || strings.Contains(low, "available: false") {
		low = dropToolNoise(low)
	}
	for _, w := range troubleWords {
		if gpu.AnyAt(low, w, func(i int) bool {
			// A word is whole between non-letters; Chinese, Japanese and
			// Korean words abut Latin ones without a space (检测不到GPU).
			whole := (i == 0 || !isLetter(w[0]) || !isLetter(low[i-1])) && (i+len(w) == len(low) || !isLetter(w[len(w)-1]) || !isLetter(low[i+len(w)]))
			return whole && !(w == "which gpu" && shopping(low[i:min(len(low), i+questionSpan)]))
		}) {
			return w
		}
	}
	if falseAnswered(low) {
		return "false"
	}
	return gpuQuestion(low)
}

// shopping: a "which GPU" that asks what to buy ("which GPU should I buy,
// a 4090 or two 3090s?") is advice sought, not a GPU that misbehaves.
func shopping(after string) bool {
	if e := strings.IndexAny(after, "\n?"); e >= 0 {
		after = after[:e]
	}
	return adviceSought(after)
}

// adviceWords mark a question about what to buy or choose, not trouble.
var adviceWords = []string{"buy", "purchase", "recommend", "worth", "upgrade to", "is better", "better for", "is best", "is faster",
	"best gpu", "get for", "should i get", "which card", "which gpu is", "买哪", "推荐"}

// adviceSought: the lower-cased text asks what to buy or choose.
func adviceSought(low string) bool { return containsAny(low, adviceWords...) }

// questionSpan bounds how far past a question's opening words, or a CUDA
// query, the next words are looked for: a line of a paste may be long, and
// each occurrence must cost little.
const questionSpan = 200

// gpuQuestions open a question; gpuQuestion asks one of them about the GPU.
var gpuQuestions = []string{"how can i", "how do i", "how to", "how can we", "how do we", "is there a way", "is there any way",
	"any way to", "is it possible", "can i use", "can i get", "can i make", "can we use", "can we pass", "can i pass"}

// gpuQuestion: a line asks how to get the GPU used ("How can I enable the
// GPU in docker compose?", "How to use GPU on Colab?"): the question of a
// report that says nothing failed yet. It returns the question's opening
// words, or "".
func gpuQuestion(low string) string {
	for _, q := range gpuQuestions {
		if gpu.AnyAt(low, q, func(i int) bool {
			line := low[i:min(len(low), i+questionSpan)]
			if e := strings.IndexAny(line, "\n?"); e >= 0 {
				line = line[:e]
			}
			return strings.Contains(line, "gpu") || strings.Contains(line, "cuda") || strings.Contains(line, "graphics card")
		}) {
			return q
		}
	}
	return ""
}

// falseAnswered: a CUDA query (is_available(), is_built_with_cuda(),
// is_gpu_available()) answered by a line that says only False, as a
// terminal or a notebook prints it (">>> torch.cuda.is_available()" then
// "False").
func falseAnswered(low string) bool {
	for at := 0; ; {
		i := strings.Index(low[at:], "available()")
		if j := strings.Index(low[at:], "with_cuda()"); j >= 0 && (i < 0 || j < i) {
			i = j
		}
		if i < 0 {
			return false
		}
		i += at
		rest := low[i:min(len(low), i+questionSpan)]
		nl := strings.IndexByte(rest, '\n')
		if nl < 0 {
			at = i + 1
			continue
		}
		next := rest[nl+1:]
		if e := strings.IndexByte(next, '\n'); e >= 0 {
			next = next[:e]
		}
		next = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(next), "out[1]:"))
		if next == "false" || strings.HasPrefix(next, "false ") {
			return true
		}
		at = i + 1
	}
}

// toolNoiseRE are the lines of a tool's output that hold a trouble word
// on every machine: nvidia-smi -q's aligned "key   : value" lines (its
// error counters, "Remapping Failure Occurred : No"), collect_env's other
// devices (XPU, XNNPACK).
var toolNoiseRE = regexp.MustCompile(`^[ \t]*(?:[a-z][a-z0-9 ()/._-]*?[ \t]{2,}:.*|is (?:xpu|xnnpack|mps|rocm|hip) available:[ \t]*false.*)$`)

// dropToolNoise empties the lines of low that toolNoiseRE matches, trying
// it only on lines with a colon (one pattern over a long paste cost more
// than the rest of the judging).
func dropToolNoise(low string) string {
	var b strings.Builder
	b.Grow(len(low))
	for line := range strings.Lines(low) {
		body := strings.TrimSuffix(line, "\n")
		if strings.Contains(body, ":") && toolNoiseRE.MatchString(body) {
			b.WriteString(line[len(body):])
			continue
		}
		b.WriteString(line)
	}
	return b.String()
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c == '_' }

func troubleNote(w string) string {
	if w == "" {
		return ""
	}
	return `; and it says "` + w + `"`
}
