package labs

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// A lab is a Markdown page read as a script. Fenced ```sh blocks are
// commands; a fenced block with no language (or ```text) right after one
// is the output those commands print. HTML comments of the form
// <!-- lab: DIRECTIVE ... --> steer the run without showing on the page:
//
//	terminal NAME     the next sh block runs in a terminal of its own (a
//	                  background shell, as a learner's second window); its
//	                  output block is awaited until it matches
//	stop NAME         Ctrl-C in terminal NAME: SIGINT, then wait for it to end
//	await NAME        the next output block is what terminal NAME has printed
//	                  by now (awaited until it has, in this order)
//	skip              the next sh block is not run (an alternative, or a
//	                  command for a browser or an editor)
//	contains          the next output block's lines must appear in this
//	                  order, with any other lines around them
//	unchecked         the next output block is not compared
//	exact             the next output block's numbers must be the page's too
//	near=KEY:TOL      in the next output block, the first number after the
//	                  text KEY in a line must be within TOL of the page's (a
//	                  duration such as 1.5s, or a plain number; 0 for a count
//	                  the page states exactly); may be given several times
//	timeout=DURATION  how long the next sh block (or awaited output) may take
//	long              the lab takes minutes: skipped under -short
//
// Several directives may share one comment: <!-- lab: terminal w contains -->;
// words in parentheses after them say why: <!-- lab: unchecked (a reason) -->.

// step is one thing a lab does, in page order.
type step struct {
	line     int    // 1-based line of the block's opening fence
	commands string // an sh block's text; empty for a stop step
	output   *block // the output block that follows, if any

	terminal string // run in this background terminal
	stop     string // Ctrl-C in this terminal (a step of its own)
	await    string // output awaited from this terminal (a step of its own)
	skip     bool
	timeout  time.Duration
}

// block is an expected-output block.
type block struct {
	line      int // 1-based line of the opening fence
	text      string
	contains  bool
	unchecked bool
	exact     bool
	near      []nearCheck
	// start and end are the byte offsets of text in the page, so that
	// -update can put a run's real output in its place.
	start, end int
}

// lab is a parsed page.
type lab struct {
	path  string
	long  bool
	steps []step
}

// directives accumulated from comments, applied to the next block.
type pending struct {
	await     string
	terminal  string
	skip      bool
	contains  bool
	unchecked bool
	exact     bool
	near      []nearCheck
	timeout   time.Duration
}

func parseLab(path string) (*lab, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	l := &lab{path: path}
	var (
		p       pending
		last    *step // the sh step an output block may belong to
		offset  int
		lineNo  int
		scanner = bufio.NewScanner(strings.NewReader(string(data)))
	)
	scanner.Buffer(make([]byte, 1<<20), 1<<20)
	// next reads one line, keeping byte offsets for -update.
	next := func() (string, bool) {
		if !scanner.Scan() {
			return "", false
		}
		lineNo++
		s := scanner.Text()
		offset += len(s) + 1
		return s, true
	}
	for {
		line, ok := next()
		if !ok {
			break
		}
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "<!-- lab:"):
			if err := p.apply(l, strings.TrimSuffix(strings.TrimPrefix(trimmed, "<!-- lab:"), "-->")); err != nil {
				return nil, fmt.Errorf("%s:%d: %v", path, lineNo, err)
			}
			if p.stopNow() != "" {
				l.steps = append(l.steps, step{line: lineNo, stop: p.stopNow()})
				p = pending{}
				last = nil
			}
		case strings.HasPrefix(trimmed, "```"):
			lang := strings.TrimPrefix(trimmed, "```")
			start, open := offset, lineNo
			var body []string
			for {
				l2, ok := next()
				if !ok {
					return nil, fmt.Errorf("%s:%d: unclosed code block", path, open)
				}
				if strings.TrimSpace(l2) == "```" {
					break
				}
				body = append(body, l2)
			}
			text := strings.Join(body, "\n")
			switch lang {
			case "sh", "bash", "shell":
				l.steps = append(l.steps, step{line: open, commands: text, terminal: p.terminal, skip: p.skip, timeout: p.timeout})
				last = &l.steps[len(l.steps)-1]
			case "", "text":
				end := start + len(text)
				if len(body) > 0 {
					end++ // the last line's newline
				}
				if p.await != "" {
					l.steps = append(l.steps, step{line: open, await: p.await, timeout: p.timeout,
						output: &block{line: open, text: text, contains: true, unchecked: p.unchecked, exact: p.exact, near: p.near, start: start, end: end}})
				} else if last != nil && last.output == nil {
					last.output = &block{line: open, text: text, contains: p.contains, unchecked: p.unchecked, exact: p.exact, near: p.near, start: start, end: end}
				}
				last = nil
			default:
				last = nil // yaml, go, …: part of the prose
			}
			p = pending{}
		case trimmed == "":
		default:
			last = nil // prose between a command and a block: not its output
		}
	}
	return l, scanner.Err()
}

// stopSentinel marks a pending stop; stop directives are steps of their own.
const stopSentinel = "\x00stop:"

func (p *pending) stopNow() string {
	if name, ok := strings.CutPrefix(p.terminal, stopSentinel); ok {
		return name
	}
	return ""
}

func (p *pending) apply(l *lab, directive string) error {
	fields := strings.Fields(directive)
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		switch {
		case strings.HasPrefix(f, "("): // the rest is a comment saying why
			return nil
		case f == "await":
			if i+1 >= len(fields) {
				return fmt.Errorf("%q needs a terminal name", f)
			}
			i++
			p.await = fields[i]
		case f == "terminal" || f == "stop":
			if i+1 >= len(fields) {
				return fmt.Errorf("%q needs a terminal name", f)
			}
			i++
			if f == "stop" {
				p.terminal = stopSentinel + fields[i]
			} else {
				p.terminal = fields[i]
			}
		case f == "skip":
			p.skip = true
		case f == "contains":
			p.contains = true
		case f == "unchecked":
			p.unchecked = true
		case f == "exact":
			p.exact = true
		case f == "long":
			l.long = true
		case strings.HasPrefix(f, "near="):
			c, err := parseNear(strings.TrimPrefix(f, "near="))
			if err != nil {
				return err
			}
			p.near = append(p.near, c)
		case strings.HasPrefix(f, "timeout="):
			d, err := time.ParseDuration(strings.TrimPrefix(f, "timeout="))
			if err != nil {
				return err
			}
			p.timeout = d
		default:
			return fmt.Errorf("unknown lab directive %q", f)
		}
	}
	return nil
}

func TestParseReadsStepsAndDirectives(t *testing.T) {
	page := "# Lab\n\n<!-- lab: long -->\n<!-- lab: terminal srv timeout=30s -->\n```sh\nserve\n```\n\n```\nready\n```\n\n" +
		"Prose.\n\n```sh\nask\n```\n\n<!-- lab: contains -->\n```text\nanswer\n```\n\n<!-- lab: await srv -->\n```\nlog line\n```\n\n" +
		"<!-- lab: skip (a browser) -->\n```sh\nopen\n```\n\n<!-- lab: stop srv -->\n\n```yaml\nkind: Pod\n```\n"
	path := writeTemp(t, page)
	l, err := parseLab(path)
	if err != nil {
		t.Fatal(err)
	}
	if !l.long || len(l.steps) != 5 {
		t.Fatalf("got long %v and %d steps, want a long lab with 5 steps: %+v", l.long, len(l.steps), l.steps)
	}
	s := l.steps
	switch {
	case s[0].terminal != "srv" || s[0].timeout != 30*time.Second || s[0].output == nil || s[0].output.text != "ready":
		t.Errorf("step 0: %+v, want terminal srv, 30s, output ready", s[0])
	case s[1].commands != "ask" || s[1].output == nil || !s[1].output.contains || s[1].output.text != "answer":
		t.Errorf("step 1: %+v, want ask with a contains output", s[1])
	case s[2].await != "srv" || s[2].output == nil || s[2].output.text != "log line":
		t.Errorf("step 2: %+v, want an await of srv", s[2])
	case !s[3].skip || s[3].commands != "open":
		t.Errorf("step 3: %+v, want a skipped command", s[3])
	case s[4].stop != "srv":
		t.Errorf("step 4: %+v, want stop srv", s[4])
	}
	if data, _ := os.ReadFile(path); string(data[s[1].output.start:s[1].output.end]) != "answer\n" {
		t.Errorf("the output block's offsets point at %q", data[s[1].output.start:s[1].output.end])
	}
	if _, err := parseLab(writeTemp(t, "<!-- lab: frobnicate -->\n")); err == nil {
		t.Error("an unknown directive was accepted")
	}
}

func writeTemp(t *testing.T, text string) string {
	t.Helper()
	path := t.TempDir() + "/lab.md"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
