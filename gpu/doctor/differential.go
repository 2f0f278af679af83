package doctor

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"gpuwizard/gpu"
	"gpuwizard/gpu/catalog"
)

// The differential is the doctor's answer to a thin report: one in which
// no error text or fact proves a cause (no finding of medium or strong
// evidence), but which says that the GPU is not used. It weighs what the
// report does say (cues.go: the GPU model and its architecture against
// the matrix, the system, a container or notebook service, the framework
// and its build, what was tried) with the words of the report (the word
// model), and names the two or three likely causes, most likely first,
// each with the one command on that machine that tells them apart.

// differentialSettings say how the evidence is weighed.
type differentialSettings struct {
	prior     map[gpu.Cause]float64 // what a report that says nothing else most often is
	wordScale float64               // what the word model's posterior of a cause adds to it (times the posterior)
	weakHit   float64               // a weak error text or finding, for its own cause
	symptomOf float64               // a weak error text, for each other cause its signature says produces it
	capCause  float64               // the most the cues can add to one cause
	least     float64               // the least score a cause needs to be named first
	leastNext float64               // the least score a cause needs to be named after the first
	alsoWords float64               // the word posterior from which the words speak for a cause other than their best
	margin    float64               // how far below the first another may be, and still named
}

var differential = differentialSettings{
	prior:     map[gpu.Cause]float64{gpu.CauseCPUOnlyBuild: 0.3, gpu.CauseDriverMissing: 0.2},
	wordScale: 1.5, weakHit: 1, symptomOf: 0.3, capCause: 6, least: 1, leastNext: 0.1, alsoWords: 0.02, margin: 3,
}

// likely is one cause the differential names.
type likely struct {
	cause   gpu.Cause
	score   float64
	because []string
}

// runDifferential names the likely causes of a thin report: one that
// shows the GPU failing (an error text too weak to decide, torch without a
// GPU, a framework on the CPU), or that says in words something failed.
// What a report shows of the machine beside (nvidia-smi, a pip list) never
// keeps it from running: more facts may not give a vaguer answer.
func (j *judge) runDifferential() {
	p := j.f.Paste
	if p == nil || p.Text == "" {
		return
	}
	trouble := hasTrouble(p.Text)
	if trouble == "" {
		trouble = j.troubleSaid()
	}
	worded := trouble != "" // in words that say something failed, not only a person telling of their machine
	if trouble == "" {
		trouble = toldTrouble(p.Text)
	}
	if !j.thin() {
		j.alternatives(trouble)
		return
	}
	weak := j.weakFindings()
	if len(weak) == 0 && !j.gpuFailed() && trouble == "" {
		return
	}
	r := j.reading()
	ranked := j.weigh(r, weak, trouble)
	var named []*likely
	for _, l := range ranked {
		least := differential.least
		if len(named) > 0 {
			least = differential.leastNext
		}
		if len(named) == 3 || l.score < least || l.score < ranked[0].score-differential.margin {
			break
		}
		if len(l.because) == 0 {
			continue // nothing in the report speaks for it
		}
		named = append(named, l)
	}
	if len(named) == 0 && ranked[0].cause == gpu.CauseCPUOnlyBuild && ranked[0].score > 0 && j.frameworkNamed(r) {
		// A framework that does not use the GPU, a problem told, and
		// nothing that tells causes apart: its CPU build is the most
		// common answer; the commands below tell the others apart.
		named = append(named, &likely{cause: ranked[0].cause, score: ranked[0].score,
			because: []string{"the report tells of a framework that does not use the GPU and shows nothing that tells causes apart: its CPU-only build is the most common cause of such a report"}})
	}
	if len(named) == 0 && (worded || len(weak) > 0 || j.gpuFailed()) {
		j.emitPossible(r, ranked)
		return
	}
	if len(named) > 0 {
		ruledOut := ruledOutOf(ranked)
		named = withLeaning(named, ranked, 3)
		named = withLookalikes(named, 3, ruledOut)
		j.emitDifferential(r, named, weak, ruledOut)
	}
}

// ruledOutOf: the causes the report's facts rule out (scored below zero).
func ruledOutOf(ranked []*likely) map[gpu.Cause]bool {
	out := map[gpu.Cause]bool{}
	for _, l := range ranked {
		out[l.cause] = l.score < 0
	}
	return out
}

// emitPossible names, for a report that tells of trouble but whose facts
// and words speak for no cause enough to name it first, the causes it
// leans toward, after whatever else the doctor says of it: what to check
// first, each with its command, not a diagnosis.
func (j *judge) emitPossible(r *reading, ranked []*likely) {
	named := withLeaning(nil, ranked, 3)
	for k, l := range named {
		j.out = append(j.out, scored{Finding: gpu.Finding{ID: "report_possible_" + string(l.cause), Cause: l.cause, Severity: gpu.SevWarning,
			Title:    "Possibly " + alternativeWords(l.cause) + " (" + string(l.cause) + "): the report says too little to tell; check this first",
			Evidence: l.because, Fix: []gpu.Step{j.tellApart(r, l.cause)}}, weight: catalog.Weak, order: -1 - k})
	}
}

// withLeaning fills the named causes up to n with those the report leans
// toward only a little (its words or cues give them more than their prior,
// too little to be named on their own), most first: on a report that
// says little, the words' faint order beats a fixed list of lookalikes
// (measured on the corpus with emitPossible below: top-3 of the held-out
// part 381 → 386 of 436, of the tuning part in 5-fold cross-validation
// with the word model retrained per fold 97.8 → 98.3 %).
func withLeaning(named, ranked []*likely, n int) []*likely {
	for _, l := range ranked {
		if len(named) >= n {
			break
		}
		if l.score <= differential.prior[l.cause] || slices.ContainsFunc(named, func(x *likely) bool { return x.cause == l.cause }) {
			continue
		}
		because := slices.Clone(l.because)
		if len(because) == 0 {
			because = []string{"the report's words lean slightly toward it, more than toward the causes not named"}
		}
		named = append(named, &likely{cause: l.cause, score: l.score, because: because})
	}
	return named
}

// withLookalikes fills the named causes up to n with the first one's
// lookalikes that the report's facts do not rule out.
func withLookalikes(named []*likely, n int, ruledOut map[gpu.Cause]bool) []*likely {
	for _, la := range lookalikes[named[0].cause] {
		if len(named) >= n {
			break
		}
		if ruledOut[la.cause] || slices.ContainsFunc(named, func(l *likely) bool { return l.cause == la.cause }) {
			continue
		}
		named = append(named, &likely{cause: la.cause, because: []string{"it looks the same from outside: " + la.why}})
	}
	return named
}

// troubleSaid: a problem the report states in words that no trouble word
// catches ("the script always runs on cuda:0 even though I pass --device
// 1", "pip installed torch into the other one"): the words of a cue that
// says something is wrong, quoted.
func (j *judge) troubleSaid() string {
	r := j.reading()
	for _, re := range []*catalog.Pattern{wrongGPURE, otherCardRE, stuckInstallRE, cpuAskedRE, boxBlindRE, bothInstallsRE, bothInstalls2RE, openVsClosedRE, neverMovedRE, chooseGPURE, driverReplacedRE, oomRE, driverAbsentRE, cpuBuildRE} {
		if q := r.quote(re); q != "" {
			return q
		}
	}
	return ""
}

// weigh scores every cause: its prior, the cues of the report, the weak
// findings so far, and the words; best first.
func (j *judge) weigh(r *reading, weak []int, trouble string) []*likely {
	scores := map[gpu.Cause]*likely{}
	for _, c := range gpu.Causes {
		scores[c] = &likely{cause: c, score: differential.prior[c]}
	}
	added := map[gpu.Cause]float64{}
	for _, c := range j.cues(r) {
		l := scores[c.cause]
		w := c.weight
		if w > 0 {
			w = min(w, differential.capCause-added[c.cause])
			added[c.cause] += w
			l.because = append(l.because, c.because)
		}
		l.score += w
	}
	for _, i := range weak {
		f := j.out[i]
		if f.Cause == gpu.CauseOther {
			continue
		}
		scores[f.Cause].score += differential.weakHit
		scores[f.Cause].because = append(scores[f.Cause].because, "the report shows "+strings.TrimPrefix(f.Title, "The report shows "))
		// A symptom speaks a little for each cause that produces it.
		if s, ok := catalog.Default().ByID(strings.TrimPrefix(f.ID, "report_")); ok {
			for _, c := range s.SymptomOf {
				if l := scores[gpu.Cause(c)]; l != nil && l.cause != f.Cause {
					l.score += differential.symptomOf
					l.because = append(l.because, "the report's error text ("+strings.TrimPrefix(f.Title, "The report shows ")+") also comes from "+alternativeWords(l.cause))
				}
			}
		}
	}
	j.wordCues(scores, trouble)
	ranked := make([]*likely, 0, len(scores))
	for _, l := range scores {
		ranked = append(ranked, l)
	}
	sort.Slice(ranked, func(a, b int) bool {
		if ranked[a].score != ranked[b].score {
			return ranked[a].score > ranked[b].score
		}
		return ranked[a].cause.Rank() < ranked[b].cause.Rank()
	})
	return ranked
}

// differentialFix is the fix of cause c for the report, in PowerShell
// when its words say it is from Windows (the facts need not: a thin report
// rarely shows the system as a tool prints it).
func (j *judge) differentialFix(r *reading, c gpu.Cause) []gpu.Step {
	if !j.windows() && j.windowsSaid(r) {
		if steps := j.windowsCauseFix(gpu.SignatureHit{Cause: c}); steps != nil {
			return steps
		}
	}
	return j.causeFix(gpu.SignatureHit{Cause: c})
}

// alternatives names, after a first finding that rests on medium evidence
// (an error text that usually means its cause, but not always), the one or
// two other causes the report's facts and that text leave open, each with
// the command that tells them apart. A cause that facts or a strong error
// text prove needs none.
func (j *judge) alternatives(trouble string) {
	top := -1
	for i, f := range j.out {
		if f.Severity != gpu.SevError && f.Severity != gpu.SevWarning {
			continue
		}
		if top < 0 || tier(f) < tier(j.out[top]) {
			top = i
		}
	}
	if top < 0 || j.out[top].weight != catalog.Medium || trouble == "" && !j.gpuFailed() {
		return
	}
	first := j.out[top]
	r := j.reading()
	ranked := j.weigh(r, nil, trouble)
	// The error text's own other causes (its signature's symptom_of).
	if s, ok := catalog.Default().ByID(strings.TrimPrefix(first.ID, "report_")); ok {
		for _, c := range s.SymptomOf {
			for _, l := range ranked {
				if l.cause == gpu.Cause(c) {
					l.score += differential.weakHit
					l.because = append(l.because, "the same error text also comes from "+alternativeWords(l.cause))
				}
			}
		}
		sort.SliceStable(ranked, func(a, b int) bool { return ranked[a].score > ranked[b].score })
	}
	named := []*likely{{cause: first.Cause}}
	for _, l := range ranked {
		if len(named) == 3 || l.score < differential.leastNext {
			break
		}
		if l.cause != first.Cause && len(l.because) > 0 {
			named = append(named, l)
		}
	}
	named = withLeaning(named, ranked, 3)
	named = withLookalikes(named, 3, ruledOutOf(ranked))
	for k, l := range named[1:] {
		j.out = append(j.out, scored{Finding: gpu.Finding{ID: "report_likely_" + string(l.cause), Cause: l.cause, Severity: gpu.SevWarning,
			Title:    "Or " + alternativeWords(l.cause) + " (" + string(l.cause) + ")",
			Evidence: l.because, Fix: []gpu.Step{j.tellApart(r, l.cause)}}, weight: catalog.Weak, order: k + 2})
	}
}

// alternativeWords says a cause in words; "other", among the likely
// causes, is a machine without an NVIDIA GPU.
func alternativeWords(c gpu.Cause) string {
	if c == gpu.CauseOther {
		return "a machine without an NVIDIA GPU at all"
	}
	return causeWords[c]
}

// thin: no error or warning rests on more than weak evidence.
func (j *judge) thin() bool {
	for _, f := range j.out {
		if (f.Severity == gpu.SevError || f.Severity == gpu.SevWarning) && f.weight > catalog.Weak {
			return false
		}
	}
	return true
}

// weakFindings are the indexes of the weak errors and warnings so far.
func (j *judge) weakFindings() []int {
	var out []int
	for i, f := range j.out {
		if f.Severity == gpu.SevError || f.Severity == gpu.SevWarning {
			out = append(out, i)
		}
	}
	return out
}

// wordCues adds the word model's view: each cause's posterior, scaled, so
// that words decide a report with nothing else in it and lean on a close
// call, but never outweigh a cue of the report's facts. The cause the
// words point to gets them as evidence.
func (j *judge) wordCues(scores map[gpu.Cause]*likely, trouble string) {
	if !words.on || words.trouble && trouble == "" {
		return
	}
	m := words.model()
	post, features := m.Posteriors(j.f.Paste.Text)
	if features < words.minWords || len(post) == 0 {
		return
	}
	pr := m.Predict(j.f.Paste.Text)
	boxed := j.boxSaid(j.reading())
	for i, c := range m.Classes {
		if gpu.Cause(c) == gpu.CauseWSLOrContainer && !boxed {
			continue // words alone never put a machine in a box the report does not name
		}
		if l := scores[gpu.Cause(c)]; l != nil && l.cause != gpu.CauseOther {
			l.score += differential.wordScale * post[i]
			if c != pr.Cause && post[i] >= differential.alsoWords && len(l.because) == 0 {
				l.because = append(l.because, fmt.Sprintf("the report's words also fit reports of %s (posterior %.2f, not a calibrated probability)%s", c, post[i], troubleNote(trouble)))
			}
		}
	}
	l := scores[gpu.Cause(pr.Cause)]
	if l != nil && l.cause == gpu.CauseWSLOrContainer && !boxed {
		return
	}
	if pr.Confidence < words.threshold || len(pr.Words) == 0 || l == nil || l.cause == gpu.CauseOther {
		return
	}
	quoted := make([]string, len(pr.Words))
	for i, w := range pr.Words {
		quoted[i] = `"` + w + `"`
	}
	l.because = append(l.because, fmt.Sprintf("words: %s%s (the words of reports of %s: posterior %.2f from %d of the word model's features, not a calibrated probability)",
		strings.Join(quoted, ", "), troubleNote(trouble), pr.Cause, pr.Confidence, pr.Features))
}

// emitDifferential turns the named causes into findings: the first with
// its fix, the others with what would show them; each with the command
// that tells them apart. The weak findings so far become their evidence;
// one of a cause that the report's facts rule out (its score below zero)
// is a symptom of the first.
func (j *judge) emitDifferential(r *reading, named []*likely, weak []int, ruledOut map[gpu.Cause]bool) {
	var fds []scored
	for k, l := range named {
		tell := j.tellApart(r, l.cause)
		fd := gpu.Finding{ID: "report_likely_" + string(l.cause), Cause: l.cause, Severity: gpu.SevWarning, Evidence: l.because}
		if k == 0 {
			fd.Title = "Most likely " + causeWords[l.cause] + " (" + string(l.cause) + "): the report shows no error text that proves a cause; this is what its facts and words point to"
			if len(named) > 1 {
				fd.Title = "Most likely " + causeWords[l.cause] + " (" + string(l.cause) + "), or " + alternatives(named[1:]) + ": the report shows no error text that proves a cause"
			}
			fd.Fix = []gpu.Step{tell}
			for _, st := range j.differentialFix(r, l.cause) {
				if st.Command == "" || st.Command != tell.Command {
					fd.Fix = append(fd.Fix, st)
				}
			}
		} else {
			fd.Title = "Or " + causeWords[l.cause] + " (" + string(l.cause) + ")"
			fd.Fix = []gpu.Step{tell}
		}
		fds = append(fds, scored{Finding: fd, weight: catalog.Weak, order: k + 1})
	}
	// The weak findings so far are symptoms: of the cause they name when
	// it is among these, else of the first.
	for k := len(weak) - 1; k >= 0; k-- {
		s := j.out[weak[k]]
		at := 0
		for i, fd := range fds {
			if fd.Cause == s.Cause {
				at = i
			}
		}
		if at == 0 && s.Cause != named[0].cause && s.Cause != gpu.CauseOther && !ruledOut[s.Cause] {
			continue // a cause of its own that the differential does not name: it stays
		}
		fd := &fds[at].Finding
		fd.Evidence = append(fd.Evidence, "the symptom: "+s.Title)
		fd.Evidence = append(fd.Evidence, s.Evidence...)
		for _, st := range s.Fix {
			if !slices.Contains(fd.Fix, st) && at == 0 {
				fd.Fix = append(fd.Fix, st)
			}
		}
		j.out = slices.Delete(j.out, weak[k], weak[k]+1)
	}
	j.out = append(j.out, fds...)
}

func alternatives(ls []*likely) string {
	var ws []string
	for _, l := range ls {
		ws = append(ws, string(l.cause))
	}
	return strings.Join(ws, " or ")
}

// tellApart is the one command that shows whether the cause is this one,
// on that machine, and what its output says.
func (j *judge) tellApart(r *reading, c gpu.Cause) gpu.Step {
	win := j.windowsSaid(r)
	then := " && "
	if win {
		then = "; " // PowerShell 5 has no &&: one command after the other
	}
	switch c {
	case gpu.CauseCPUOnlyBuild:
		return j.buildCheck(r)
	case gpu.CauseDriverMissing:
		return gpu.Step{Text: "If nvidia-smi fails (not found, or cannot communicate with the driver), the driver is missing or not loaded:", Command: nextSMI}
	case gpu.CauseDriverTooOld:
		return gpu.Step{Text: "Compare the driver's \"CUDA Version\" (nvidia-smi's header) with the CUDA the framework was built for (torch.version.cuda): an older driver cannot run it:", Command: "nvidia-smi" + then + nextTorch}
	case gpu.CauseWSLOrContainer:
		switch {
		case j.f.Host.WSL > 0:
			return gpu.Step{Text: "Inside WSL 2 the driver comes from Windows: if this lists nothing or nvidia-smi fails, the GPU does not reach WSL:", Command: "ls -l /usr/lib/wsl/lib/libcuda.so* && nvidia-smi"}
		case j.f.Host.Container == "colab" || j.f.Host.Container == "hosted" || r.quote(hostedRE) != "":
			return gpu.Step{Text: "In the notebook: if this fails, the runtime has no GPU:", Command: "!nvidia-smi"}
		case r.quote(cloudRE) != "":
			return gpu.Step{Text: "On the instance: if this shows no NVIDIA device, the instance type has no GPU; if it shows one but nvidia-smi fails, the image lacks the driver:", Command: "lspci | grep -i nvidia; nvidia-smi"}
		}
		return gpu.Step{Text: "Run nvidia-smi inside the container: if it fails there but works on the host, the container was started without the GPU:", Command: "docker exec -it <container> nvidia-smi"}
	case gpu.CauseArchUnsupported:
		return gpu.Step{Text: "If the GPU's compute capability (compute_cap) is not in the build's arch list, the build has no kernels for it:", Command: "nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv" + then + nextTorch}
	case gpu.CauseConflictingInstalls:
		if ortOnly(r) {
			return gpu.Step{Text: "If pip lists more than one onnxruntime package (onnxruntime, onnxruntime-gpu, onnxruntime-directml), or the GPU package is for another CUDA than the machine's, they clash:", Command: "pip list" + pipGrep(win, "onnxruntime") + then + ortProviders}
		}
		return gpu.Step{Text: "If the Python that runs is not the one the CUDA build was installed into, or torch is found in another folder, two installs clash:", Command: `python -c "import sys, torch; print(sys.executable, torch.__file__, torch.__version__, torch.version.cuda)"`}
	case gpu.CauseCudnnProblem:
		if ortOnly(r) {
			return gpu.Step{Text: "ONNX Runtime says which library its CUDA provider could not load when asked for it (cuDNN's major version must be the one its build wants: cuDNN 9 from onnxruntime-gpu 1.19, cuDNN 8 before):", Command: `python -c "import onnxruntime as ort; from onnxruntime.datasets import get_example; print(ort.__version__, ort.get_available_providers()); ort.InferenceSession(get_example('sigmoid.onnx'), providers=['CUDAExecutionProvider'])"`}
		}
		return gpu.Step{Text: "If cuDNN's version is None or not the one the framework was built with, cuDNN is the problem:", Command: `python -c "import torch; print(torch.version.cuda, torch.backends.cudnn.version())"`}
	case gpu.CauseTFGPULibs:
		return gpu.Step{Text: "TensorFlow logs each CUDA library it cannot load (\"Could not load dynamic library\"); a CUDA build with no GPU listed lacks them:", Command: `python -c "import tensorflow as tf; print(tf.__version__, tf.test.is_built_with_cuda(), tf.config.list_physical_devices('GPU'))"`}
	case gpu.CauseDeviceSelection:
		if win {
			return gpu.Step{Text: "If CUDA_VISIBLE_DEVICES is set, or names a GPU the list does not have, the program is kept from the GPU:", Command: `nvidia-smi -L; "CUDA_VISIBLE_DEVICES=$env:CUDA_VISIBLE_DEVICES"`}
		}
		return gpu.Step{Text: "If CUDA_VISIBLE_DEVICES is set, or names a GPU the list does not have, the program is kept from the GPU:", Command: "nvidia-smi -L; echo CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES"}
	case gpu.CauseOutOfMemory:
		return gpu.Step{Text: "If the GPU's memory is nearly full (by this or other processes), it is memory:", Command: "nvidia-smi --query-gpu=memory.used,memory.total --format=csv; nvidia-smi --query-compute-apps=pid,used_memory --format=csv"}
	case gpu.CauseDeviceMismatchInCode:
		return gpu.Step{Text: "In the training script, print where the model and a batch are: cpu means they were never moved to the GPU:", Command: `print(next(model.parameters()).device, batch.device)`}
	case gpu.CauseOther:
		if j.f.Host.OS == "darwin" {
			return gpu.Step{Text: "On a Mac, CUDA does not exist; check PyTorch's MPS device instead:", Command: `python3 -c "import torch; print(torch.backends.mps.is_available())"`}
		}
		if j.windowsSaid(r) {
			return gpu.Step{Text: "List the machine's graphics adapters: without an NVIDIA one, CUDA cannot run:", Command: "powershell -c \"Get-CimInstance Win32_VideoController | Select-Object Name\""}
		}
		return gpu.Step{Text: "List the machine's graphics adapters: without an NVIDIA one, CUDA cannot run:", Command: "lspci | grep -iE 'vga|3d|display'"}
	}
	return gpu.Step{Text: "Run the full check on that machine:", Command: nextFull}
}

// ortProviders prints ONNX Runtime's version, where it is imported from
// and the providers it offers.
const ortProviders = `python -c "import onnxruntime as ort; print(ort.__file__, ort.__version__, ort.get_available_providers())"`

// ortOnly: the report is about ONNX Runtime, not torch.
func ortOnly(r *reading) bool { return r.quote(ortRE) != "" && r.quote(torchRE) == "" }

// pipGrep filters pip list for name, in the shell of the report's system.
func pipGrep(windows bool, name string) string {
	if windows {
		return " | findstr /i " + name
	}
	return " | grep -i " + name
}

// buildCheck is the command that shows the build of the framework the
// report is about.
func (j *judge) buildCheck(r *reading) gpu.Step {
	switch {
	case r.quote(paddleRE) != "":
		return gpu.Step{Text: "If this prints False, PaddlePaddle is the CPU build (the GPU one is paddlepaddle-gpu):", Command: `python -c "import paddle; print(paddle.__version__, paddle.device.is_compiled_with_cuda())"`}
	case r.quote(jaxRE) != "" && r.quote(torchRE) == "":
		return gpu.Step{Text: "If JAX lists only CpuDevice, it is the CPU build:", Command: `python -c "import jax; print(jax.__version__, jax.devices())"`}
	case r.quote(tfRE) != "" && r.quote(torchRE) == "":
		return gpu.Step{Text: "If is_built_with_cuda() prints False, this TensorFlow is a CPU-only build:", Command: `python -c "import tensorflow as tf; print(tf.__version__, tf.test.is_built_with_cuda(), tf.config.list_physical_devices('GPU'))"`}
	case r.quote(ortRE) != "" && r.quote(torchRE) == "":
		return gpu.Step{Text: "If CUDAExecutionProvider is not listed, this ONNX Runtime is the CPU package:", Command: `python -c "import onnxruntime as ort; print(ort.__version__, ort.get_available_providers())"`}
	case r.quote(torchRE) != "": // torch named: its check, below, before the programs built on llama.cpp
	case r.quote(ollamaRE) != "":
		return gpu.Step{Text: "With a model loaded, PROCESSOR says where it runs: 100% CPU means ollama found no GPU it can use (its server log's \"inference compute\" line says which it found):", Command: "ollama ps"}
	case r.quote(llamaPyRE) != "":
		return gpu.Step{Text: "If this prints False, llama-cpp-python was built without CUDA (pip builds the CPU version unless CMAKE_ARGS=\"-DGGML_CUDA=on\" or a CUDA wheel index is used):", Command: `python -c "import llama_cpp; print(llama_cpp.__version__, llama_cpp.llama_supports_gpu_offload())"`}
	case r.quote(ggmlBuildRE) != "":
		return gpu.Step{Text: "A llama.cpp or whisper.cpp build with CUDA lists the GPU among its devices (and logs ggml_cuda_init at start); a CPU build lists none:", Command: "llama-cli --list-devices"}
	}
	return gpu.Step{Text: "If the version ends in +cpu or the CUDA version prints None, torch is a CPU-only build:", Command: nextTorch}
}

// boxWords name a container, a virtual or cloud machine, WSL or a hosted
// notebook: the places a GPU may not reach.
var boxWords = []string{"docker", "container", "wsl", "kubernetes", "k8s", "pod", "podman", "singularity", "apptainer", "virtual machine",
	"vmware", "virtualbox", "hyper-v", " vm", "vm ", "lxc", "lxd", "proxmox", "unraid", "colab", "kaggle", "notebook", "cloud",
	"instance", "runpod", "vast.ai", "lambda", "sagemaker", "paperspace", "azure", "aws", "gcp", "ec2", "jupyter", "devcontainer",
	"compose", "helm", "image", "hub", "space", "容器", "镜像", "コンテナ", "컨테이너", "仮想", "虚拟机", "云"}

// boxSaid: the report names a container, a VM, WSL, a cloud machine or a
// hosted notebook (or its facts show one).
func (j *judge) boxSaid(r *reading) bool {
	return j.f.Host.WSL > 0 || j.f.Host.Container != "" || r.any(boxWords...)
}

// frameworkNamed: the report names a deep-learning framework (torch,
// PaddlePaddle, TensorFlow, JAX, ONNX Runtime).
func (j *judge) frameworkNamed(r *reading) bool {
	return r.quote(torchRE) != "" || r.quote(paddleRE) != "" || r.quote(tfRE) != "" || r.quote(jaxRE) != "" || r.quote(ortRE) != "" || r.any(torchApps...)
}
