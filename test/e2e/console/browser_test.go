package console

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// browser is a headless Chromium (Debian's chromium package) driven over the DevTools protocol,
// with every console message of level warning or error, every uncaught exception and every
// failed load recorded.
type browser struct {
	t   *testing.T
	ctx context.Context

	mu   sync.Mutex
	errs []string
}

// chromiumPath finds Chromium; without it the test skips, except in CI, where .ci/run installs
// it and sets CI.
func chromiumPath(t *testing.T) string {
	for _, name := range []string{os.Getenv("MUSTER_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"} {
		if name == "" {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("Chromium is not installed (apt-get install -y chromium) and CI is set")
	}
	t.Skip("Chromium is not installed (apt-get install -y chromium); the console's browser test needs it")
	return ""
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	path := chromiumPath(t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("metrics-recording-only", true),
		chromedp.Flag("no-pings", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(filepath.Join(t.TempDir(), "chromium-profile")),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(ctx, 4*time.Minute)
	t.Cleanup(func() { cancelT(); cancelC(); cancelA() })
	b := &browser{t: t, ctx: ctx}
	// Start the browser and its first tab, then subscribe to its console before any page of
	// ours loads.
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("starting Chromium: %v", err)
	}
	msgs := chromedp.Console(ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			switch m.Type {
			case chromedp.ConsoleError, chromedp.ConsoleWarning, chromedp.ConsoleException, "assert":
				b.mu.Lock()
				b.errs = append(b.errs, string(m.Type)+": "+m.String())
				b.mu.Unlock()
			}
		}
	}()
	return b
}

// do runs steps, failing the test on an error.
func (b *browser) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// open navigates to url and waits for the page's live region.
func (b *browser) open(url string) {
	b.t.Helper()
	b.do("open "+url, chromedp.Navigate(url), chromedp.WaitReady(chromedp.CSS("#live")))
}

func eval[T any](b *browser, expr string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// text is the text content of the first element matching sel.
func (b *browser) text(sel string) string {
	b.t.Helper()
	return strings.TrimSpace(eval[string](b, `(document.querySelector(`+jsString(sel)+`)||{textContent:"<missing "+`+jsString(sel)+`+">"}).textContent`))
}

// all is an attribute of every element matching sel.
func (b *browser) all(sel, attr string) []string {
	b.t.Helper()
	return eval[[]string](b, `Array.from(document.querySelectorAll(`+jsString(sel)+`)).map(e => e.getAttribute(`+jsString(attr)+`))`)
}

// waitJS polls a JavaScript condition until it is true.
func (b *browser) waitJS(what, cond string, d time.Duration) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, d)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](cond, chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		b.t.Fatalf("waiting for %s (%s): %v", what, cond, err)
	}
}

// noConsoleErrors fails on any console error, warning or exception seen so far.
func (b *browser) noConsoleErrors(where string) {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, e := range b.errs {
		b.t.Errorf("%s: browser console: %s", where, e)
	}
	b.errs = nil
}

// screenshot keeps a PNG of the viewport under docs/console when MUSTER_UPDATE_SCREENSHOTS is
// set (the pictures in git are refreshed by hand, never by CI).
// With a selector, the picture is of that element only.
func (b *browser) screenshot(name string, sel ...string) {
	b.t.Helper()
	if os.Getenv("MUSTER_UPDATE_SCREENSHOTS") == "" {
		return
	}
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	shot := chromedp.CaptureScreenshot()
	if len(sel) > 0 {
		shot = chromedp.Screenshot(chromedp.CSS(sel[0]))
	}
	png, err := chromedp.Run(ctx, shot)
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	dir, _ := filepath.Abs("../../../docs/console")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

func jsString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}
