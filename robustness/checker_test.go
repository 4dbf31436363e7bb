//go:build linux

package robustness

import (
	"fmt"
	"sort"
)

// verdict is what a check of one watcher found.
type verdict struct {
	checked    int      // events and list items compared with etcd's history
	violations []string // each a sentence naming the watcher, the revision and what was wrong
}

func (v *verdict) fail(format string, args ...any) {
	v.violations = append(v.violations, fmt.Sprintf(format, args...))
}

// checkSegments compares what a raw watcher saw with etcd's history (M5):
//
//   - each LIST holds exactly the objects etcd held at the list's revision;
//   - after it, the events are etcd's changes after that revision, in
//     order: no duplicate, none missing (a gap is allowed only where the
//     watcher listed again after a 410), each with the right type (ADDED
//     for a key's creation, MODIFIED, DELETED), value and resourceVersion;
//     a DELETED carries the object's last value with the deletion's
//     revision;
//   - a BOOKMARK is never behind an event already sent, and never passes
//     over an event not sent.
func checkSegments(name string, h *history, segments []segment) verdict {
	var v verdict
	for si, seg := range segments {
		where := fmt.Sprintf("%s segment %d (LIST at %d)", name, si, seg.listRV)
		checkList(&v, where, h, seg)
		pos := seg.listRV
		next := h.next(pos)
		for _, ev := range seg.events {
			v.checked++
			if ev.typ == "BOOKMARK" {
				if ev.state.rv < pos {
					v.fail("%s: BOOKMARK at %d is behind the event at %d already sent", where, ev.state.rv, pos)
				}
				if next < len(h.events) && h.events[next].rv <= ev.state.rv {
					v.fail("%s: BOOKMARK at %d passes over %s, never sent", where, ev.state.rv, describeEvent(h.events[next]))
				}
				pos = max(pos, ev.state.rv)
				next = h.next(pos)
				continue
			}
			if ev.state.rv <= pos {
				v.fail("%s: %s %s at %d after position %d: a duplicate or out of order", where, ev.typ, ev.state.name, ev.state.rv, pos)
				continue
			}
			if next < len(h.events) && h.events[next].rv < ev.state.rv {
				v.fail("%s: %s missing before %s %s at %d", where, describeEvent(h.events[next]), ev.typ, ev.state.name, ev.state.rv)
			}
			next = h.next(ev.state.rv - 1)
			if next >= len(h.events) || h.events[next].rv != ev.state.rv {
				v.fail("%s: %s %s at %d is not in etcd's history", where, ev.typ, ev.state.name, ev.state.rv)
			} else if want := h.events[next]; eventType(want) != ev.typ || want.objState != ev.state {
				v.fail("%s: got %s %s=%q at %d, etcd's history has %s", where, ev.typ, ev.state.name, ev.state.value, ev.state.rv, describeEvent(want))
			}
			pos = ev.state.rv
			next = h.next(pos)
		}
	}
	return v
}

// checkList compares a LIST with etcd's state at its revision.
func checkList(v *verdict, where string, h *history, seg segment) {
	if seg.listRV < h.baseRev {
		v.fail("%s: list resourceVersion is before the test began (%d)", where, h.baseRev)
		return
	}
	want := h.stateAt(seg.listRV)
	for _, got := range seg.list {
		v.checked++
		if w, ok := want[got.name]; !ok {
			v.fail("%s: lists %s at %d, which etcd did not hold then", where, got.name, got.rv)
		} else if w != got {
			v.fail("%s: lists %s=%q at %d, etcd held %q at %d", where, got.name, got.value, got.rv, w.value, w.rv)
		}
		delete(want, got.name)
	}
	for _, missing := range sortedStates(want) {
		v.fail("%s: misses %s=%q at %d", where, missing.name, missing.value, missing.rv)
	}
}

// eventType is the watch event type etcd's change becomes.
func eventType(ev truthEvent) string {
	switch {
	case ev.del:
		return "DELETED"
	case ev.created:
		return "ADDED"
	default:
		return "MODIFIED"
	}
}

func describeEvent(ev truthEvent) string {
	return fmt.Sprintf("%s %s=%q at %d", eventType(ev), ev.name, ev.value, ev.rv)
}

func sortedStates(m map[string]objState) []objState {
	out := make([]objState, 0, len(m))
	for _, st := range m {
		out = append(out, st)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}
