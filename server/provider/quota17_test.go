package provider

import (
	"encoding/json"
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/proto"
)

func same(s string) string { return s }

// TestQuota17ErrorInfoQuota: the quota a RATE_LIMIT_EXCEEDED ErrorInfo's
// metadata names, in the keys Google's API front end writes (quota_limit,
// quota_limit_value, quota_location, quota_unit, service), when no
// QuotaFailure came: a limit of 0 is a value (the quota is none at all),
// the location its dimension. A QuotaFailure's violations win over it.
func TestQuota17ErrorInfoQuota(t *testing.T) {
	t.Parallel()
	md := `{"quota_location": "us-south1", "quota_limit_value": "0", "quota_unit": "1/min/{project}/{region}", "quota_limit": "ApiRequestsPerMinutePerProjectPerRegion", "service": "generativelanguage.googleapis.com"}`
	var st GoogleStatus
	body := `{"code":429,"status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"RATE_LIMIT_EXCEEDED","domain":"googleapis.com","metadata":` + md + `}]}`
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatal(err)
	}
	e := &Error{}
	if r := ApplyGoogleDetails(e, st.Details, same); r != "RATE_LIMIT_EXCEEDED" {
		t.Errorf("reason %q", r)
	}
	want := &errdetails.QuotaFailure_Violation{ApiService: "generativelanguage.googleapis.com",
		QuotaId: "ApiRequestsPerMinutePerProjectPerRegion", QuotaDimensions: map[string]string{"location": "us-south1"}}
	if len(e.Quota) != 1 || !proto.Equal(e.Quota[0], want) {
		t.Errorf("quota %v, want %v", e.Quota, want)
	}

	// A limit of 60 (one of 0 is no quota at all, which no RetryInfo
	// opens: TestQuota24ZeroQuotaWords).
	md60 := strings.Replace(md, `"quota_limit_value": "0"`, `"quota_limit_value": "60"`, 1)
	body = `{"code":429,"status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"RATE_LIMIT_EXCEEDED","metadata":` + md60 + `},` +
		`{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaId":"q"}]},{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1.5s"}]}`
	st = GoogleStatus{}
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatal(err)
	}
	e = &Error{}
	ApplyGoogleDetails(e, st.Details, same)
	if len(e.Quota) != 1 || e.Quota[0].GetQuotaId() != "q" || e.RetryAfter.String() != "1.5s" {
		t.Errorf("quota %v, retry after %v", e.Quota, e.RetryAfter)
	}
	if v := errorInfoQuota(map[string]string{"service": "generativelanguage.googleapis.com", "consumer": "projects/1"}, same); v != nil {
		t.Errorf("no quota named, violation %v", v)
	}
}

// TestQuota17JSONInt64: protobuf int64s in JSON, as strings or numbers;
// anything else is unset, never an error that would lose the body.
func TestQuota17JSONInt64(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]JSONInt64{
		`"250000"`: {250000, true}, `15`: {15, true}, `"0"`: {0, true}, `"-3"`: {-3, true},
		`null`: {}, `"many"`: {}, `1.5`: {}, `"9223372036854775808"`: {}, `{}`: {}, `""`: {},
	} {
		var v struct {
			N JSONInt64 `json:"n"`
		}
		if err := json.Unmarshal([]byte(`{"n":`+in+`}`), &v); err != nil || v.N != want {
			t.Errorf("%s: %+v (%v), want %+v", in, v.N, err, want)
		}
	}
}

// TestLeftovers19GoogleMessageField: the field path of the first
// validation line of a Google error message, the request message's name
// left out; prose names none.
func TestLeftovers19GoogleMessageField(t *testing.T) {
	t.Parallel()
	for msg, want := range map[string]string{
		"* BatchEmbedContentsRequest.requests: at most 100 requests can be in one batch":                                                                               "requests",
		"* GenerateContentRequest.contents: contents is not specified\n":                                                                                               "contents",
		"* GenerateContentRequest.tools[0].function_declarations[0].parameters.properties: should be non-empty for OBJECT type\n":                                      "tools[0].function_declarations[0].parameters.properties",
		"* GenerateContentRequest.contents[8].parts[0].data: required oneof field 'data' must have one initialized field\n* GenerateContentRequest.contents: x":        "contents[8].parts[0].data",
		"The GenerateContentRequest proto is invalid:\n  * tools[0].function_declarations[178].name: [FIELD_INVALID] Invalid function name.":                           "tools[0].function_declarations[178].name",
		"The GenerateContentRequest proto is invalid:\n  * tools[0].function_declarations[53].name: [FIELD_INVALID] x\n  * tools[0].function_declarations[54].name: y": "tools[0].function_declarations[53].name",
		"The GenerateContentRequest proto is invalid: * tools[0].name: x":                                                                                              "",
		"Invalid JSON payload received. Unknown name \"additionalProperties\" at 'tools[0].function_declarations[0].parameters': Cannot find field.\nInvalid JSON payload received. Unknown name \"additionalProperties\" at 'tools[0].function_declarations[1].parameters': Cannot find field.": "tools[0].function_declarations[0].parameters",
		"Invalid JSON payload received. Unknown name \"response_format\": Cannot find field.": "",
		"Penalty is not enabled for models/gemini-2.5-flash":                                  "",
		"Request contains an invalid argument.":                                               "",
	} {
		if got := googleMessageField(msg); got != want {
			t.Errorf("googleMessageField(%q) = %q, want %q", msg, got, want)
		}
	}
	// A BadRequest detail's field wins over the message's.
	e := &Error{Message: "* GenerateContentRequest.contents: contents is not specified"}
	ApplyGoogleDetails(e, []GoogleDetail{{Type: "type.googleapis.com/google.rpc.BadRequest", FieldViolations: []GoogleFieldViolation{{Field: "generation_config"}}}}, same)
	if e.Param != "generation_config" {
		t.Errorf("param %q", e.Param)
	}
	e = &Error{Message: "* GenerateContentRequest.contents: contents is not specified"}
	ApplyGoogleDetails(e, nil, same)
	if e.Param != "contents" {
		t.Errorf("param %q", e.Param)
	}
}
