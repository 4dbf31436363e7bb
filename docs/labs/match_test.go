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
//     revisions, sizes, durations, ports and timestamps may differ; so
//     does a timestamp's day of the week and month ("Tue, 01 Dec 2026"
//     matches "Wed, 02 Dec 2026" and "Fri, 01 Jan 2027");
//   - a UUID matches any UUID, a two-digit hex byte any hex byte, a hex id
//     (an etcd lease or member) any hex id, and a long base64 token (a
//     continue token) any such token;
//   - runs of spaces match any run of spaces (columns realign);
//   - "..." or "…" inside a line matches any text; a line that is only
//     "..." or "…" matches any number of lines;
//   - blank lines are ignored on both sides.
//
// Everything else — words, names, reasons, keys, the order of lines — must
// be what the page says. An output block marked "contains" may have other
// lines around and between its own.

var (
	uuidRE     = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	durationRE = regexp.MustCompile(`^(?:[0-9]+(?:\.[0-9]+)?(?:ns|µs|us|ms|h|m|s))+\b`)
	numberRE   = regexp.MustCompile(`^[0-9]+(?:[.,][0-9]+)*(?:e[+-][0-9]+)?`)
	hexRE      = regexp.MustCompile(`^[0-9a-f]{2}\b`)
	hexIDRE    = regexp.MustCompile(`^[0-9a-f]{8,}\b`)
	base64RE   = regexp.MustCompile(`^[A-Za-z0-9+/_=-]{24,}`)
	spaceRE    = regexp.MustCompile(`^\s+`)
	// Day and month names as timestamps write them (kubectl describe's
	// RFC 1123 dates); a name only when a word of its own.
	dayNameRE   = regexp.MustCompile(`^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)\b`)
	monthNameRE = regexp.MustCompile(`^(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\b`)
)

type tokenKind int

const (
	tokenLiteral tokenKind = iota // one rune, compared as is
	tokenSpace                    // a run of spaces
	tokenGap                      // "..." or "…": any text
	tokenValue                    // a number, UUID, hex byte or token: any such value
)

type token struct {
	text    string
	kind    tokenKind
	pattern string // for values
}

// tokenize splits an expected line into literals, spaces, gaps and values.
// Values are recognised only at the start of a word (a UUID inside a name is
// not split), numbers anywhere ("node-2", "612ms").
func tokenize(line string, exact bool) []token {
	var out []token
	s := line
	prevWord := false
	for len(s) > 0 {
		atWordStart := !prevWord
		var t token
		switch {
		case strings.HasPrefix(s, "..."):
			t = token{text: "...", kind: tokenGap}
		case strings.HasPrefix(s, "…"):
			t = token{text: "…", kind: tokenGap}
		case atWordStart && uuidRE.MatchString(s):
			t = token{text: s[:36], kind: tokenValue, pattern: `[0-9a-f-]{36}`}
		case atWordStart && base64RE.MatchString(s) && strings.ContainsAny(base64RE.FindString(s), "0123456789"):
			t = token{text: base64RE.FindString(s), kind: tokenValue, pattern: `[A-Za-z0-9+/_=-]+`}
		case atWordStart && hexIDRE.MatchString(s) && strings.ContainsAny(hexIDRE.FindString(s), "abcdef"):
			t = token{text: hexIDRE.FindString(s), kind: tokenValue, pattern: `[0-9a-f]{8,}`}
		case atWordStart && hexRE.MatchString(s) && strings.ContainsAny(s[:2], "0123456789") && strings.ContainsAny(s[:2], "abcdef"):
			t = token{text: s[:2], kind: tokenValue, pattern: `[0-9a-f]{2}`}
		case atWordStart && dayNameRE.MatchString(s) && !exact:
			t = token{text: dayNameRE.FindString(s), kind: tokenValue, pattern: `(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)`}
		case atWordStart && monthNameRE.MatchString(s) && !exact:
			t = token{text: monthNameRE.FindString(s), kind: tokenValue, pattern: `(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)`}
		case durationRE.MatchString(s) && !exact:
			t = token{text: durationRE.FindString(s), kind: tokenValue, pattern: `(?:[0-9]+(?:\.[0-9]+)?(?:ns|µs|us|ms|h|m|s))+`}
		case numberRE.MatchString(s) && exact:
			t = token{text: numberRE.FindString(s), kind: tokenLiteral}
		case numberRE.MatchString(s):
			t = token{text: numberRE.FindString(s), kind: tokenValue, pattern: `[0-9]+(?:[.,][0-9]+)*(?:e[+-][0-9]+)?`}
		case spaceRE.MatchString(s):
			t = token{text: spaceRE.FindString(s), kind: tokenSpace}
		default:
			r := []rune(s)[0]
			t = token{text: string(r), kind: tokenLiteral}
		}
		switch t.kind {
		case tokenLiteral:
			r := []rune(t.text)[len([]rune(t.text))-1]
			prevWord = r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		case tokenValue:
			prevWord = true
		default:
			prevWord = false
		}
		out = append(out, t)
		s = s[len(t.text):]
	}
	return out
}

// linePattern turns one expected line into a regular expression; each
// value is a capturing group.
func linePattern(line string, exact bool) *regexp.Regexp {
	var b strings.Builder
	b.WriteString(`^\s*`)
	for _, t := range tokenize(strings.TrimSpace(line), exact) {
		switch t.kind {
		case tokenGap:
			b.WriteString(`.*?`)
		case tokenValue:
			b.WriteString("(" + t.pattern + ")")
		case tokenSpace:
			b.WriteString(`\s+`)
		default:
			b.WriteString(regexp.QuoteMeta(t.text))
		}
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
func matches(expected, actual string, contains, exact bool) bool {
	_, ok := align(nonBlank(expected), nonBlank(actual), contains, exact)
	return ok
}

// align finds, for each expected line, the actual line it matches (-1 for
// a gap line), and whether the whole block matches.
func align(want, got []string, contains, exact bool) ([]int, bool) {
	pats := make([]*regexp.Regexp, len(want))
	for i, w := range want {
		if !isGap(w) {
			pats[i] = linePattern(w, exact)
		}
	}
	at := make([]int, len(want))
	if contains {
		i := 0
		for j, g := range got {
			for i < len(want) && pats[i] == nil {
				at[i] = -1
				i++
			}
			if i < len(want) && pats[i].MatchString(g) {
				at[i] = j
				i++
			}
		}
		for i < len(want) && pats[i] == nil {
			at[i] = -1
			i++
		}
		return at, i == len(want)
	}
	// ok[i][j]: want[:i] matches got[:j]; a gap line stands for any number
	// of lines.
	ok := make([][]bool, len(want)+1)
	for i := range ok {
		ok[i] = make([]bool, len(got)+1)
	}
	ok[0][0] = true
	for i := range want {
		for j := 0; j <= len(got); j++ {
			if pats[i] == nil {
				ok[i+1][j] = ok[i][j] || (j > 0 && ok[i+1][j-1])
				continue
			}
			ok[i+1][j] = j > 0 && ok[i][j-1] && pats[i].MatchString(got[j-1])
		}
	}
	if !ok[len(want)][len(got)] {
		return nil, false
	}
	for i, j := len(want), len(got); i > 0; i-- { // walk back to name each line's match
		if pats[i-1] == nil {
			at[i-1] = -1
			for j > 0 && !ok[i-1][j] {
				j--
			}
			continue
		}
		at[i-1] = j - 1
		j--
	}
	return at, true
}

// refresh rewrites a matching expected block with a run's numbers: a line
// without "..." becomes the run's line; in a line with "...", each number,
// UUID, hex byte or token takes the run's value.
func refresh(expected, actual string, contains bool) (string, bool) {
	want, got := nonBlank(expected), nonBlank(actual)
	at, ok := align(want, got, contains, false)
	if !ok {
		return "", false
	}
	lines := strings.Split(expected, "\n")
	k := 0
	for n, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		i := k
		k++
		if at[i] < 0 {
			continue
		}
		g := got[at[i]]
		if !strings.Contains(l, "...") && !strings.Contains(l, "…") {
			lines[n] = g
			continue
		}
		lines[n] = substituteValues(l, g)
	}
	return strings.Join(lines, "\n"), true
}

// substituteValues puts the run's values into a line with an ellipsis.
func substituteValues(line, run string) string {
	pat := linePattern(line, false)
	groups := pat.FindStringSubmatch(run)
	if groups == nil {
		return line
	}
	values := groups[1:]
	lead := line[:len(line)-len(strings.TrimLeft(line, " \t"))]
	var b strings.Builder
	b.WriteString(lead)
	for _, t := range tokenize(strings.TrimSpace(line), false) {
		if t.kind == tokenValue && len(values) > 0 {
			b.WriteString(values[0])
			values = values[1:]
			continue
		}
		b.WriteString(t.text)
	}
	return b.String()
}

func TestExactBlocksCompareNumbers(t *testing.T) {
	if !matches("watchers 6\nnode-2", "watchers   6\nnode-2", false, true) {
		t.Error("an exact block should match the same numbers")
	}
	if matches("watchers 6", "watchers 7", false, true) {
		t.Error("an exact block matched another number")
	}
}

func TestRefreshTakesTheRunsNumbers(t *testing.T) {
	want := "rev 7\n...\n{\"rv\":7,...,\"uid\":\"a40683d0-777b-401c-ba41-d02d7c60f154\"}"
	run := "rev 12\nnoise\n{\"rv\":12,\"x\":1,\"uid\":\"0e2b1f3c-1111-4222-8333-944455556666\"}"
	got, ok := refresh(want, run, false)
	if wantGot := "rev 12\n...\n{\"rv\":12,...,\"uid\":\"0e2b1f3c-1111-4222-8333-944455556666\"}"; !ok || got != wantGot {
		t.Errorf("refresh = %q, %v; want %q", got, ok, wantGot)
	}
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
		{"etcd lease and member ids", "64eca228fef85011 40s minicp-etcd-1 (5f1cac0d9172e4ec)", "7990a228ffe3ed12 40s minicp-etcd-1 (d1dbf23015f57990)", false, true},
		{"floats as Prometheus prints them", "size 1.232896e+06", "size 851968", false, true},
		{"durations in any unit", "ready in 612ms, renewed every 10s", "ready in 1.24s, renewed every 1m0s", false, true},
		{"dates on another day", "Ready Unknown Tue, 01 Dec 2026 18:53:18 +0000", "Ready Unknown Fri, 01 Jan 2027 00:23:38 +0000", false, true},
		{"a day name inside a word is a word", "Monday Tuesday", "Friday Tuesday", false, false},
		{"a day name is not any word", "Tue, 01 Dec", "Now, 01 Dec", false, false},
	}
	for _, c := range cases {
		if got := matches(c.want, c.got, c.contains, false); got != c.same {
			t.Errorf("%s: matches(%q, %q) = %v, want %v", c.name, c.want, c.got, got, c.same)
		}
	}
}
