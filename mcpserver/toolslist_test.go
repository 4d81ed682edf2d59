//go:build unix

package mcpserver_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// toolsListBound is what tools/list may cost: it goes into every agent's
// context before the agent does anything, so it must stay far below what
// a whole task's replies cost (mcpserver/README.md has the figures).
const toolsListBound = 8000

// TestToolsListSize: the tool list, as sent (names, descriptions and
// schemas as JSON), stays within toolsListBound characters.
func TestToolsListSize(t *testing.T) {
	t.Parallel()
	c := connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	res, err := c.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, tool := range res.Tools {
		b, err := json.Marshal(tool)
		if err != nil {
			t.Fatal(err)
		}
		in, _ := json.Marshal(tool.InputSchema)
		out, _ := json.Marshal(tool.OutputSchema)
		t.Logf("%-10s %5d chars (description %d, input schema %d, output schema %d)", tool.Name, len(b), len(tool.Description), len(in), len(out))
		total += len(b)
	}
	// The result's _meta names the server and its version, whose length
	// is the build's (a tag, a pseudo-version, "+dirty" from a working
	// tree with changes): a tree with uncommitted files went over the
	// bound by that suffix alone. The bound is on the rest.
	meta, _ := json.Marshal(res.Meta)
	res.Meta = nil
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("tools/list result: %d characters (tools alone %d), and %d of _meta", len(b), total, len(meta))
	if len(b) > toolsListBound {
		t.Errorf("tools/list is %d characters, over the bound of %d", len(b), toolsListBound)
	}
}

// TestHelpNamesEveryTool: `ptyplex mcp --help` names every tool the server
// lists (it left out run and screenshot), and the server reports the
// version the binary does (it said "dev" whatever the build).
func TestHelpNamesEveryTool(t *testing.T) {
	t.Parallel()
	c := connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	res, err := c.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	help, err := exec.Command(bin, "mcp", "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("mcp --help: %v\n%s", err, help)
	}
	about := strings.Join(strings.Fields(string(help)), " ")
	for _, tool := range res.Tools {
		if !regexp.MustCompile(`\b` + regexp.QuoteMeta(tool.Name) + `\b`).MatchString(about) {
			t.Errorf("mcp --help does not name the tool %q:\n%s", tool.Name, help)
		}
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if f := strings.Fields(string(out)); len(f) < 2 || c.cs.InitializeResult().ServerInfo.Version != f[1] {
		t.Errorf("the server reports version %q; ptyplex --version says %q", c.cs.InitializeResult().ServerInfo.Version, out)
	}
}
