package txn

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// kafkajsVersion is the kafkajs release the test installs from the npm registry.
const kafkajsVersion = "2.2.4"

// installKafkaJS installs kafkajs with npm into a test-owned directory (reused by later runs)
// and returns its node_modules. Without node and npm the test skips, except in CI (.ci/run
// installs them), where it fails.
func installKafkaJS(t *testing.T) string {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s not installed (.ci/run installs nodejs and npm)", tool)
			}
			t.Skipf("%s not installed", tool)
		}
	}
	dir := filepath.Join(os.TempDir(), "muster-test-kafkajs-"+kafkajsVersion)
	mods := filepath.Join(dir, "node_modules")
	if _, err := os.Stat(filepath.Join(mods, "kafkajs", "package.json")); err == nil {
		return mods
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("npm", "install", "--no-audit", "--no-fund", "--no-save", "--prefix", dir, "kafkajs@"+kafkajsVersion)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm install kafkajs@%s: %v\n%s", kafkajsVersion, err, out)
	}
	return mods
}

// kafkajsCopier runs kafkajs/copier.js.
func kafkajsCopier(mods string) copierCmd {
	script, _ := filepath.Abs(filepath.Join("kafkajs", "copier.js"))
	return func(addr string) *exec.Cmd {
		cmd := exec.Command("node", script, addr, "copy-kafkajs", "copier-kafkajs", "in", "out", "150")
		cmd.Env = append(os.Environ(), "NODE_PATH="+mods)
		return cmd
	}
}

// TestEOSKillKafkaJS is the crash property of runKillCopy with a kafkajs copier
// (transaction().sendOffsets); kafkajs has no static membership, so each restart waits for the
// killed member's session (6 s) to expire.
func TestEOSKillKafkaJS(t *testing.T) {
	mods := installKafkaJS(t)
	start := time.Now()
	runKillCopy(t, "kafkajs", kafkajsCopier(mods), 2000)
	t.Logf("took %v", time.Since(start).Round(time.Second))
}
