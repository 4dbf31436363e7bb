package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/transport"

	"minicp/internal/datadir"
	"minicp/watchcache"
)

// fanOutScenario is one row of the watch fan-out benchmark.
type fanOutScenario struct {
	name     string
	watchers int
	cache    bool
	kind     benchKind
}

// The write load of the fan-out benchmark: 100 pods/s for 10 s.
const (
	fanOutRate     = 100
	fanOutDuration = 10 * time.Second
)

// BenchmarkWatchFanOut measures M8's claim (one etcd watch, many clients) on this
// machine: N clients watch pods while 100 pods/s are created, and the
// benchmark reports the events delivered per second, the delay from each
// write's response to its delivery at the last watcher (p50, p99, max), and
// the CPU of the minicp process (which includes etcd), run as a separate
// process so that the watching clients' CPU is not counted. With the cache
// off every watcher is an etcd watch: the baseline, measured in the same
// run.
//
//	go test -run XXX -bench BenchmarkWatchFanOut -benchtime 1x -count 3 -timeout 30m ./e2e/
func BenchmarkWatchFanOut(b *testing.B) {
	bin := buildMinicp(b)
	for _, sc := range []fanOutScenario{
		{"cache-on/watchers-100", 100, true, podsKind},
		{"cache-on/watchers-1000", 1000, true, podsKind},
		{"cache-off/watchers-1000", 1000, false, podsKind},
	} {
		b.Run(sc.name, func(b *testing.B) {
			for b.Loop() {
				r := runFanOut(b, bin, sc)
				b.ReportMetric(r.deliveredPerSecond, "events/s")
				b.ReportMetric(r.p50.Seconds()*1000, "p50-ms")
				b.ReportMetric(r.p99.Seconds()*1000, "p99-ms")
				b.ReportMetric(r.max.Seconds()*1000, "max-ms")
				b.ReportMetric(r.serverCores, "server-cores")
				b.ReportMetric(r.clientCores, "client-cores")
				b.ReportMetric(r.writesPerSecond, "writes/s")
				b.ReportMetric(r.lost, "lost")
				b.ReportMetric(float64(r.encodings), "encodings")
				b.ReportMetric(float64(r.ended), "ended")
				b.Logf("%s: %s", sc.name, r)
			}
		})
	}
}

// BenchmarkWatchFanOutCustomResourceVsConfigMap is the fan-out to 1,000
// watchers (watch cache on) for ConfigMaps and for a custom resource
// carrying the same data, run alternately (each run a fresh minicp, the
// first kind alternating between iterations). It reports the median of
// each figure and the median per-pair ratio, Widget over ConfigMap.
//
//	go test -run XXX -bench BenchmarkWatchFanOutCustomResourceVsConfigMap -benchtime 3x -count 1 -timeout 60m ./e2e/
func BenchmarkWatchFanOutCustomResourceVsConfigMap(b *testing.B) {
	bin := buildMinicp(b)
	scenarios := []fanOutScenario{
		{"configmaps", 1000, true, configMapsKind},
		{"widgets", 1000, true, widgetsKind},
	}
	results := map[string][]fanOutResult{}
	var p99Ratios, cpuRatios []float64
	round := 0
	for b.Loop() {
		for _, sc := range rotated(scenarios, round) {
			results[sc.name] = append(results[sc.name], runFanOut(b, bin, sc))
		}
		cm, w := results["configmaps"][round], results["widgets"][round]
		p99Ratios = append(p99Ratios, w.p99.Seconds()/cm.p99.Seconds())
		cpuRatios = append(cpuRatios, w.serverCores/cm.serverCores)
		// One line per pair: the benchmark's log keeps only ten lines.
		b.Logf("pair %d (%s first): configmaps %s | widgets %s", round+1, rotated(scenarios, round)[0].name, cm, w)
		round++
	}
	for _, sc := range scenarios {
		var p50, p99 []time.Duration
		var perSecond, cores, lost []float64
		for _, r := range results[sc.name] {
			p50, p99 = append(p50, r.p50), append(p99, r.p99)
			perSecond, cores, lost = append(perSecond, r.deliveredPerSecond), append(cores, r.serverCores), append(lost, r.lost)
		}
		b.ReportMetric(ms(median(p50)), sc.name+"-p50-ms")
		b.ReportMetric(ms(median(p99)), sc.name+"-p99-ms")
		b.ReportMetric(medianFloat(perSecond), sc.name+"-events/s")
		b.ReportMetric(medianFloat(cores), sc.name+"-server-cores")
		b.ReportMetric(slices.Max(lost), sc.name+"-lost-max")
	}
	b.Logf("per pair, widgets over configmaps: p99 %.2f, server cores %.2f", p99Ratios, cpuRatios)
	b.ReportMetric(medianFloat(p99Ratios), "p99-widgets/cm") // sorts the ratios
	b.ReportMetric(medianFloat(cpuRatios), "server-cores-widgets/cm")
}

// fanOutResult is what one round measured.
type fanOutResult struct {
	writes, delivered  int64
	window             time.Duration // first write to last delivery
	deliveredPerSecond float64
	p50, p99, max      time.Duration
	serverCores        float64 // minicp CPU seconds per second of the window
	clientCores        float64 // the same for this process: watchers and writer
	writesPerSecond    float64 // the write rate achieved
	lost               float64 // deliveries missing at the end
	encodings          int64   // /debug/watchcache: object encodings of the kind
	ended              int64   // /debug/watchcache: watchers ended for being slow
}

func (r fanOutResult) String() string {
	return fmt.Sprintf("%d writes, %d deliveries in %s (%.0f/s); p50 %s p99 %s max %s; server %.2f cores, clients %.2f; encodings %d, ended %d",
		r.writes, r.delivered, r.window.Round(time.Millisecond), r.deliveredPerSecond,
		r.p50.Round(100*time.Microsecond), r.p99.Round(100*time.Microsecond), r.max.Round(100*time.Microsecond),
		r.serverCores, r.clientCores, r.encodings, r.ended)
}

func runFanOut(b *testing.B, bin string, sc fanOutScenario) fanOutResult {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	srv := startMinicpProcess(b, ctx, bin, "--watch-cache="+strconv.FormatBool(sc.cache))
	defer srv.stop(b)
	if sc.kind.install != nil {
		sc.kind.install(b, ctx, srv)
	}

	total := int(fanOutRate * fanOutDuration / time.Second)
	lastArrival := make([]atomic.Int64, total) // per pod: latest delivery, unix nanos
	var delivered atomic.Int64
	client := srv.client(&http.Transport{DisableCompression: true, MaxIdleConnsPerHost: -1})
	watchURL := srv.url + sc.kind.path + "?watch=1&resourceVersion=" + srv.collectionRV(b, client, sc.kind.path)
	var readers sync.WaitGroup
	for range sc.watchers {
		resp, err := client.Get(watchURL) // returns once the watch is registered
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("watch: %v %v", resp, err)
		}
		readers.Add(1)
		// One reader per watch: it records when each pod's ADDED arrives.
		go func() {
			defer readers.Done()
			defer resp.Body.Close()
			readFanOutEvents(resp.Body, lastArrival, &delivered)
		}()
	}

	cpuBefore, clientBefore, started := srv.cpu(b), selfCPU(b), time.Now()
	writeDone := writeFanOut(b, ctx, srv, sc.kind, total)
	writing := time.Since(started) // to the last response
	want := int64(total * sc.watchers)
	deadline := time.Now().Add(60 * time.Second)
	for delivered.Load() < want && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	finished := time.Now()
	cpu, clientCPU := srv.cpu(b)-cpuBefore, selfCPU(b)-clientBefore

	r := fanOutResult{writes: int64(total), delivered: delivered.Load(), window: finished.Sub(started)}
	r.deliveredPerSecond = float64(r.delivered) / r.window.Seconds()
	r.serverCores = cpu.Seconds() / r.window.Seconds()
	r.clientCores = clientCPU.Seconds() / r.window.Seconds()
	r.writesPerSecond = float64(total) / writing.Seconds()
	r.lost = float64(want - r.delivered)
	var delays []time.Duration
	for i := range total {
		if at := lastArrival[i].Load(); at != 0 {
			delays = append(delays, max(0, time.Duration(at-writeDone[i].UnixNano())))
		}
	}
	slices.Sort(delays)
	if len(delays) > 0 {
		r.p50, r.p99, r.max = delays[len(delays)/2], delays[len(delays)*99/100], delays[len(delays)-1]
	}
	if sc.cache {
		st := srv.cacheState(b, client, sc.kind.resource)
		r.encodings, r.ended = st.Encodings, st.SlowWatchersEnded
	}
	return r
}

// readFanOutEvents reads a JSON watch stream, one event per line, and
// records the arrival of each object "fan-<i>".
func readFanOutEvents(body interface{ Read([]byte) (int, error) }, lastArrival []atomic.Int64, delivered *atomic.Int64) {
	rd := bufio.NewReaderSize(body, 64<<10)
	marker := []byte(`"name":"fan-`)
	for {
		line, err := rd.ReadSlice('\n')
		if err != nil {
			return
		}
		now := time.Now().UnixNano()
		at := bytes.Index(line, marker)
		if at < 0 {
			continue
		}
		rest := line[at+len(marker):]
		end := bytes.IndexByte(rest, '"')
		i, err := strconv.Atoi(string(rest[:end]))
		if err != nil || i >= len(lastArrival) {
			continue
		}
		for {
			prev := lastArrival[i].Load()
			if now <= prev || lastArrival[i].CompareAndSwap(prev, now) {
				break
			}
		}
		delivered.Add(1)
	}
}

// writeFanOut creates objects fan-0..n-1 of kind at fanOutRate per
// second, open loop (a slow response does not delay the next write), and
// returns when each create's response arrived.
func writeFanOut(b testing.TB, ctx context.Context, p *minicpProcess, kind benchKind, n int) []time.Time {
	url := p.url + kind.path
	done := make([]time.Time, n)
	tick := time.NewTicker(time.Second / fanOutRate)
	defer tick.Stop()
	client := p.client(nil)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		<-tick.C
		wg.Add(1)
		go func() { // one create; ends with its response
			defer wg.Done()
			code, body := send(ctx, client, http.MethodPost, url, kind.body(fmt.Sprintf("fan-%d", i), i))
			done[i] = time.Now()
			if code != http.StatusCreated {
				errs <- fmt.Errorf("create %s fan-%d: %d %s", kind.name, i, code, body)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	return done
}

// buildMinicp builds cmd/minicp into a temporary directory.
func buildMinicp(b testing.TB) string {
	bin := filepath.Join(b.TempDir(), "minicp")
	cmd := exec.Command("go", "build", "-o", bin, "minicp/cmd/minicp")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build ./cmd/minicp: %v\n%s", err, out)
	}
	return bin
}

// minicpProcess is minicp running as a child process.
type minicpProcess struct {
	cmd     *exec.Cmd
	url     string
	etcdURL string   // its etcd's client URL
	token   string   // the bearer token it made in its data directory
	log     *os.File // its stderr
}

// client returns an HTTP client that sends the process's token, over
// transport (nil: a new default one).
func (p *minicpProcess) client(base *http.Transport) *http.Client {
	if base == nil {
		base = &http.Transport{}
	}
	return &http.Client{Transport: transport.NewBearerAuthRoundTripper(p.token, base)}
}

func startMinicpProcess(b testing.TB, ctx context.Context, bin string, args ...string) *minicpProcess {
	return startMinicpProcessIn(b, ctx, bin, b.TempDir(), args...)
}

// startMinicpProcessIn starts minicp on the data directory dir.
func startMinicpProcessIn(b testing.TB, ctx context.Context, bin, dir string, args ...string) *minicpProcess {
	args = append([]string{"--data-dir", dir, "--port", "0", "--etcd-client-port", "0", "--etcd-peer-port", "0",
		"--unsafe-no-fsync", "--etcd-compaction-interval", "0", "--simulated-nodes", "0"}, args...)
	cmd := exec.CommandContext(ctx, bin, args...)
	logFile, err := os.Create(filepath.Join(b.TempDir(), "minicp.log"))
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = logFile // its warnings would break the benchmark's output lines
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	p := &minicpProcess{cmd: cmd, log: logFile}
	scanner := bufio.NewScanner(out)
	for scanner.Scan() {
		if url, ok := strings.CutPrefix(strings.TrimSpace(scanner.Text()), "apiserver: "); ok {
			// The same port answers plain HTTP on loopback: the benchmarks
			// measure the apiserver, not TLS.
			p.url = strings.Replace(url, "https://", "http://", 1)
			break
		}
	}
	if scanner.Scan() { // the banner's next line names etcd
		if url, ok := strings.CutPrefix(strings.TrimSpace(scanner.Text()), "etcd:"); ok {
			p.etcdURL = strings.TrimSpace(url)
		}
	}
	if p.url == "" {
		b.Fatal("minicp did not print its apiserver URL")
	}
	token, err := os.ReadFile(filepath.Join(dir, datadir.TokenFile))
	if err != nil {
		b.Fatalf("reading minicp's token: %v", err)
	}
	p.token = strings.TrimSpace(string(token))
	// Drain the rest of stdout; this goroutine ends when the process does.
	go func() {
		for scanner.Scan() {
		}
	}()
	return p
}

func (p *minicpProcess) stop(b testing.TB) {
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		b.Logf("stopping minicp: %v", err)
	}
	if err := p.cmd.Wait(); err != nil {
		b.Logf("minicp exited: %v", err)
	}
	if p.log != nil {
		if err := p.log.Close(); err != nil {
			b.Logf("closing minicp's log: %v", err)
		}
	}
}

// cpu is the process's user+system CPU time so far, from /proc.
func (p *minicpProcess) cpu(b *testing.B) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		b.Fatal(err)
	}
	// Fields after the parenthesised command name; utime and stime are
	// the 14th and 15th fields of the line, in clock ticks (100 per second).
	fields := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+2:]))
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		b.Fatalf("parsing /proc/%d/stat: %v %v", p.cmd.Process.Pid, err1, err2)
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// collectionRV is the resourceVersion of a consistent LIST of path.
func (p *minicpProcess) collectionRV(b testing.TB, client *http.Client, path string) string {
	resp, err := client.Get(p.url + path)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct {
		Metadata struct{ ResourceVersion string } `json:"metadata"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || list.Metadata.ResourceVersion == "" {
		b.Fatalf("LIST %s: %d %v", path, resp.StatusCode, err)
	}
	return list.Metadata.ResourceVersion
}

// cacheState is /debug/watchcache/<resource>.
func (p *minicpProcess) cacheState(b *testing.B, client *http.Client, resource string) watchcache.ResourceStatus {
	resp, err := client.Get(p.url + "/debug/watchcache/" + resource)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	var rs watchcache.ResourceStatus
	if err := json.NewDecoder(resp.Body).Decode(&rs); err != nil || rs.CacheState == nil {
		b.Fatalf("GET /debug/watchcache/%s: %v", resource, err)
	}
	return rs
}

// selfCPU is this process's user+system CPU time so far.
func selfCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
