package labs

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Most numbers a lab shows change from run to run and match any number
// (match_test.go). Some are the lesson: a read that waits 3 s, a metric that
// counts two reads. A near=KEY:TOL directive holds such a number to the
// page's within a tolerance the page states.

// nearCheck is one near=KEY:TOL directive.
type nearCheck struct {
	key       string
	tolerance float64 // in seconds for durations, else in the number's unit
}

func parseNear(spec string) (nearCheck, error) {
	key, tol, ok := strings.Cut(spec, ":")
	if !ok || key == "" {
		return nearCheck{}, fmt.Errorf("near=%s: want near=KEY:TOLERANCE", spec)
	}
	v, err := numberValue(tol)
	if err != nil {
		return nearCheck{}, fmt.Errorf("near=%s: %v", spec, err)
	}
	return nearCheck{key: key, tolerance: v}, nil
}

// numberValue reads a number as a lab prints it: a duration (in seconds),
// or a plain number with . or , inside.
func numberValue(s string) (float64, error) {
	if d, err := time.ParseDuration(s); err == nil {
		return d.Seconds(), nil
	}
	return strconv.ParseFloat(strings.ReplaceAll(s, ",", ""), 64)
}

// nearMisses returns, for a block that matches, each checked number of the
// run that is further from the page's than its tolerance.
func nearMisses(expected, actual string, contains bool, checks []nearCheck) []string {
	if len(checks) == 0 {
		return nil
	}
	want, got := nonBlank(expected), nonBlank(actual)
	at, ok := align(want, got, contains, false)
	if !ok {
		return nil // the shape differs: reported as such
	}
	var misses []string
	for i, w := range want {
		if at[i] < 0 {
			continue
		}
		line := strings.TrimSpace(w)
		run := linePattern(line, false).FindStringSubmatch(got[at[i]])
		if run == nil {
			continue
		}
		for _, c := range checks {
			n, page := valueAfter(line, c.key)
			if n < 0 {
				continue
			}
			pv, err1 := numberValue(page)
			rv, err2 := numberValue(run[n+1])
			switch {
			case err1 != nil || err2 != nil:
				misses = append(misses, fmt.Sprintf("%s: cannot compare %q with the page's %q", c.key, run[n+1], page))
			case rv < pv-c.tolerance-1e-9 || rv > pv+c.tolerance+1e-9:
				misses = append(misses, fmt.Sprintf("%s: the run's %s is not within %v of the page's %s", c.key, run[n+1], c.tolerance, page))
			}
		}
	}
	return misses
}

// valueAfter finds the first value token after key in an expected line:
// its index among the line's values and its text, or -1.
func valueAfter(line, key string) (int, string) {
	k := strings.Index(line, key)
	if k < 0 {
		return -1, ""
	}
	pos, n := 0, 0
	for _, t := range tokenize(line, false) {
		if t.kind == tokenValue {
			if pos >= k+len(key) {
				return n, t.text
			}
			n++
		}
		pos += len(t.text)
	}
	return -1, ""
}

func TestNearHoldsTheNumbersAPageStates(t *testing.T) {
	page := "{\"code\":504}\nreal 3.237s\nread_wait_seconds_sum{r=\"cm\"} 6.001811687\nread_wait_seconds_count{r=\"cm\"} 2"
	checks := []nearCheck{{"real", 1.5}, {"read_wait_seconds_sum", 1.5}, {"read_wait_seconds_count", 0}}
	cases := []struct {
		name, run string
		misses    int
	}{
		{"the same figures", page, 0},
		{"within the tolerance", "{\"code\":504}\nreal 4.1s\nread_wait_seconds_sum{r=\"cm\"} 7.2\nread_wait_seconds_count{r=\"cm\"} 2", 0},
		{"a retried read", "{\"code\":504}\nreal 44.02s\nread_wait_seconds_sum{r=\"cm\"} 36.0\nread_wait_seconds_count{r=\"cm\"} 13", 3},
		{"a count one off", "{\"code\":504}\nreal 3.1s\nread_wait_seconds_sum{r=\"cm\"} 6.0\nread_wait_seconds_count{r=\"cm\"} 3", 1},
		{"a duration in another unit", "{\"code\":504}\nreal 3100ms\nread_wait_seconds_sum{r=\"cm\"} 6.0\nread_wait_seconds_count{r=\"cm\"} 2", 0},
	}
	for _, c := range cases {
		if !matches(page, c.run, false, false) {
			t.Errorf("%s: the run does not have the page's shape", c.name)
			continue
		}
		if got := nearMisses(page, c.run, false, checks); len(got) != c.misses {
			t.Errorf("%s: %d misses %q, want %d", c.name, len(got), got, c.misses)
		}
	}
}

func TestNearDirectiveParses(t *testing.T) {
	var p pending
	if err := p.apply(&lab{}, " near=real:1.5s near=count:0 (why) "); err != nil {
		t.Fatal(err)
	}
	if len(p.near) != 2 || p.near[0] != (nearCheck{"real", 1.5}) || p.near[1] != (nearCheck{"count", 0}) {
		t.Errorf("parsed %+v", p.near)
	}
	if err := p.apply(&lab{}, "near=real"); err == nil {
		t.Error("near without a tolerance parsed")
	}
}
