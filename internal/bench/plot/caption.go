package plot

import (
	"strings"
	"unicode/utf8"

	"gonum.org/v1/plot/vg"
)

// captionMaxChars caps a caption line even when the figure is wide enough for
// more: long lines are hard to read.
const captionMaxChars = 110

// wrapCaption splits caption into lines no wider than width in the caption
// font and no longer than captionMaxChars. Explicit newlines are kept; words
// longer than a line are broken.
func wrapCaption(caption string, width vg.Length) []string {
	caption = strings.TrimSpace(caption)
	if caption == "" {
		return nil
	}
	fits := func(s string) bool {
		return utf8.RuneCountInString(s) <= captionMaxChars && captionStyle.Width(s) <= width
	}
	var lines []string
	for _, para := range strings.Split(caption, "\n") {
		cur := ""
		for _, word := range strings.Fields(para) {
			cand := word
			if cur != "" {
				cand = cur + " " + word
			}
			if fits(cand) {
				cur = cand
				continue
			}
			if cur != "" {
				lines = append(lines, cur)
			}
			// Break a word that alone is too long for a line.
			for !fits(word) {
				n := longestFittingPrefix(word, fits)
				lines = append(lines, word[:n])
				word = word[n:]
			}
			cur = word
		}
		lines = append(lines, cur)
	}
	return lines
}

// longestFittingPrefix returns the byte length of the longest prefix of s
// (at least one rune) for which fits holds.
func longestFittingPrefix(s string, fits func(string) bool) int {
	_, n := utf8.DecodeRuneInString(s)
	for i := range s {
		if i <= n {
			continue
		}
		if !fits(s[:i]) {
			break
		}
		n = i
	}
	return n
}
