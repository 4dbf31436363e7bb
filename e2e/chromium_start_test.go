package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A browser that crashes at start is tried again, and one that crashes on
// every start skips the browser test rather than failing it: the crash
// says nothing about the live page.

// fakeBrowser writes a script standing in for Chromium: it counts its
// starts in a file and crashes with a segmentation fault on the first
// crashes of them, then runs real instead (when given).
func fakeBrowser(t *testing.T, crashes int, real string) (binary, starts string) {
	dir := t.TempDir()
	binary, starts = filepath.Join(dir, "chromium"), filepath.Join(dir, "starts")
	script := "#!/bin/sh\n" +
		"echo start >> " + starts + "\n" +
		"if [ $(wc -l < " + starts + ") -le " + strconv.Itoa(crashes) + " ]; then\n" +
		"  echo 'Received signal 11 SEGV_MAPERR' >&2; kill -SEGV $$\n" +
		"fi\n" +
		"exec " + real + " \"$@\"\n"
	if err := os.WriteFile(binary, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return binary, starts
}

func countStarts(t *testing.T, starts string) int {
	b, err := os.ReadFile(starts)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "start")
}

func TestBrowserThatCrashesOnEveryStartSkipsTheTest(t *testing.T) {
	binary, starts := fakeBrowser(t, chromiumStarts, "false")
	var inner *testing.T
	t.Run("browser", func(t *testing.T) {
		inner = t
		startBrowser(t, binary, "about:blank")
		t.Error("startBrowser returned a page from a browser that crashed on every start")
	})
	if !inner.Skipped() || inner.Failed() {
		t.Errorf("the browser test was not skipped (skipped %v, failed %v)", inner.Skipped(), inner.Failed())
	}
	if n := countStarts(t, starts); n != chromiumStarts {
		t.Errorf("the browser was started %d times, want %d", n, chromiumStarts)
	}
}

func TestBrowserThatCrashesOnceIsStartedAgain(t *testing.T) {
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Skipf("headless Chromium is not installed at %s", chromiumPath)
	}
	binary, starts := fakeBrowser(t, 1, chromiumPath)
	page := startBrowser(t, binary, "about:blank")
	var sum int
	page.eval("1 + 2", &sum)
	if sum != 3 {
		t.Errorf("the browser evaluated 1 + 2 to %d", sum)
	}
	if n := countStarts(t, starts); n != 2 {
		t.Errorf("the browser was started %d times, want 2 (one crash, one start)", n)
	}
}
