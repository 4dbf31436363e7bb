package main

// minictl fault: add, list and clear the faults of a minicp started with
// --enable-debug-faults, through its /debug/faults API (package faults).
//
//	minictl fault add etcd.range --delay 2s [--resource pods] [--error timeout]
//	minictl fault ls
//	minictl fault clear [POINT]
//	minictl fault stop-member minicp-etcd-1      (and restart-member)

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"minicp/faults"
)

// defaultAPIServer is minicp's default address.
const defaultAPIServer = "http://127.0.0.1:8080"

func faultCommand(ctx context.Context, dataDir string, args []string, out io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("fault takes add, ls or clear: %w", errUsage)
	}
	fs := flag.NewFlagSet("fault "+args[0], flag.ContinueOnError)
	server := fs.String("server", "", "apiserver URL (default: the kubeconfig minicp wrote in --data-dir, else "+defaultAPIServer+")")
	resource := fs.String("resource", "", "only requests on this resource (pods, configmaps, events, leases.coordination.k8s.io)")
	delay := fs.Duration("delay", 0, "hold each request back this long (it still ends at its deadline)")
	errText := fs.String("error", "", "fail each request: for etcd points "+faults.ErrorTimeout+" or "+faults.ErrorNoLeader+"; for admission any text")
	cmd := args[0]
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	// Flags may also follow the point: minictl fault add etcd.range --delay 2s.
	var positional []string
	for rest := fs.Args(); len(rest) > 0; rest = fs.Args() {
		positional = append(positional, rest[0])
		if err := fs.Parse(rest[1:]); err != nil {
			return err
		}
	}
	api := &faultAPI{url: apiServerURL(*server, dataDir) + "/debug/faults", client: &http.Client{Timeout: 10 * time.Second}}
	switch {
	case cmd == "add" && len(positional) == 1:
		f := faults.Fault{Point: faults.Point(positional[0]), Resource: *resource, Delay: faults.Duration(*delay), Error: *errText}
		var added faults.Fault
		if err := api.do(ctx, http.MethodPost, "", f, &added); err != nil {
			return err
		}
		fmt.Fprintf(out, "fault added: %s\n", describeFault(added))
		return nil
	case cmd == "ls" && len(positional) == 0:
		var list faults.List
		if err := api.do(ctx, http.MethodGet, "", nil, &list); err != nil {
			return err
		}
		return printFaults(out, list.Faults)
	case (cmd == "stop-member" || cmd == "restart-member") && len(positional) == 1:
		action := strings.TrimSuffix(cmd, "-member")
		var done faults.MemberAction
		if err := api.do(ctx, http.MethodPost, "/members/"+positional[0]+"/"+action, nil, &done); err != nil {
			return err
		}
		fmt.Fprintf(out, "etcd member %s: %s done\n", done.Member, done.Action)
		return nil
	case cmd == "clear" && len(positional) <= 1:
		query := ""
		if len(positional) == 1 {
			query = "?point=" + positional[0]
		}
		var cleared faults.Cleared
		if err := api.do(ctx, http.MethodDelete, query, nil, &cleared); err != nil {
			return err
		}
		fmt.Fprintf(out, "%d fault(s) cleared\n", cleared.Cleared)
		return nil
	}
	return fmt.Errorf("fault add POINT [--delay D] [--error E] [--resource R] | fault ls | fault clear [POINT] | fault stop-member NAME | fault restart-member NAME; points: %v: %w", faults.Points, errUsage)
}

// apiServerURL is --server, or the server of minicp's kubeconfig.
func apiServerURL(flagValue, dataDir string) string {
	if flagValue != "" {
		return strings.TrimSuffix(flagValue, "/")
	}
	cfg, err := clientcmd.LoadFromFile(filepath.Join(dataDir, "kubeconfig"))
	if err == nil {
		if ctx, ok := cfg.Contexts[cfg.CurrentContext]; ok {
			if cluster, ok := cfg.Clusters[ctx.Cluster]; ok && cluster.Server != "" {
				return strings.TrimSuffix(cluster.Server, "/")
			}
		}
	}
	return defaultAPIServer
}

type faultAPI struct {
	url    string
	client *http.Client
}

// do sends one request and decodes the answer into out, or returns the
// Status message the apiserver answered with.
func (a *faultAPI) do(ctx context.Context, method, query string, body, out any) error {
	var payload io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		payload = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.url+query, payload)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := a.client.Do(req)
	if err != nil {
		return fmt.Errorf("reaching %s: %w", a.url, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode == http.StatusNotFound {
		return fmt.Errorf("%s answered 404: start minicp with --enable-debug-faults", a.url)
	}
	if resp.StatusCode >= 300 {
		var status struct{ Message string }
		if json.Unmarshal(raw, &status) == nil && status.Message != "" {
			return fmt.Errorf("%s: %s", resp.Status, status.Message)
		}
		return fmt.Errorf("%s: %s", resp.Status, bytes.TrimSpace(raw))
	}
	return json.Unmarshal(raw, out)
}

func describeFault(f faults.Fault) string {
	parts := []string{string(f.Point)}
	if f.Resource != "" {
		parts = append(parts, "on "+f.Resource)
	}
	if f.Delay > 0 {
		parts = append(parts, "delay "+time.Duration(f.Delay).String())
	}
	if f.Error != "" {
		parts = append(parts, "error "+f.Error)
	}
	return strings.Join(parts, ", ")
}

func printFaults(out io.Writer, list []faults.Fault) error {
	if len(list) == 0 {
		fmt.Fprintln(out, "no faults")
		return nil
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "POINT\tRESOURCE\tDELAY\tERROR\tHITS")
	for _, f := range list {
		resource, errText := f.Resource, f.Error
		if resource == "" {
			resource = "*"
		}
		if errText == "" {
			errText = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\n", f.Point, resource, time.Duration(f.Delay), errText, f.Hits)
	}
	return tw.Flush()
}
