package e2e

// A headless Chromium driven over the DevTools protocol, for the live
// page's test (ui_test.go): start it, open a page, evaluate JavaScript in
// it, take screenshots. It speaks the protocol over a websocket with
// golang.org/x/net/websocket; nothing is downloaded.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/websocket"
)

// chromiumPath is where Debian's chromium package installs the browser.
const chromiumPath = "/usr/bin/chromium"

// browserPage is one tab of a headless Chromium the test started.
type browserPage struct {
	t  *testing.T
	ws *websocket.Conn
	// mu serialises protocol calls: each waits for its own answer.
	mu     sync.Mutex
	nextID int
}

// startChromium starts headless Chromium with a fresh profile, opens url
// in its first tab, and stops the browser when the test ends. The test is
// skipped, saying why, where Chromium is not installed.
func startChromium(t *testing.T, url string) *browserPage {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Skipf("headless Chromium is not installed at %s (apt-get install chromium); skipping the browser test", chromiumPath)
	}
	profile := t.TempDir()
	var stderr bytes.Buffer
	cmd := exec.Command(chromiumPath,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-extensions", "--disable-default-apps", "--hide-scrollbars",
		"--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0", "--remote-allow-origins=*",
		"--user-data-dir="+profile, "--window-size=1400,1500", "about:blank")
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", chromiumPath, err)
	}
	t.Cleanup(func() {
		// Chromium has no graceful stop once its protocol connection is
		// closed; the profile is a temporary directory.
		if err := cmd.Process.Kill(); err != nil {
			t.Logf("stopping chromium: %v", err)
		}
		if err := cmd.Wait(); err != nil && !strings.Contains(err.Error(), "killed") {
			t.Logf("chromium exited: %v", err)
		}
	})

	port := waitDevToolsPort(t, profile, &stderr)
	wsURL := pageTarget(t, port)
	ws, err := websocket.Dial(wsURL, "", "http://127.0.0.1/")
	if err != nil {
		t.Fatalf("connecting to Chromium's DevTools at %s: %v", wsURL, err)
	}
	ws.MaxPayloadBytes = 64 << 20 // screenshots
	t.Cleanup(func() {
		if err := ws.Close(); err != nil {
			t.Logf("closing the DevTools connection: %v", err)
		}
	})
	p := &browserPage{t: t, ws: ws}
	p.call("Page.enable", nil, nil)
	p.call("Page.navigate", map[string]any{"url": url}, nil)
	return p
}

// waitDevToolsPort reads the port Chromium writes to DevToolsActivePort
// in its profile once its protocol server listens.
func waitDevToolsPort(t *testing.T, profile string, stderr *bytes.Buffer) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, err := os.ReadFile(filepath.Join(profile, "DevToolsActivePort"))
		if err == nil {
			if port, _, ok := strings.Cut(string(b), "\n"); ok && port != "" {
				return port
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("Chromium did not open its DevTools port within 30 s; its output:\n%s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// pageTarget returns the DevTools websocket URL of the browser's tab.
func pageTarget(t *testing.T, port string) string {
	t.Helper()
	resp, err := http.Get("http://127.0.0.1:" + port + "/json/list")
	if err != nil {
		t.Fatalf("listing Chromium's tabs: %v", err)
	}
	defer resp.Body.Close()
	var targets []struct {
		Type, WebSocketDebuggerURL string
	}
	if err := json.NewDecoder(resp.Body).Decode(&targets); err != nil {
		t.Fatalf("listing Chromium's tabs: %v", err)
	}
	for _, tg := range targets {
		if tg.Type == "page" {
			return tg.WebSocketDebuggerURL
		}
	}
	t.Fatalf("Chromium has no tab open: %+v", targets)
	return ""
}

// call sends one protocol command and decodes its result into out (if
// not nil), skipping the events that arrive meanwhile.
func (p *browserPage) call(method string, params map[string]any, out any) {
	p.t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.nextID++
	id := p.nextID
	msg, err := json.Marshal(map[string]any{"id": id, "method": method, "params": params})
	if err != nil {
		p.t.Fatal(err)
	}
	if err := p.ws.SetDeadline(time.Now().Add(30 * time.Second)); err != nil {
		p.t.Fatal(err)
	}
	if err := websocket.Message.Send(p.ws, string(msg)); err != nil {
		p.t.Fatalf("DevTools %s: %v", method, err)
	}
	for {
		var raw string
		if err := websocket.Message.Receive(p.ws, &raw); err != nil {
			p.t.Fatalf("DevTools %s: waiting for the answer: %v", method, err)
		}
		var answer struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(raw), &answer); err != nil {
			p.t.Fatalf("DevTools %s: %v", method, err)
		}
		if answer.ID != id {
			continue // an event, or the answer of nothing we wait for
		}
		if answer.Error != nil {
			p.t.Fatalf("DevTools %s: %s", method, answer.Error.Message)
		}
		if out != nil {
			if err := json.Unmarshal(answer.Result, out); err != nil {
				p.t.Fatalf("DevTools %s: decoding %s: %v", method, answer.Result, err)
			}
		}
		return
	}
}

// eval evaluates a JavaScript expression in the page and decodes its
// value (which must be JSON-serialisable) into out.
func (p *browserPage) eval(expr string, out any) {
	p.t.Helper()
	var res struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	p.call("Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true}, &res)
	if res.ExceptionDetails != nil {
		p.t.Fatalf("evaluating %s: %s %s", expr, res.ExceptionDetails.Text, res.ExceptionDetails.Exception.Description)
	}
	if out != nil && len(res.Result.Value) > 0 {
		if err := json.Unmarshal(res.Result.Value, out); err != nil {
			p.t.Fatalf("evaluating %s: decoding %s: %v", expr, res.Result.Value, err)
		}
	}
}

// text returns the text of the first element matching a CSS selector,
// or "" when there is none.
func (p *browserPage) text(selector string) string {
	p.t.Helper()
	var s string
	p.eval(fmt.Sprintf(`(document.querySelector(%q) || {textContent: ""}).textContent`, selector), &s)
	return strings.TrimSpace(s)
}

// screenshot saves a PNG of the whole page (at least 1400 px wide) to path.
func (p *browserPage) screenshot(path string) {
	p.t.Helper()
	var res struct {
		Data string `json:"data"`
	}
	p.call("Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": true}, &res)
	png, err := base64.StdEncoding.DecodeString(res.Data)
	if err != nil {
		p.t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		p.t.Fatal(err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		p.t.Fatal(err)
	}
	p.t.Logf("screenshot: %s", path)
}
