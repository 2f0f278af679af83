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
// words, in the languages users write in ("I" before a verb is iSays's).
var firstPerson = []string{"i've", "i'm", "i'd",
	"my ", "we have", "we use", "we run", "we are", "we tried", "we installed", "our ", " me ",
	"我", "私は", "私の", "僕", "俺", "제가", "저는", "내가", "제 ", "我的",
	"tengo", "mi pc", "mi gpu", "mi tarjeta", "instalé", "tenho", "meu ", "minha ", "instalei", "у меня", "я установил", "мой ", "моя ",
	"ich habe", "mein ", "meine ", "j'ai", "mon pc", "mon gpu", "ma carte",
	// An issue form's headings: a bug report, whoever speaks in it.
	"describe the bug", "bug report", "expected behavior", "expected behaviour", "steps to reproduce", "what happened",
	"current behavior", "actual behavior", "reproduction steps", "问题描述", "复现步骤"}

// toldTrouble returns the words in which a person tells of their own
// machine or work (a report's own story), or "" when the text holds none
// or seeks advice on what to buy.
func toldTrouble(text string) string {
	if len(text) > wordmodel.MaxBytes {
		text = text[:wordmodel.MaxBytes]
	}
	low := strings.ToLower(text)
	if adviceSought(low) {
		return ""
	}
	at := gpuAsked(low)
	if at < 0 {
		at = iSays(low)
	}
	for k := 0; at < 0 && k < len(firstPerson); k++ {
		w := firstPerson[k]
		gpu.AnyAt(low, w, func(i int) bool {
			if i == 0 || !isLetter(w[0]) || !isLetter(low[i-1]) && low[i-1] != '\'' {
				at = i
			}
			return at >= 0
		})
	}
	if at < 0 {
		return ""
	}
	if len(low) != len(text) {
		text = low // ToLower changed a rune's length: quote the lower-cased text
	}
	return lineAround(text, at, at)
}

// gpuAsked is where a line asks a question about the GPU or CUDA ("GPU
// support?", "why is cuda not used?"), or -1.
func gpuAsked(low string) int {
	at := 0
	for line := range strings.Lines(low) {
		if strings.Contains(line, "?") || strings.Contains(line, "？") {
			for _, w := range []string{"gpu", "cuda", "nvidia", "显卡", "グラボ"} {
				if strings.Contains(line, w) {
					return at
				}
			}
		}
		at += len(line)
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
