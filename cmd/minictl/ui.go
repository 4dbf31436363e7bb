package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
)

// uiLoginPath is where the apiserver hands out a live-page login link to
// a client that shows its bearer token (POST only; a cookie is not
// enough, so a web page cannot ask for one).
const uiLoginPath = "/ui/login"

// loginLink is the apiserver's answer at uiLoginPath.
type loginLink struct {
	URL string `json:"url"`
	// SessionSeconds is how long the session the link opens lasts.
	SessionSeconds int64 `json:"sessionSeconds"`
}

func (a *app) uiCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "ui",
		Short: "print a new one-time login link to the live page",
		Long: `ui asks the running minicp for a new one-time link to its live page
(/ui/) and prints it: open it in a browser to log that browser in, without
restarting minicp. It asks with the bearer token of the kubeconfig, as every
write to minicp must; a link works once, the session it opens lasts until
it expires or minicp stops.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.ui(cmd.Context())
		},
	}
}

// ui asks for a login link and prints it.
func (a *app) ui(ctx context.Context) error {
	cfg, err := a.restConfig(ctx)
	if err != nil {
		return err
	}
	link, err := requestLoginLink(ctx, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.out, "live page: %s\n", link.URL)
	fmt.Fprintf(a.out, "           (a one-time login link: it sets a cookie for this browser, good for %s, and opens %s)\n",
		lifetime(link.SessionSeconds), linkHome(link.URL))
	return nil
}

// lifetime says how long a session lasts, in hours when it is whole hours.
func lifetime(seconds int64) string {
	if seconds > 0 && seconds%3600 == 0 {
		return fmt.Sprintf("%d h", seconds/3600)
	}
	return (time.Duration(seconds) * time.Second).String()
}

// requestLoginLink POSTs to the apiserver's login path with the
// kubeconfig's credentials and decodes the link it answers.
func requestLoginLink(ctx context.Context, cfg *rest.Config) (loginLink, error) {
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return loginLink{}, fmt.Errorf("building a client for %s: %w", cfg.Host, err)
	}
	client.Timeout = 10 * time.Second
	target := strings.TrimSuffix(cfg.Host, "/") + uiLoginPath
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, nil)
	if err != nil {
		return loginLink{}, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return loginLink{}, fmt.Errorf("asking %s for a login link: %w", target, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return loginLink{}, fmt.Errorf("asking %s for a login link: %w", target, err)
	}
	if resp.StatusCode != http.StatusOK {
		var status struct{ Message string }
		if json.Unmarshal(raw, &status) != nil || status.Message == "" {
			status.Message = strings.TrimSpace(string(raw))
		}
		return loginLink{}, fmt.Errorf("asking %s for a login link: %s: %s", target, resp.Status, status.Message)
	}
	var link loginLink
	if err := json.Unmarshal(raw, &link); err != nil || link.URL == "" {
		return loginLink{}, fmt.Errorf("asking %s for a login link: the answer is not a link: %s", target, raw)
	}
	return link, nil
}

// linkHome is the page a login link opens: /ui/ on the link's own
// scheme, host and port, where its cookie is good.
func linkHome(link string) string {
	u, err := url.Parse(link)
	if err != nil {
		return "/ui/"
	}
	u.Path, u.RawQuery = "/ui/", ""
	return u.String()
}
