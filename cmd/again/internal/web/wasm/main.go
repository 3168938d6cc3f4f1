//go:build js && wasm

// Command wasm is the calculator page's maths, compiled to WebAssembly.
//
// It is package page (and through it internal/calc and backoff) for the
// browser. The page runs it in a Web Worker (static/worker.js), so that a
// long computation never blocks typing. It installs
// globalThis.againCompute(inputs, lang), globalThis.againSolve(inputs,
// param, lang), globalThis.againExport(inputs, format),
// globalThis.againStorm(inputs, lang) (the storm view, computed by
// internal/sim, the code of `again sim storm`), globalThis.againShed(inputs,
// lang) (the shedding view, the code of `again sim outage --shed`) and
// globalThis.againDefaults(), which take and return JSON strings (inputs is
// a JSON object keyed by flag name), then calls globalThis.againReady and
// waits forever.
//
// Build it with `go generate ./cmd/again/internal/web`, never by hand.
package main

import (
	"encoding/json"
	"syscall/js"

	"github.com/again-go/again/cmd/again/internal/web/internal/page"
)

func inputs(v js.Value) map[string]string {
	m := map[string]string{}
	if err := json.Unmarshal([]byte(v.String()), &m); err != nil {
		return map[string]string{}
	}
	return m
}

func reply(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return `{"errors":[{"field":"","text":"page: ` + err.Error() + `"}]}`
	}
	return string(b)
}

func main() {
	js.Global().Set("againCompute", js.FuncOf(func(_ js.Value, args []js.Value) any {
		if len(args) != 2 {
			return reply(page.Result{Errors: []page.Message{{Text: "page: againCompute takes two arguments"}}})
		}
		return reply(page.Compute(inputs(args[0]), page.Lang(args[1].String())))
	}))
	js.Global().Set("againSolve", js.FuncOf(func(_ js.Value, args []js.Value) any {
		if len(args) != 3 {
			return reply(page.SolveResult{Error: "page: againSolve takes three arguments"})
		}
		return reply(page.Solve(inputs(args[0]), args[1].String(), page.Lang(args[2].String())))
	}))
	js.Global().Set("againExport", js.FuncOf(func(_ js.Value, args []js.Value) any {
		if len(args) != 2 {
			return reply(page.Download{Error: "page: againExport takes two arguments"})
		}
		return reply(page.Export(inputs(args[0]), args[1].String()))
	}))
	js.Global().Set("againStorm", js.FuncOf(func(_ js.Value, args []js.Value) any {
		if len(args) != 2 {
			return reply(page.StormResult{Error: "page: againStorm takes two arguments"})
		}
		return reply(page.Storm(inputs(args[0]), page.Lang(args[1].String())))
	}))
	js.Global().Set("againShed", js.FuncOf(func(_ js.Value, args []js.Value) any {
		if len(args) != 2 {
			return reply(page.ShedResult{Error: "page: againShed takes two arguments"})
		}
		return reply(page.Shed(inputs(args[0]), page.Lang(args[1].String())))
	}))
	js.Global().Set("againDefaults", js.FuncOf(func(js.Value, []js.Value) any {
		return reply(page.Defaults())
	}))
	if ready := js.Global().Get("againReady"); ready.Type() == js.TypeFunction {
		ready.Invoke()
	}
	select {}
}
