//go:build linux

package robustness

import (
	"strings"
	"testing"
)

// The checker itself must fail on every kind of violation it claims to
// find; this table feeds it made-up streams against a made-up history.
func TestCheckerFindsEveryKindOfViolation(t *testing.T) {
	// etcd's history: a created at 11, b created at 12, a modified at 13,
	// a deleted at 14, on top of c, present at the base revision 10.
	h := history{baseRev: 10, base: map[string]objState{"c": {"c", 5, "c0"}}, events: []truthEvent{
		{objState: objState{"a", 11, "a1"}, created: true},
		{objState: objState{"b", 12, "b1"}, created: true},
		{objState: objState{"a", 13, "a2"}, prevRV: 11},
		{objState: objState{"a", 14, "a2"}, del: true, prevRV: 13},
	}}
	h.index()
	added := func(name string, rv int64, v string) seen { return seen{"ADDED", objState{name, rv, v}} }
	modified := func(name string, rv int64, v string) seen { return seen{"MODIFIED", objState{name, rv, v}} }
	deleted := func(name string, rv int64, v string) seen { return seen{"DELETED", objState{name, rv, v}} }
	bookmark := func(rv int64) seen { return seen{"BOOKMARK", objState{rv: rv}} }
	base := []objState{{"c", 5, "c0"}}
	all := []seen{added("a", 11, "a1"), added("b", 12, "b1"), modified("a", 13, "a2"), deleted("a", 14, "a2")}

	cases := []struct {
		name string
		seg  segment
		want string // "" = no violation
	}{
		{"the whole history in order passes", segment{10, base, all}, ""},
		{"a relist in the middle and bookmarks pass", segment{12, []objState{{"c", 5, "c0"}, {"a", 11, "a1"}, {"b", 12, "b1"}}, []seen{bookmark(12), all[2], all[3], bookmark(14)}}, ""},
		{"a list missing an object fails", segment{10, nil, all}, "misses c"},
		{"a list with a stale value fails", segment{13, []objState{{"c", 5, "c0"}, {"a", 11, "a1"}, {"b", 12, "b1"}}, nil}, "lists a=\"a1\" at 11, etcd held \"a2\" at 13"},
		{"a duplicate event fails", segment{10, base, []seen{all[0], all[0], all[1]}}, "a duplicate or out of order"},
		{"a missing event fails", segment{10, base, []seen{all[0], all[2]}}, "ADDED b=\"b1\" at 12 missing"},
		{"a DELETED without the last value fails", segment{10, base, []seen{all[0], all[1], all[2], deleted("a", 14, "a1")}}, "etcd's history has DELETED a=\"a2\" at 14"},
		{"MODIFIED for a creation fails", segment{10, base, []seen{modified("a", 11, "a1")}}, "got MODIFIED a"},
		{"an event etcd never had fails", segment{10, base, []seen{added("z", 15, "z")}}, "not in etcd's history"},
		{"a bookmark behind an event fails", segment{10, base, []seen{all[0], all[1], bookmark(11)}}, "BOOKMARK at 11 is behind"},
		{"a bookmark over an unsent event fails", segment{10, base, []seen{all[0], bookmark(13)}}, "BOOKMARK at 13 passes over ADDED b"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := checkSegments("w", &h, []segment{tc.seg})
			got := strings.Join(v.violations, "\n")
			if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Errorf("violations:\n%s\nwant one containing %q", got, tc.want)
			}
		})
	}
}

// The informer check fails on versions etcd never wrote, versions going
// back, a delete without the last value, and a tombstone for a live object.
func TestInformerCheckFindsEveryKindOfViolation(t *testing.T) {
	h := history{baseRev: 10, base: map[string]objState{}, events: []truthEvent{
		{objState: objState{"a", 11, "a1"}, created: true},
		{objState: objState{"a", 12, "a2"}, prevRV: 11},
		{objState: objState{"a", 13, "a2"}, del: true, prevRV: 12},
		{objState: objState{"b", 14, "b1"}, created: true},
	}}
	h.index()
	a1, a2, b1 := objState{"a", 11, "a1"}, objState{"a", 12, "a2"}, objState{"b", 14, "b1"}
	cases := []struct {
		name    string
		notices []notice
		want    string
	}{
		{"every version passes", []notice{{kind: "add", obj: a1}, {kind: "update", old: a1, obj: a2}, {kind: "delete", obj: objState{"a", 13, "a2"}}, {kind: "add", obj: b1}}, ""},
		{"a relist that skips versions and infers a delete passes", []notice{{kind: "add", obj: a1}, {kind: "delete", obj: a1, tombstone: true}, {kind: "add", obj: b1}, {kind: "update", old: b1, obj: b1}}, ""},
		{"a version etcd never wrote fails", []notice{{kind: "add", obj: objState{"a", 11, "zz"}}}, "value \"zz\""},
		{"a version going back fails", []notice{{kind: "add", obj: a2}, {kind: "update", old: a2, obj: a1}}, "went back"},
		{"an update from a version never notified fails", []notice{{kind: "add", obj: a1}, {kind: "update", old: a2, obj: a2}}, "the last notified"},
		{"a delete without the last value fails", []notice{{kind: "add", obj: a1}, {kind: "delete", obj: objState{"a", 13, "a1"}}}, "value \"a1\", etcd's change at 13"},
		{"a tombstone for an object etcd kept fails", []notice{{kind: "add", obj: b1}, {kind: "delete", obj: b1, tombstone: true}}, "a tombstone must carry"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v, _ := checkNotices("i", &h, tc.notices)
			got := strings.Join(v.violations, "\n")
			if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Errorf("violations:\n%s\nwant one containing %q", got, tc.want)
			}
		})
	}
}
