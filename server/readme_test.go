package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/llmrelay/llmrelay/server/catalog"
	"github.com/llmrelay/llmrelay/server/provider"
)

// TestREADMEErrorTable: the README's error table says what the code does.
// Every (code, reason) pair the gateway produces is in the table and every
// pair in the table is produced, and each HTTP status the table names is
// classified into its row.
func TestREADMEErrorTable(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	type pair struct{ code, reason string }
	// What the code produces, one error of each kind through toStatus.
	produced := map[pair]bool{}
	errs := []error{
		invalidField("messages", "x"), notFoundModel("m"), missingCapability("m", "tools"), undecodable(errors.New("x"), ""),
		&catalog.OptionError{Model: "m", Option: "temperature", Reason: "x"},
		context.Canceled, context.DeadlineExceeded, errors.New("a bug"),
		&outputError{errors: []string{"/answer: missing property"}},
	}
	for k := range kindTable {
		errs = append(errs, &provider.Error{Provider: "p", Kind: k, Message: "x"})
	}
	// An HTTP status as an adapter reports it: its kind and the status.
	httpErr := func(n int) error {
		return &provider.Error{Provider: "p", Kind: provider.KindForStatus(n), HTTPStatus: n, Message: "x"}
	}
	for n := 400; n < 600; n++ {
		errs = append(errs, httpErr(n))
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	pairOf := func(e error) pair {
		st := status.Convert(toStatus(context.Background(), e, nil, nil, log))
		for _, d := range st.Details() {
			if info, ok := d.(*errdetails.ErrorInfo); ok {
				return pair{st.Code().String(), info.GetReason()}
			}
		}
		return pair{st.Code().String(), ""}
	}
	for _, e := range errs {
		if p := pairOf(e); p.reason != "" {
			produced[p] = true
		}
	}

	start := strings.Index(string(raw), "| signal | gRPC code | reason |")
	if start < 0 {
		t.Fatal("README has no error table")
	}
	codeNames := map[string]bool{}
	for c := codes.OK; c <= codes.Unauthenticated; c++ {
		codeNames[c.String()] = true
	}
	reasonRE, statusRE := regexp.MustCompile("`([A-Z_]+)`"), regexp.MustCompile(`\b[1-5][0-9]{2}\b`)
	var rows [][]string
	explicit := map[string]bool{} // HTTP statuses named in some row
	for _, line := range strings.Split(string(raw[start:]), "\n")[2:] {
		if !strings.HasPrefix(line, "|") {
			break
		}
		cols := strings.Split(strings.Trim(line, "|"), "|")
		rows = append(rows, cols)
		for _, s := range statusRE.FindAllString(cols[0], -1) {
			explicit[s] = true
		}
	}
	documented := map[pair]bool{}
	for _, cols := range rows {
		line := strings.Join(cols, "|")
		if len(cols) != 3 {
			t.Fatalf("row %q: want 3 columns", line)
		}
		code := strings.Fields(cols[1])[0]
		if !codeNames[code] {
			t.Errorf("row %q: %q is not a gRPC code", line, code)
		}
		row := map[pair]bool{}
		for _, m := range reasonRE.FindAllStringSubmatch(cols[2], -1) {
			p := pair{code, m[1]}
			row[p], documented[p] = true, true
			if !produced[p] {
				t.Errorf("README: %s %s, which the code never produces", code, m[1])
			}
		}
		statuses := statusRE.FindAllString(cols[0], -1)
		if strings.Contains(cols[0], "5xx") { // every 5xx no row names
			for n := 500; n < 600; n++ {
				if s := strconv.Itoa(n); !explicit[s] {
					statuses = append(statuses, s)
				}
			}
		}
		for _, s := range statuses {
			n, _ := strconv.Atoi(s)
			if p := pairOf(httpErr(n)); !row[p] {
				t.Errorf("README row %q: HTTP %d is %s %s in the code", strings.TrimSpace(cols[0]), n, p.code, p.reason)
			}
		}
	}
	for p := range produced {
		if !documented[p] {
			t.Errorf("the code produces %s %s, which the README's table does not list", p.code, p.reason)
		}
	}
}
