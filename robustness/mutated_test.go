//go:build linux

package robustness

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Bodies broken at random, sent as creates, updates and patches in every
// media type minicp reads: each answer is a success (the mutation left a
// valid object) or a Status whose code is the HTTP code, a 4xx, never a
// 5xx; minicp is alive throughout and a refused request leaves etcd as it
// was.
func TestRandomlyBrokenBodiesAreRefusedWithAStatus(t *testing.T) {
	n := pick(300, 5000)
	c := startChild(t, childOptions{})
	cs := c.clientset()
	createNamespace(t, cs)
	ctx := testContext(t, 20*time.Minute)
	if _, err := cs.CoreV1().ConfigMaps(testNamespace).Create(ctx, configMap("existing", "v", ""), metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the object patches and updates go to: %v", err)
	}
	etcd, err := newEtcdClient(c.etcdEndpoints())
	if err != nil {
		t.Fatal(err)
	}
	defer etcd.Close()
	hc := httpClient(t, c.restConfig())
	host := c.restConfig().Host

	codes := map[int]int{}
	for i := range n {
		method, path, contentType, body := brokenRequest(i)
		before := etcdRevision(t, ctx, etcd)
		status, code := send(t, hc, host, method, path, contentType, body)
		codes[code]++
		where := fmt.Sprintf("%s %s (%s) %.120q", method, path, contentType, body)
		switch {
		case code >= 200 && code < 300:
			continue
		case code >= 500 || code < 400:
			t.Errorf("%s: HTTP %d, want a 2xx or a 4xx: %s", where, code, status.Message)
		case status.Kind != "Status" || status.Code != int32(code) || status.Message == "":
			t.Errorf("%s: HTTP %d answered with %+v, not a Status of that code with a message", where, code, status)
		}
		if after := etcdRevision(t, ctx, etcd); after != before {
			t.Errorf("%s: refused with %d, but etcd's revision moved %d -> %d", where, code, before, after)
		}
		if i%50 == 0 {
			c.requireAlive(fmt.Sprintf("after %d broken bodies", i+1))
		}
	}
	c.requireAlive(fmt.Sprintf("after %d broken bodies", n))
	t.Logf("robustness: broken_bodies=%d answers_by_code=%v", n, codes)
}

// brokenRequest is the i-th random request: a valid body, broken in one of
// several ways, sent with one of the verbs and media types that take one.
func brokenRequest(i int) (method, path, contentType string, body []byte) {
	name := fmt.Sprintf("broken-%d", i)
	valid := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"%s","labels":{"a":"b"}},"data":{"k":"v%d"}}`, name, i)
	method, path = "POST", "/configmaps"
	switch rand.IntN(4) {
	case 1:
		method, path = "PUT", "/configmaps/existing"
		valid = strings.Replace(valid, name, "existing", 1)
	case 2:
		method, path = "PATCH", "/configmaps/existing"
		valid = fmt.Sprintf(`{"metadata":{"labels":{"a":"b"}},"data":{"k":"v%d"}}`, i)
	}
	types := []string{"application/json", "application/yaml", "application/vnd.kubernetes.protobuf"}
	if method == "PATCH" {
		types = []string{"application/merge-patch+json", "application/strategic-merge-patch+json", "application/json-patch+json"}
	}
	return method, path, types[rand.IntN(len(types))], breakBody([]byte(valid))
}

// breakBody damages b one of several ways.
func breakBody(b []byte) []byte {
	out := append([]byte(nil), b...)
	switch rand.IntN(6) {
	case 0: // cut short
		return out[:rand.IntN(len(out))]
	case 1: // a random byte anywhere
		out[rand.IntN(len(out))] = byte(rand.IntN(256))
		return out
	case 2: // a structural character inserted
		at := rand.IntN(len(out))
		return append(out[:at], append([]byte{`{}[]:,"\`[rand.IntN(8)]}, b[at:]...)...)
	case 3: // a value replaced by another type
		return []byte(strings.Replace(string(out), `"b"`, []string{"1", "null", "[]", "{}", "true", `"` + strings.Repeat("x", 100) + `"`}[rand.IntN(6)], 1))
	case 4: // a span deleted
		at := rand.IntN(len(out))
		return append(out[:at], b[min(len(b), at+1+rand.IntN(10)):]...)
	default: // random bytes
		junk := make([]byte, 1+rand.IntN(200))
		for i := range junk {
			junk[i] = byte(rand.IntN(256))
		}
		return junk
	}
}
