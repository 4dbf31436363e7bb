package labs

import (
	"regexp"
	"strings"
	"testing"
)

// How a lab's shown output is compared with a run's: by shape and words,
// not by the numbers that change from run to run.
//
//   - every number (digits, with . or , inside) matches any number, so
//     revisions, sizes, durations, ports and timestamps may differ;
//   - a UUID matches any UUID, a two-digit hex byte any hex byte, and a long
//     base64 token (a continue token) any such token;
//   - runs of spaces match any run of spaces (columns realign);
//   - "..." or "…" inside a line matches any text; a line that is only
//     "..." or "…" matches any number of lines;
//   - blank lines are ignored on both sides.
//
// Everything else — words, names, reasons, keys, the order of lines — must
// be what the page says. An output block marked "contains" may have other
// lines around and between its own.

var (
	uuidRE   = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	numberRE = regexp.MustCompile(`^[0-9]+(?:[.,][0-9]+)*`)
	hexRE    = regexp.MustCompile(`^[0-9a-f]{2}\b`)
	base64RE = regexp.MustCompile(`^[A-Za-z0-9+/_=-]{24,}`)
	spaceRE  = regexp.MustCompile(`^\s+`)
)

// linePattern turns one expected line into a regular expression.
func linePattern(line string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString(`^\s*`)
	s := strings.TrimSpace(line)
	prevWord := false // whether the previous byte was part of a word
	for len(s) > 0 {
		atWordStart := !prevWord
		switch {
		case strings.HasPrefix(s, "..."):
			b.WriteString(`.*?`)
			s = s[3:]
			prevWord = false
			continue
		case strings.HasPrefix(s, "…"):
			b.WriteString(`.*?`)
			s = s[len("…"):]
			prevWord = false
			continue
		case atWordStart && uuidRE.MatchString(s):
			b.WriteString(`[0-9a-f-]{36}`)
			s = s[36:]
		case atWordStart && base64RE.MatchString(s) && strings.ContainsAny(base64RE.FindString(s), "0123456789"):
			b.WriteString(`[A-Za-z0-9+/_=-]+`)
			s = s[len(base64RE.FindString(s)):]
		case atWordStart && hexRE.MatchString(s) && strings.ContainsAny(s[:2], "0123456789") && strings.ContainsAny(s[:2], "abcdef"):
			b.WriteString(`[0-9a-f]{2}`)
			s = s[2:]
		case numberRE.MatchString(s):
			b.WriteString(`[0-9]+(?:[.,][0-9]+)*`)
			s = s[len(numberRE.FindString(s)):]
		case spaceRE.MatchString(s):
			b.WriteString(`\s+`)
			s = s[len(spaceRE.FindString(s)):]
			prevWord = false
			continue
		default:
			r := []rune(s)[0]
			b.WriteString(regexp.QuoteMeta(string(r)))
			s = s[len(string(r)):]
			prevWord = r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
			continue
		}
		prevWord = true
	}
	b.WriteString(`\s*$`)
	return regexp.MustCompile(b.String())
}

func isGap(line string) bool {
	t := strings.TrimSpace(line)
	return t == "..." || t == "…"
}

func nonBlank(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, strings.TrimRight(l, " \t\r"))
		}
	}
	return out
}

// matches reports whether actual has the shape of expected. With contains,
// expected's lines need only appear in order.
func matches(expected, actual string, contains bool) bool {
	want, got := nonBlank(expected), nonBlank(actual)
	if contains {
		i := 0
		for _, g := range got {
			if i < len(want) && isGap(want[i]) {
				i++
			}
			if i < len(want) && linePattern(want[i]).MatchString(g) {
				i++
			}
		}
		for i < len(want) && isGap(want[i]) {
			i++
		}
		return i == len(want)
	}
	return matchLines(want, got)
}

// matchLines matches line by line, a gap line standing for any number of
// lines (dynamic programming over both positions).
func matchLines(want, got []string) bool {
	pats := make([]*regexp.Regexp, len(want))
	for i, w := range want {
		if !isGap(w) {
			pats[i] = linePattern(w)
		}
	}
	// ok[j] = want[:i] matches got[:j]
	ok := make([]bool, len(got)+1)
	ok[0] = true
	for i := range want {
		next := make([]bool, len(got)+1)
		for j := 0; j <= len(got); j++ {
			if pats[i] == nil { // gap: any number of lines
				next[j] = ok[j] || (j > 0 && next[j-1])
				continue
			}
			next[j] = j > 0 && ok[j-1] && pats[i].MatchString(got[j-1])
		}
		ok = next
	}
	return ok[len(got)]
}

func TestMatchingIgnoresNumbersButNotWords(t *testing.T) {
	cases := []struct {
		name           string
		want, got      string
		contains, same bool
	}{
		{"revisions may differ", "create_revision: 7\nmod_revision:    8", "create_revision: 12\nmod_revision: 13", false, true},
		{"a word may not", "Error from server (Conflict): ...", "Error from server (NotFound): x", false, false},
		{"a missing line fails", "a 1\nb 2", "a 1", false, false},
		{"an extra line fails", "a 1", "a 1\nb 2", false, false},
		{"a gap line takes any lines", "a 1\n...\nd 4", "a 1\nb 2\nc 3\nd 4", false, true},
		{"an inline ellipsis takes any text", `{"kind":"List",...,"items":[]}`, `{"kind":"List","metadata":{"x":1},"items":[]}`, false, true},
		{"uuids and hex bytes", "uid a40683d0-777b-401c-ba41-d02d7c60f154 bytes 6b 38 73 00", "uid 0e2b1f3c-1111-4222-8333-944455556666 bytes 6b 38 73 00", false, true},
		{"contains skips other lines", "ready\nexport KUBECONFIG=/tmp/x", "log\nready\nmore\nexport KUBECONFIG=/tmp/x\n", true, true},
		{"contains keeps the order", "b\na", "a\nb", true, false},
		{"columns realign", "NAME   RV\ndemo   8", "NAME    RV\ndemo    108", false, true},
		{"a word with digits inside", "node-2 Ready", "node-3 Ready", false, true},
		{"a word is not a number", "status ok", "status 200", false, false},
	}
	for _, c := range cases {
		if got := matches(c.want, c.got, c.contains); got != c.same {
			t.Errorf("%s: matches(%q, %q) = %v, want %v", c.name, c.want, c.got, got, c.same)
		}
	}
}
