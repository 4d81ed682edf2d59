package main

import (
	"strings"
	"testing"
)

const sample = `{"Action":"start","Package":"m/ptyplex/ptyplex/a"}
{"Action":"run","Package":"m/ptyplex/ptyplex/a","Test":"TestSlow"}
{"Action":"output","Package":"m/ptyplex/ptyplex/a","Test":"TestSlow","Output":"=== RUN   TestSlow\n"}
{"Action":"pass","Package":"m/ptyplex/ptyplex/a","Test":"TestSlow/sub","Elapsed":2}
{"Action":"pass","Package":"m/ptyplex/ptyplex/a","Test":"TestSlow","Elapsed":3.5}
{"Action":"output","Package":"m/ptyplex/ptyplex/a","Test":"TestBad","Output":"    a_test.go:9: it broke\n"}
{"Action":"fail","Package":"m/ptyplex/ptyplex/a","Test":"TestBad","Elapsed":0.1}
{"Action":"output","Package":"m/ptyplex/ptyplex/a","Output":"coverage: 42.5% of statements\n"}
{"Action":"output","Package":"m/ptyplex/ptyplex/a","Output":"FAIL\tm/ptyplex/ptyplex/a\t4.0s\n"}
{"Action":"fail","Package":"m/ptyplex/ptyplex/a","Elapsed":4}
{"Action":"pass","Package":"m/ptyplex/ptyplex/b","Test":"TestQuick","Elapsed":0.2}
{"Action":"output","Package":"m/ptyplex/ptyplex/b","Output":"ok  \tm/ptyplex/ptyplex/b\t0.3s\tcoverage: 90.0% of statements\n"}
{"Action":"pass","Package":"m/ptyplex/ptyplex/b","Elapsed":0.3}
not json: passed through
`

func TestReport(t *testing.T) {
	var live strings.Builder
	r := newRun(&live)
	if err := r.read(strings.NewReader(sample)); err != nil {
		t.Fatal(err)
	}
	if r.ok() {
		t.Error("a run with a failed test is ok")
	}
	a, b := r.pkgs["m/ptyplex/ptyplex/a"], r.pkgs["m/ptyplex/ptyplex/b"]
	if a.top != 2 || a.all != 3 || a.coverage != 42.5 || a.action != "fail" {
		t.Errorf("package a: %+v", *a)
	}
	if b.top != 1 || b.coverage != 90 || b.action != "pass" {
		t.Errorf("package b: %+v", *b)
	}
	for _, want := range []string{"--- FAIL: TestBad (a)", "it broke", "ok  \tm/ptyplex/ptyplex/b", "not json: passed through"} {
		if !strings.Contains(live.String(), want) {
			t.Errorf("live output lacks %q:\n%s", want, live.String())
		}
	}
	var sum strings.Builder
	r.summary(&sum, 1)
	if !strings.Contains(sum.String(), "The 1 slowest tests:\n       3.5s  TestSlow  a\n") || !strings.Contains(sum.String(), "1 tests FAILED") {
		t.Errorf("summary:\n%s", sum.String())
	}
}

func TestCompare(t *testing.T) {
	before, after := newRun(nil), newRun(nil)
	before.read(strings.NewReader(sample))
	after.read(strings.NewReader(strings.ReplaceAll(sample, "90.0%", "80.0%")))
	var out strings.Builder
	if compare(&out, before, after) || !strings.Contains(out.String(), "LOWER") {
		t.Errorf("lower coverage not marked:\n%s", out.String())
	}
	out.Reset()
	if !compare(&out, before, before) {
		t.Errorf("a run compared with itself is marked lower:\n%s", out.String())
	}
}
