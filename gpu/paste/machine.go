package paste

import (
	"regexp"
	"strings"

	"gpuwizard/gpu/catalog"
)

// What a report says in words of the machine's graphics: a Mac, a GPU
// that is not NVIDIA's (AMD, Intel, Apple), or that there is no NVIDIA GPU
// at all. These are facts as the person states them; the doctor weighs
// them against what tools show (an nvidia-smi table wins).

// machineText is how much of a report the machine's words are read from:
// the prose comes first.
const machineText = 64 << 10

// nvidiaWord is NVIDIA as people write it, misspellings included ("I
// don't have nivida gpu").
const nvidiaWord = `nvidia|nivida|nvida|nvdia|nvidea`

var (
	// macRE: the report runs on a Mac (Apple silicon or macOS), by its
	// name ("on mac", "m1mac", "my M3 Pro").
	macRE = catalog.MustPattern(`\bmacbook(?: pro| air)?\b|\bmac ?mini\b|\bmac studio\b|\bimac\b|\bmac ?os\b|\bapple silicon\b|\bapple m[1-4]\b|\bm[1-4] ?(?:pro |max |ultra )?(?:mac|macbook|chip)\b|\b(?:on|have|using|with) an? m[1-4](?: pro| max| ultra)?\b|\bmy m[1-4](?: pro| max| ultra)?\b|\bintel mac\b|\bon (?:an? |my )?mac\b|\bos ?x\b`,
		"mac", "apple", "chip", " m1", " m2", " m3", " m4", "osx", "os x")
	// macHomeRE: a Mac by its chip after its name ("Mac con chip M1",
	// "Mac M2"), in Spanish, French or German ("mi Mac"), or by a macOS
	// home folder in a path ("/Users/kim/…"; Windows writes C:\Users, WSL
	// /mnt/c/Users, Git Bash /c/Users, none of which a space or quote comes
	// right before). Patterns of their own, so that macRE, tried around
	// every "mac", does not grow.
	macHomeRE = catalog.MustPattern(`(?:^|[\s"'(=])/users/[\w.-]+/|\bchip m[1-4]\b|\bmac m[1-4]\b|\b(?:una|mi|mon|meinem|meine) mac\b`,
		"/users/", "chip m", "mac m", "una mac", "mi mac", "mon mac", "meine mac", "meinem mac")
	// macCJKRE: a Mac in Chinese, Japanese or Korean (苹果电脑, Mac电脑,
	// Macで, Mac에서), tried only on a text with non-ASCII bytes.
	macCJKRE = catalog.MustPattern(`苹果(?:电脑|笔记本)|mac ?(?:电脑|笔记本|で|에서)`,
		"苹果", "mac电脑", "mac 电脑", "mac笔记本", "mac 笔记本", "macで", "mac で", "mac에서", "mac 에서")
	// otherGPURE: a GPU that is not NVIDIA's. An AMD APU's name ("Ryzen 7
	// 5800H with Radeon Graphics") is a CPU, often beside an NVIDIA GPU.
	// An AMD card may be named by its number alone ("AMD 6600XT"): the XT,
	// XTX or GRE suffix tells it from a Ryzen CPU (5800X). Intel's Arc
	// cards carry a model number (A770, B580).
	otherGPURE = catalog.MustPattern(`\bintel\(r\) (?:uhd|hd|iris|arc)[^\n,.;]{0,20}|\bintel (?:uhd|hd|iris|arc)\b[^\n,.;]{0,20}|\biris xe\b|\bxe graphics\b|\barc(?:\(tm\))? [ab][0-9]{3}\b|\bamd radeon[^\n,.;]{0,20}|\bradeon (?:rx|pro|vii)\b[^\n,.;]{0,12}|\bradeon\b|\brx ?[4-9][0-9]{2,3}(?: ?xtx| ?xt| ?gre)?\b|\bamd (?:rx ?)?[5-9][0-9]{3} ?(?:xtx|xt|gre)\b|\b[5-9][0-9]00 ?(?:xtx|xt|gre)\b|\bintel(?:\(r\))? graphics \d{3}\b|\bintel[-_]gpu[-_]top\b|\bintel (?:integrated |igpu )?gpus?\b|\bintel igpu\b|\bintel cpu (?:also )?has an integrated gpu\b|\bamd (?:gpu|graphics card|video card|card)\b|\bamd cuda\b|(?:на|для|по поводу) amd\b|\b(?:run|running|runs|use|using|launch|start) (?:it |this |that )?on (?:an? |my )?amd(?:$|[^ \n]| [^rcp\n])|\bamd ?的?(?:显卡|卡)|\ba卡|\bapple (?:m[1-4]|silicon)\b|apple ?(?:m[1-4] ?)?芯片|苹果(?:m[1-4] ?)?芯片|\bm[1-4]? ?芯片(?:的)? ?mac\b`,
		"intel", "iris", "xe graphics", "arc a", "arc b", "arc(tm)", "radeon", "amd", "rx", "a卡", "apple", "苹果", "芯片", "00xt", "00 xt", "00gre", "00 gre", "gpu-top", "gpu_top")
	// ownRE: the words just before a GPU's name say it is the machine's
	// own ("I have", "my laptop is", "my GPU:"), not one a log lists
	// beside others.
	// Chinese reports say it as 我的显卡是 (my graphics card is), 我是 or
	// 我用的是 (mine is, I use).
	ownRE = regexp.MustCompile(`(?:\bi (?:have|own|use|got|only have)|\bi'm using|\bi am using|\bmy (?:pc|laptop|computer|notebook|machine|system|gpu|graphics(?: card)?|card|video card)(?: is| has| only has|:)?|\bonly (?:have|has)|我的(?:显卡|电脑|笔记本|gpu|卡)?(?:是|为)?[:：]?|我(?:是|用的是|用的))\s*(?:an? |the |only )?[^\n]{0,20}$`)
	apuRE = regexp.MustCompile(`with radeon(?:\(tm\))? graphics|radeon(?:\(tm\))? (?:vega )?graphics\b|\bradeon \d{3}m\b`)
	// noNVIDIA: the person says there is no NVIDIA GPU (each pattern with
	// a literal of its own, so that each runs on few lines).
	noNVIDIA = []*catalog.Pattern{
		catalog.MustPattern(`(?:\bi|\bwe|\bmy (?:pc|laptop|computer|machine|system|notebook)|\bthis (?:pc|laptop|machine|computer|system|notebook))\s+(?:don't|do not|doesn't|does not|didn't|did not|dont|doesnt)\s+have\s+(?:an?\s+|any\s+)?(?:`+nvidiaWord+`|dedicated|discrete|cuda[- ]capable|(?:graphics?|video) cards?\b|gpu\b)`, "have"),
		// "my laptop which does not contain an NVIDIA card": each negation
		// ends in "t" before the verb.
		catalog.MustPattern(`(?:\bi|\bwe|\bmy (?:pc|laptop|computer|machine|system|notebook)|\bthis (?:pc|laptop|machine|computer|system|notebook))(?:,? (?:which|that))?\s+(?:don't|do not|doesn't|does not|didn't|did not|dont|doesnt) (?:contain|come with|include)\s+(?:an?\s+|any\s+)?(?:`+nvidiaWord+`|dedicated|discrete|cuda[- ]capable|(?:graphics?|video) cards?\b|gpu\b)`, "t contain", "t come with", "t include"),
		catalog.MustPattern(`(?:\bi|\bwe|\bmy \w+|\bthis \w+)\s+(?:have|has) no\s+(?:`+nvidiaWord+`|dedicated|discrete|cuda[- ]capable|(?:graphics?|video) cards?\b|gpu\b)`, "have no", "has no"),
		// "without an NVIDIA GPU", or "on the CPU without NVIDIA?": NVIDIA
		// itself at the end of a sentence (not its driver, docker, toolkit
		// or nvidia.com/gpu).
		catalog.MustPattern(`(?m)\bwithout (?:an? )?(?:`+nvidiaWord+`|dedicated|discrete) (?:gpu|graphics|card|video card)|\bwithout (?:an? |any )?nvidia ?(?:[?!)]|\.(?:[ \t]|$)|$)`, "without "),
		catalog.MustPattern(`\bonly (?:an? |(?:have|has) (?:an? )?)?(?:integrated|intel|amd)(?: radeon| iris| uhd| hd)? (?:gpu|graphics)`, "only"),
		catalog.MustPattern(`\b(?:my )?gpu is (?:unfortunately )?not (?:by |from |an? )?nvidia|\bnot an nvidia (?:gpu|card)`),
		// "(no other GPU)", "no discrete GPU", "no dGPU".
		catalog.MustPattern(`\bno (?:other|dedicated|discrete|separate|external) (?:gpu|graphics card|video card)\b|\bno dgpu\b`, "no other", "no dedicated", "no discrete", "no separate", "no external", "no dgpu"),
		// 没有显卡 / 没有GPU (no graphics card, no GPU), not 没有显卡驱动
		// (no graphics driver) nor 没有GPU版 (no GPU build).
		catalog.MustPattern(`没有独立显卡|没有独显|没有英伟达|没有nvidia|没有n卡|无独显|只有核显|(?:没有|没|无)显卡(?:[^驱]|$)|没有 ?gpu(?:[^版驱加]|$)`, "没有", "没显卡", "无独显", "无显卡", "只有核显"),
		// Spanish, Portuguese, Russian, Korean: I have no NVIDIA card.
		catalog.MustPattern(`\bno (?:tengo|tiene|hay) (?:una |un |ninguna )?(?:tarjeta (?:gráfica|de video) |gpu |placa )?(?:`+nvidiaWord+`|dedicada)|\bnão (?:tenho|tem|possui) (?:uma |um |nenhuma )?(?:placa de vídeo |placa gráfica |gpu |placa )?(?:`+nvidiaWord+`|dedicada)|нет (?:видеокарты |gpu |дискретной видеокарты )?(?:`+nvidiaWord+`)|(?:`+nvidiaWord+`|엔비디아)[^\n]{0,15}(?:그래픽카드|그래픽 카드|gpu)[가이]? 없`,
			"no tengo", "no tiene", "no hay", "não tenho", "não tem", "não possui", "нет", "없"),
	}
)

// machineWords records what the report says of the machine's graphics:
// Prose "no_nvidia" (the sentence that says so), "other_gpu" (a non-NVIDIA
// GPU it names), "other_gpu_own" (its line, when the words before the
// name say it is the machine's own GPU) and, when no tool showed the
// system, a Mac as the OS.
func (pp *parser) machineWords() {
	text := pp.p.Text
	if len(text) > machineText {
		text = text[:machineText]
	}
	low := asciiLower(text)
	var said []int // the first "no NVIDIA GPU"
	for _, re := range noNVIDIA {
		if loc := re.FindIndex(low); loc != nil && (said == nil || loc[0] < said[0]) {
			said = loc
		}
	}
	if said != nil && !nvidiaBeside(low, said) {
		pp.prose("no_nvidia", lineAround(text, said))
	}
	for _, loc := range otherGPURE.FindAllIndex(low, 4) {
		if m := low[loc[0]:loc[1]]; !apuRE.MatchString(low[max(0, loc[0]-40):min(len(low), loc[1]+20)]) {
			pp.prose("other_gpu", strings.TrimSpace(text[loc[0]:loc[0]+len(m)]))
			if ownRE.MatchString(low[max(0, loc[0]-60):loc[0]]) && !nvidiaOnLine(low, loc) {
				pp.prose("other_gpu_own", lineAround(text, loc))
				break
			}
		}
	}
	// A Mac from before 2019 may have an NVIDIA GPU and a CUDA driver: a
	// report that names them is not about Apple silicon.
	if pp.f.Host.OS == "" && pp.f.NVML.Status == "" && len(pp.f.NVML.GPUs) == 0 && !strings.Contains(low, "nvidia-smi") && !strings.Contains(low, "cuda driver") {
		if q := macLine(low, text); q != "" {
			pp.f.Host.OS = "darwin"
			pp.quote("os", q)
		}
	}
}

// macLine is the line of the first Mac the report names, or "". An issue
// template's unticked box ("- [ ] MacOS" beside "- [X] Windows") is an OS
// the person does not have.
func macLine(low, text string) string {
	res := []*catalog.Pattern{macRE, macHomeRE}
	if !isASCII(low) {
		res = append(res, macCJKRE)
	}
	for _, re := range res {
		for _, loc := range re.FindAllIndex(low, 4) {
			if !untickedBox(low, loc[0]) && !platformList(low, loc) {
				return lineAround(text, loc)
			}
		}
	}
	return ""
}

// platformList: the line around a Mac's name names Windows or Linux too
// ("on Windows/Linux the CUDA build (macOS: MPS)"): a list of the
// platforms a program supports, not the machine the report comes from.
func platformList(low string, loc []int) bool {
	rest := lineBeside(low, loc)
	return strings.Contains(rest, "windows") || strings.Contains(rest, "linux")
}

// lineBeside is the rest of the line around the match at loc, without
// the match: what the line says beside it.
func lineBeside(low string, loc []int) string {
	start, end := loc[0], loc[1]
	for start > 0 && low[start-1] != '\n' {
		start--
	}
	for end < len(low) && low[end] != '\n' {
		end++
	}
	return low[start:loc[0]] + " " + low[loc[1]:end]
}

// untickedBox: the line of low around at starts with an unticked
// Markdown checkbox ("- [ ] ", "* [ ] ", "[ ] ").
func untickedBox(low string, at int) bool {
	start := at
	for start > 0 && low[start-1] != '\n' {
		start--
	}
	line := strings.TrimLeft(low[start:at], " \t-*")
	return strings.HasPrefix(line, "[ ]")
}

// nvidiaBeside: the line of a "no NVIDIA GPU" match also names an NVIDIA
// or external GPU outside the match ("only integrated graphics, but an
// external GPU enclosure with an NVIDIA card"); an error text's "no
// NVIDIA driver" on the line is not one.
func nvidiaBeside(low string, loc []int) bool {
	rest := lineBeside(low, loc)
	return nvidiaGPURE.MatchString(rest) || strings.Contains(rest, "egpu") || strings.Contains(rest, "external gpu") || strings.Contains(rest, "geforce")
}

// nvidiaGPURE: an NVIDIA GPU named ("a Nvidia graphics card", "nvidia
// rtx"), not NVIDIA's driver that an error text says is missing ("Found
// no NVIDIA driver").
var nvidiaGPURE = regexp.MustCompile(`nvidia (?:gpu|card|graphics|video card|rtx|gtx|quadro|tesla|a100|h100)`)

// asciiLower lowers ASCII letters only, so that byte offsets into the
// result are those of s (strings.ToLower may change a rune's length).
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// lineOf is the line of text around the first match of re in low (text
// lower-cased, same offsets), or "".
func lineOf(low, text string, re *catalog.Pattern) string {
	if loc := re.FindIndex(low); loc != nil {
		return lineAround(text, loc)
	}
	return ""
}

// lineAround is the line of text around loc, cut to 120 bytes either side.
func lineAround(text string, loc []int) string {
	start, end := loc[0], loc[1]
	for start > 0 && text[start-1] != '\n' && loc[0]-start < 120 {
		start--
	}
	for end < len(text) && text[end] != '\n' && end-loc[1] < 120 {
		end++
	}
	return strings.ToValidUTF8(strings.TrimSpace(text[start:end]), "")
}

// nvidiaOnLine: the line around loc names an NVIDIA GPU too (a laptop's
// Intel graphics beside its GeForce).
func nvidiaOnLine(low string, loc []int) bool {
	line := lineAround(low, loc)
	for _, w := range []string{"nvidia", "geforce", "gtx", "rtx", "quadro", "tesla"} {
		if strings.Contains(line, w) {
			return true
		}
	}
	return false
}
