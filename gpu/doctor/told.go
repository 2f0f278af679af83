package doctor

import (
	"strings"

	"gpuwizard/gpu"
	"gpuwizard/gpu/internal/wordmodel"
)

// A report handed to the doctor is, nearly always, somebody telling of a
// GPU that does not do what they want: "I installed CUDA 12.4 and my
// RTX 4060 laptop trains YOLO at 2 it/s", "我的电脑是3060，装了pytorch". No
// trouble word need be in it. What tools print on a working machine
// (nvidia-smi, collect_env, a pip list) tells nothing in the first
// person. So a text in which a person speaks of their own machine or
// work, and that asks no advice on what to buy, is a report of trouble:
// the differential weighs its facts and words.

// firstPerson are the words of a person speaking of themselves, whole
// words, in the languages users write in. "i" alone is too common in
// code (for i in range) to count without a verb after it.
var firstPerson = []string{"i have", "i've", "i am", "i'm", "i installed", "i install", "i tried", "i try", "i use", "i used",
	"i run", "i ran", "i get", "i got", "i want", "i need", "i can", "i did", "i do", "i followed", "i see", "i saw",
	"i noticed", "i just", "i also", "i was", "i had", "i set", "i built", "i created", "i made", "i added", "i changed",
	"i updated", "i upgraded", "i downloaded", "i checked", "i think", "i'd", "i would", "i will", "i started", "i found",
	"my ", "we have", "we use", "we run", "we are", "we tried", "we installed", "our ", " me ",
	"我", "私は", "私の", "僕", "俺", "제가", "저는", "내가", "제 ", "我的",
	"tengo", "mi pc", "mi gpu", "mi tarjeta", "instalé", "tenho", "meu ", "minha ", "instalei", "у меня", "я установил", "мой ", "моя ",
	"ich habe", "mein ", "meine ", "j'ai", "mon pc", "mon gpu", "ma carte",
	// An issue form's headings: a bug report, whoever speaks in it.
	"describe the bug", "bug report", "expected behavior", "expected behaviour", "steps to reproduce", "what happened",
	"current behavior", "actual behavior", "reproduction steps", "问题描述", "复现步骤"}

// adviceWords mark a question about what to buy or choose, not trouble.
var adviceWords = []string{"buy", "purchase", "recommend", "worth it", "is better", "better for", "is best", "best gpu",
	"should i get", "upgrade to a", "which card", "which gpu is", "买哪", "推荐"}

// toldTrouble returns the words in which a person tells of their own
// machine or work (a report's own story), or "" when the text holds none
// or seeks advice on what to buy.
func toldTrouble(text string) string {
	if len(text) > wordmodel.MaxBytes {
		text = text[:wordmodel.MaxBytes]
	}
	low := strings.ToLower(text)
	for _, w := range adviceWords {
		if strings.Contains(low, w) {
			return ""
		}
	}
	if q := gpuAsked(low); q >= 0 {
		return sentenceAt(low, q)
	}
	if at := iSays(low); at >= 0 {
		return sentenceAt(low, at)
	}
	for _, w := range firstPerson {
		at := -1
		gpu.AnyAt(low, w, func(i int) bool {
			before := i == 0 || !isLetter(w[0]) || !isLetter(low[i-1]) && low[i-1] != '\''
			if before {
				at = i
			}
			return before
		})
		if at >= 0 && len(low) == len(text) {
			return sentenceAt(text, at)
		}
		if at >= 0 {
			return sentenceAt(low, at)
		}
	}
	return ""
}

// sentenceAt is the line of text around byte i, cut to a quotable length
// on a rune boundary.
func sentenceAt(text string, i int) string {
	start := strings.LastIndexByte(text[:i], '\n') + 1
	end := len(text)
	if e := strings.IndexByte(text[i:], '\n'); e >= 0 {
		end = i + e
	}
	line := strings.TrimSpace(text[start:end])
	const most = 100
	if len(line) > most {
		cut := most
		for cut > 0 && line[cut]&0xC0 == 0x80 {
			cut--
		}
		line = line[:cut] + "…"
	}
	return line
}

// gpuAsked is where a line asks a question about the GPU or CUDA ("GPU
// support?", "why is cuda not used?"), or -1.
func gpuAsked(low string) int {
	for at := 0; at < len(low); {
		e := strings.IndexByte(low[at:], '\n')
		if e < 0 {
			e = len(low) - at
		}
		line := low[at : at+e]
		if strings.Contains(line, "?") || strings.Contains(line, "？") {
			for _, w := range []string{"gpu", "cuda", "nvidia", "显卡", "グラボ"} {
				if strings.Contains(line, w) {
					return at
				}
			}
		}
		at += e + 1
	}
	return -1
}

// iSays is where "I" is the subject of a verb ("I train", "I tried"), or
// -1: a whole word i, a space, and a word that is not what code puts
// after a loop's i (for i in range, i is, i and j).
func iSays(low string) int {
	at := -1
	gpu.AnyAt(low, "i ", func(i int) bool {
		if i > 0 && (isLetter(low[i-1]) || low[i-1] >= '0' && low[i-1] <= '9' || low[i-1] == '.' || low[i-1] == '[' || low[i-1] == '(') {
			return false
		}
		rest := low[i+2:]
		if len(rest) < 2 || !isLetter(rest[0]) || rest[0] == '_' {
			return false
		}
		for _, w := range []string{"in ", "is ", "and ", "or ", "of ", "to "} {
			if strings.HasPrefix(rest, w) {
				return false
			}
		}
		at = i
		return true
	})
	return at
}
