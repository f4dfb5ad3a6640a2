package gemini

import (
	"encoding/json"
	"testing"
)

// TestUnsupportedPartsReported: parts the answer has no place for
// (Gemini's code execution, testdata/real_pyd_google_model_builtin_code_execution_stream.http,
// and generated media) are reported once per kind, never dropped
// silently; the text and a thought signature around them are kept.
func TestUnsupportedPartsReported(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	var w generateContentResponse
	if err := json.Unmarshal([]byte(`{"candidates":[{"content":{"role":"model","parts":[`+
		`{"executableCode":{"language":"PYTHON","code":"print(1+1)\n"},"thought":true},`+
		`{"codeExecutionResult":{"outcome":"OUTCOME_OK","output":"2\n"},"thought":true},`+
		`{"text":"It is 2."},`+
		`{"executableCode":{"language":"PYTHON","code":"print(2)\n"}},`+
		`{"inlineData":{"mimeType":"image/png","data":"iVBORw0KGgo="},"thoughtSignature":"c2lnbmVk"}]},`+
		`"finishReason":"STOP","index":0}],"responseId":"unsupported-parts-1"}`), &w); err != nil {
		t.Fatal(err)
	}
	res, err := p.toResult(&w)
	if err != nil {
		t.Fatal(err)
	}
	// Code execution parts are provider items, as they came (round 23);
	// generated media is still a warning.
	want := []string{`response part of type "inlineData" not supported; ignored`}
	if got := res.Meta.GetWarnings(); len(got) != len(want) || got[0] != want[0] {
		t.Errorf("warnings %q, want %q", got, want)
	}
	parts := res.Message.GetParts()
	if len(parts) != 5 || parts[0].GetProviderItem().GetJson() != `{"executableCode":{"language":"PYTHON","code":"print(1+1)\n"},"thought":true}` ||
		parts[1].GetProviderItem().GetJson() != `{"codeExecutionResult":{"outcome":"OUTCOME_OK","output":"2\n"},"thought":true}` ||
		parts[2].GetText() != "It is 2." || parts[3].GetProviderItem().GetJson() != `{"executableCode":{"language":"PYTHON","code":"print(2)\n"}}` ||
		parts[4].GetReasoning().GetSignature() != "c2lnbmVk" {
		t.Errorf("parts %v", parts)
	}
}
