package main

import (
	"strings"
	"testing"
)

func TestDescribeValueNamesCustomResources(t *testing.T) {
	for _, tc := range []struct {
		value, want string
	}{
		{`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}`, "JSON (--storage-media-type=application/json)"},
		{`{"apiVersion":"lab.example.com/v1","kind":"Widget","metadata":{"name":"w"}}`, "JSON of a custom resource (Widget, lab.example.com/v1): always JSON, as upstream stores them"},
		{`{"not":"an object"}`, "JSON (--storage-media-type=application/json)"},
	} {
		if got := describeValue([]byte(tc.value)); !strings.Contains(got, tc.want) {
			t.Errorf("describeValue(%s) = %q, want %q", tc.value, got, tc.want)
		}
	}
}
