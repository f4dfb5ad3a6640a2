package gemini

import (
	"encoding/json"
	"testing"
)

// TestUnsupportedPartsReported: parts the answer has no place for
// (Gemini's code execution, testdata/real_pyd_google_model_builtin_code_execution_stream.http,
// and generated media) are provider items in their places (round 23);
// one whose content is not a JSON object is reported once per kind,
// never dropped silently, and its thought signature is kept.
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
		`{"inlineData":{"mimeType":"image/png","data":"iVBORw0KGgo="},"thoughtSignature":"c2lnbmVk"}`+
		`,{"fileData":"gs://b/o","thoughtSignature":"c2ln"},{"fileData":["x"]}]},`+
		`"finishReason":"STOP","index":0}],"responseId":"unsupported-parts-1"}`), &w); err != nil {
		t.Fatal(err)
	}
	res, err := p.toResult(&w)
	if err != nil {
		t.Fatal(err)
	}
	// Code execution and media parts are provider items, as they came
	// (round 23); a fileData that is no object is a warning, once.
	want := []string{`response part of type "fileData" not supported; ignored`}
	if got := res.Meta.GetWarnings(); len(got) != len(want) || got[0] != want[0] {
		t.Errorf("warnings %q, want %q", got, want)
	}
	parts := res.Message.GetParts()
	if len(parts) != 6 || parts[0].GetProviderItem().GetJson() != `{"executableCode":{"language":"PYTHON","code":"print(1+1)\n"},"thought":true}` ||
		parts[1].GetProviderItem().GetJson() != `{"codeExecutionResult":{"outcome":"OUTCOME_OK","output":"2\n"},"thought":true}` ||
		parts[2].GetText() != "It is 2." || parts[3].GetProviderItem().GetJson() != `{"executableCode":{"language":"PYTHON","code":"print(2)\n"}}` ||
		parts[4].GetProviderItem().GetType() != "inlineData" ||
		parts[4].GetProviderItem().GetJson() != `{"inlineData":{"mimeType":"image/png","data":"iVBORw0KGgo="},"thoughtSignature":"c2lnbmVk"}` ||
		parts[5].GetReasoning().GetSignature() != "c2ln" {
		t.Errorf("parts %v", parts)
	}
}
