//go:build unix

package mcpserver

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A panicking tool handler becomes a tool error and the server keeps
// serving.
func TestPanicInToolIsToolError(t *testing.T) {
	t.Parallel()
	s, err := New(Options{Binary: "/nonexistent/ptyplex"})
	if err != nil {
		t.Fatal(err)
	}
	type noArgs struct{}
	addTool(s, toolDef{tool: mcp.Tool{Name: "boom", Description: "panics"}},
		func(context.Context, noArgs) (string, struct{}, error) { panic("kaboom") })

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, ct := mcp.NewInMemoryTransports()
	served := make(chan error, 1)
	go func() { served <- s.Run(ctx, st) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "boom", Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("protocol error: %v", err)
	}
	if !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "kaboom") {
		t.Fatalf("result %+v", res)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "list", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("list after panic: %v %+v", err, res)
	}
	cs.Close()
	if err := <-served; err != nil {
		t.Fatalf("Run: %v", err)
	}
}
