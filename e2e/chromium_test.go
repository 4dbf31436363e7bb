package e2e

// A headless Chromium driven over the DevTools protocol, for the live
// page's test (ui_test.go): start it, open a page, evaluate JavaScript in
// it, take screenshots. It speaks the protocol over a websocket with
// golang.org/x/net/websocket; nothing is downloaded.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
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
	// exited is closed when the browser process has ended: a protocol
	// call that fails after it did is a browser crash, not the page's fault.
	exited <-chan struct{}
	stderr *lockedBuffer
	// mu serialises protocol calls: each waits for its own answer.
	mu     sync.Mutex
	nextID int
}

// chromiumStarts is how many times startChromium tries to start the
// browser: headless Chromium now and then crashes at start on a loaded
// machine (a segmentation fault before its DevTools port opens) and runs
// fine on the next try.
const chromiumStarts = 3

// chromiumFlags keep headless Chromium from what crashes it in containers
// and on small machines: /dev/shm is often tiny there (it writes shared
// memory to the profile's temporary files instead), and the zygote
// process forks renderers in ways sandboxes without user namespaces
// reject.
var chromiumFlags = []string{
	"--headless", "--no-sandbox", "--no-zygote", "--disable-dev-shm-usage", "--disable-gpu",
	"--disable-software-rasterizer", "--disable-quic", "--no-first-run",
	"--disable-background-networking", "--disable-component-update", "--disable-sync",
	"--disable-extensions", "--disable-default-apps", "--disable-crash-reporter", "--hide-scrollbars",
	"--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0", "--remote-allow-origins=*",
	"--window-size=1400,1500",
}

// startChromium starts headless Chromium with a fresh profile, opens url
// in its first tab, and stops the browser when the test ends. The test is
// skipped, saying why, where Chromium is not installed or crashes on
// every start: a browser that cannot run says nothing about the page.
func startChromium(t *testing.T, url string) *browserPage {
	t.Helper()
	return startBrowser(t, chromiumPath, url)
}

// startBrowser is startChromium with the browser's binary named.
func startBrowser(t *testing.T, binary, url string) *browserPage {
	t.Helper()
	if _, err := os.Stat(binary); err != nil {
		t.Skipf("headless Chromium is not installed at %s (apt-get install chromium); skipping the browser test", binary)
	}
	var failures []string
	for try := 1; try <= chromiumStarts; try++ {
		p, err := tryChromium(t, binary, url)
		if err == nil {
			return p
		}
		failures = append(failures, fmt.Sprintf("start %d: %v", try, err))
		t.Logf("headless Chromium did not start (try %d of %d): %v", try, chromiumStarts, err)
	}
	t.Skipf("headless Chromium crashed or hung on each of %d starts; skipping the browser test:\n%s",
		chromiumStarts, strings.Join(failures, "\n"))
	return nil
}

// tryChromium makes one start of the browser and connects to its tab. On
// an error the browser it started is stopped already.
func tryChromium(t *testing.T, binary, url string) (*browserPage, error) {
	profile, err := os.MkdirTemp("", "minicp-chromium-")
	if err != nil {
		return nil, err
	}
	stderr := &lockedBuffer{}
	cmd := exec.Command(binary, append(chromiumFlags, "--user-data-dir="+profile, "about:blank")...)
	cmd.Stderr = stderr
	// The browser dies with the test binary (a timeout panic, a kill)
	// rather than outliving it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(profile)
		return nil, fmt.Errorf("starting %s: %v", binary, err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	stop := func() {
		// Chromium has no graceful stop once its protocol connection is
		// closed; the profile is a temporary directory.
		_ = cmd.Process.Kill()
		<-exited
		os.RemoveAll(profile)
	}
	port, err := waitDevToolsPort(profile, exited)
	if err == nil {
		var wsURL string
		if wsURL, err = pageTarget(port); err == nil {
			var ws *websocket.Conn
			if ws, err = websocket.Dial(wsURL, "", "http://127.0.0.1/"); err == nil {
				ws.MaxPayloadBytes = 64 << 20 // screenshots
				t.Cleanup(func() {
					if err := ws.Close(); err != nil {
						t.Logf("closing the DevTools connection: %v", err)
					}
					stop()
					if waitErr != nil && !strings.Contains(waitErr.Error(), "killed") {
						t.Logf("chromium exited: %v", waitErr)
					}
				})
				p := &browserPage{t: t, ws: ws, exited: exited, stderr: stderr}
				p.call("Page.enable", nil, nil)
				p.call("Page.navigate", map[string]any{"url": url}, nil)
				return p, nil
			}
			err = fmt.Errorf("connecting to Chromium's DevTools at %s: %v", wsURL, err)
		}
	}
	stop()
	if waitErr != nil && !strings.Contains(waitErr.Error(), "killed") {
		err = fmt.Errorf("%v (chromium exited: %v)", err, waitErr)
	}
	return nil, fmt.Errorf("%v; its output:\n%s", err, stderr.String())
}

// lockedBuffer is the browser's stderr: written by the process's copying
// goroutine, read by the test when something fails.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitDevToolsPort reads the port Chromium writes to DevToolsActivePort
// in its profile once its protocol server listens.
func waitDevToolsPort(profile string, exited <-chan struct{}) (string, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, err := os.ReadFile(filepath.Join(profile, "DevToolsActivePort"))
		if err == nil {
			if port, _, ok := strings.Cut(string(b), "\n"); ok && port != "" {
				return port, nil
			}
		}
		select {
		case <-exited:
			return "", errors.New("Chromium exited before it opened its DevTools port")
		default:
		}
		if time.Now().After(deadline) {
			return "", errors.New("Chromium did not open its DevTools port within 30 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// pageTarget returns the DevTools websocket URL of the browser's tab.
func pageTarget(port string) (string, error) {
	resp, err := http.Get("http://127.0.0.1:" + port + "/json/list")
	if err != nil {
		return "", fmt.Errorf("listing Chromium's tabs: %v", err)
	}
	defer resp.Body.Close()
	var targets []struct {
		Type, WebSocketDebuggerURL string
	}
	if err := json.NewDecoder(resp.Body).Decode(&targets); err != nil {
		return "", fmt.Errorf("listing Chromium's tabs: %v", err)
	}
	for _, tg := range targets {
		if tg.Type == "page" {
			return tg.WebSocketDebuggerURL, nil
		}
	}
	return "", fmt.Errorf("Chromium has no tab open: %+v", targets)
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
		p.browserFailed(method, err)
	}
	for {
		var raw string
		if err := websocket.Message.Receive(p.ws, &raw); err != nil {
			p.browserFailed(method, fmt.Errorf("waiting for the answer: %v", err))
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

// browserFailed ends the test on a protocol call that failed: skipped
// when the browser crashed meanwhile (that says nothing about the page),
// failed otherwise.
func (p *browserPage) browserFailed(method string, err error) {
	p.t.Helper()
	select {
	case <-p.exited:
		p.t.Skipf("headless Chromium crashed during the test (DevTools %s: %v); skipping the browser test; its output:\n%s",
			method, err, p.stderr.String())
	case <-time.After(time.Second): // a crash closes the connection a moment before the process is reaped
	}
	p.t.Fatalf("DevTools %s: %v", method, err)
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
