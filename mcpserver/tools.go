//go:build unix

package mcpserver

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// addTools registers every tool. Each lives in a tool_*.go file with its
// input and output types and its description.
func (s *Server) addTools() {
	addTool(s, startTool, s.start)
	addTool(s, runTool, s.run)
	addTool(s, inputTool, s.input)
	addTool(s, outputTool, s.output)
	addTool(s, screenshotTool, s.screenshot)
	addTool(s, waitTool, s.wait)
	addTool(s, statusTool, s.status)
	addTool(s, listTool, s.list)
	addTool(s, killTool, s.kill)
	addTool(s, resizeTool, s.resize)
	addTool(s, stopTool, s.stop)
	addTool(s, debugTool, s.debug)
}

// toolDef is a tool's metadata plus the constraints the jsonschema struct
// tag cannot carry (it has only descriptions).
type toolDef struct {
	tool  mcp.Tool
	enums map[string][]any // the values of string properties
	// nonEmpty are slice properties that must be arrays of at least one
	// item: the generated schema also allows null.
	nonEmpty []string
}

// handler is a tool implementation: it returns the text shown to the agent
// and the structured result.
type handler[In, Out any] func(ctx context.Context, in In) (text string, out Out, err error)

// addTool registers h under def. A Go error becomes a tool error
// (IsError) with the error's text, never a protocol failure, and a panic in
// h is recovered into a tool error, so one bad call cannot crash the server.
func addTool[In, Out any](s *Server, def toolDef, h handler[In, Out]) {
	t := def.tool
	if len(def.enums) > 0 || len(def.nonEmpty) > 0 {
		schema, err := jsonschema.For[In](nil)
		if err != nil {
			panic(fmt.Sprintf("mcpserver: schema of tool %s: %v", t.Name, err))
		}
		prop := func(name string) *jsonschema.Schema {
			p, ok := schema.Properties[name]
			if !ok {
				panic(fmt.Sprintf("mcpserver: tool %s has no property %s", t.Name, name))
			}
			return p
		}
		for name, values := range def.enums {
			prop(name).Enum = values
		}
		for _, name := range def.nonEmpty {
			p := prop(name)
			p.Type, p.Types, p.MinItems = "array", nil, jsonschema.Ptr(1)
		}
		t.InputSchema = schema
	}
	name := t.Name
	// Registered with an output of type any, so that tools/list carries no
	// output schema: every agent pays for the list in its context before it
	// does anything, and the result's fields are named in the result text
	// and in mcpserver/README.md. The structured result is still sent.
	mcp.AddTool(s.mcp, &t, func(ctx context.Context, _ *mcp.CallToolRequest, in In) (res *mcp.CallToolResult, out any, err error) {
		defer func() {
			if r := recover(); r != nil {
				s.log.Error("panic in tool", "tool", name, "panic", r, "stack", string(debug.Stack()))
				res, out, err = nil, nil, fmt.Errorf("internal error in tool %s: %v (the server is still running; please report this)", name, r)
			}
		}()
		text, typed, err := h(ctx, in)
		if err != nil {
			return nil, nil, err
		}
		out = typed
		content := []mcp.Content{&mcp.TextContent{Text: text}}
		if more, ok := any(typed).(withContent); ok {
			content = append(content, more.content()...)
		}
		return &mcp.CallToolResult{Content: content}, out, nil
	})
}

// withContent is a tool result that carries content besides its text (the
// screenshot tool's image).
type withContent interface{ content() []mcp.Content }
