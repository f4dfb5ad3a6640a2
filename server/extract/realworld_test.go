package extract

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// summary is what a whole real-world body must yield, independent of the
// golden: texts, "name#id" per tool use (with "!raw" when malformed),
// "id" per result, definition names.
type summary struct {
	texts   []string
	uses    []string
	results []string
	defs    []string
}

func summarize(r *llmrelayv1.ExtractResponse) summary {
	var s summary
	for _, t := range r.GetTexts() {
		s.texts = append(s.texts, t.GetText())
	}
	for _, u := range r.GetToolUses() {
		v := u.GetName() + "#" + u.GetId()
		if u.RawArguments != nil {
			v += "!raw"
		}
		s.uses = append(s.uses, v)
	}
	for _, x := range r.GetToolResults() {
		s.results = append(s.results, x.GetId())
	}
	for _, d := range r.GetToolDefinitions() {
		s.defs = append(s.defs, d.GetName())
	}
	return s
}

func TestRealWorldBodies(t *testing.T) {
	t.Parallel()
	cases := map[string]summary{
		"openai_chat_request": {
			texts:   []string{"You are a helpful weather assistant.", "What's the weather in Paris and in Tokyo?"},
			uses:    []string{"get_weather#call_8kJ2bVq1mN3xP0aR7sT4uW6y", "get_weather#call_Z9yX8wV7uT6sR5qP4oN3mL2k"},
			results: []string{"call_8kJ2bVq1mN3xP0aR7sT4uW6y", "call_Z9yX8wV7uT6sR5qP4oN3mL2k"},
			defs:    []string{"get_weather"},
		},
		"openai_chat_response": {
			texts: []string{"Let me check both cities."},
			uses:  []string{"get_weather#call_8kJ2bVq1mN3xP0aR7sT4uW6y", "get_weather#call_Z9yX8wV7uT6sR5qP4oN3mL2k!raw"},
		},
		"openai_responses_request": {
			texts:   []string{"Answer briefly.", "What is the weather in Paris?"},
			uses:    []string{"get_current_weather#call_unLAR8MvFNptuiZK6K6HCy5k"},
			results: []string{"call_unLAR8MvFNptuiZK6K6HCy5k"},
			defs:    []string{"get_current_weather"},
		},
		"openai_responses_response": {
			texts: []string{"Checking the weather in Boston."},
			uses:  []string{"get_current_weather#call_unLAR8MvFNptuiZK6K6HCy5k"},
		},
		"anthropic_request": {
			texts: []string{"You are a concise assistant.", "What is the weather like in San Francisco?",
				"I'll check the current weather in San Francisco for you.", "Thanks! Anything else?"},
			uses:    []string{"get_weather#toolu_01Wq6nZt3XbKp8RvJd2Lm5Fy"},
			results: []string{"toolu_01Wq6nZt3XbKp8RvJd2Lm5Fy"},
			defs:    []string{"get_weather"},
		},
		"anthropic_response": {
			texts: []string{"I'll look up both cities."},
			uses:  []string{"get_weather#toolu_01T1x1fJ34qAmk2tNTrN7Up6", "get_weather#toolu_01Kp2mHd4bZcW8vRxQyLn3Et"},
		},
		"bedrock_converse_request": {
			texts:   []string{"What is the most popular song on WZPZ?", "I'll look up the top song.", "You are a radio station assistant."},
			uses:    []string{"top_song#tooluse_kZJMlvQmRJ6eAyJE5GIl7Q"},
			results: []string{"tooluse_kZJMlvQmRJ6eAyJE5GIl7Q"},
			defs:    []string{"top_song"},
		},
		"bedrock_converse_response": {
			texts: []string{"I'll call the top_song tool for WZPZ and WKRP."},
			uses:  []string{"top_song#tooluse_hvGxTeRZSWyPQh3ZTFqNNw", "top_song#tooluse_0xL7SBBJT-aTh5e0QzmYeQ"},
		},
		"gemini_request": {
			texts:   []string{"You control the lights.", "Dim the lights and make them warm."},
			uses:    []string{"set_light_values#"},
			results: []string{""},
			defs:    []string{"set_light_values"},
		},
		"gemini_response": {
			texts: []string{"Setting the lights now."},
			uses:  []string{"set_light_values#", "get_room#"},
		},
		"langchain_ai_message": {
			texts: []string{"Searching now."},
			uses:  []string{"search#toolu_01VxHkW3sP9dQ2mLr8tYc4Zb", "lookup#toolu_01Bq7nR2kLm5Vx8Wc3Jd9Ht4!raw"},
		},
		"ollama_chat_response": {
			uses: []string{"get_weather#"},
		},
		"ollama_generate_response": {
			texts: []string{"The sky looks blue because air scatters short blue wavelengths of sunlight more than red ones."},
		},
	}
	files, err := filepath.Glob("testdata/*.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(cases) {
		t.Errorf("%d bodies in testdata, %d cases", len(files), len(cases))
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			want, ok := cases[name]
			if !ok {
				t.Fatalf("no expectation for %s", f)
			}
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Extract(data)
			if err != nil {
				t.Fatalf("Extract: %v", err)
			}
			s := summarize(got)
			check := func(what string, got, want []string) {
				if !slices.Equal(got, want) {
					t.Errorf("%s:\n got %q\nwant %q", what, got, want)
				}
			}
			check("texts", s.texts, want.texts)
			check("tool uses", s.uses, want.uses)
			check("tool results", s.results, want.results)
			check("definitions", s.defs, want.defs)
			checkInvariants(t, data, got)
			providertest.Golden(t, filepath.Join("testdata", name+".golden"), providertest.ProtoJSON(t, got))
		})
	}
}

// The same body sent as a google.protobuf.Value yields the same items as
// the JSON text, only in key order instead of document order.
func TestValuePayloadMatchesJSON(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("testdata/*.json")
	if err != nil {
		t.Fatal(err)
	}
	if ExtractValue(nil).GetMatchedPatterns() != nil {
		t.Errorf("nil value: want empty response")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		fromJSON, err := Extract(data)
		if err != nil {
			t.Fatal(err)
		}
		var v structpb.Value
		if err := protojson.Unmarshal(data, &v); err != nil {
			t.Fatal(err)
		}
		fromValue := ExtractValue(&v)
		for _, r := range []*llmrelayv1.ExtractResponse{fromJSON, fromValue} {
			sortByPath(r)
		}
		sameSchemas(t, fromJSON, fromValue)
		if !proto.Equal(fromJSON, fromValue) {
			t.Errorf("%s: value payload differs:\n%s\nvs json payload:\n%s", f, protojson.Format(fromValue), protojson.Format(fromJSON))
		}
	}
}

func sortByPath(r *llmrelayv1.ExtractResponse) {
	byPath := func(a, b interface{ GetPath() string }) int { return strings.Compare(a.GetPath(), b.GetPath()) }
	slices.SortStableFunc(r.Texts, func(a, b *llmrelayv1.ExtractedText) int { return byPath(a, b) })
	slices.SortStableFunc(r.ToolUses, func(a, b *llmrelayv1.ExtractedToolUse) int { return byPath(a, b) })
	slices.SortStableFunc(r.ToolResults, func(a, b *llmrelayv1.ExtractedToolResult) int { return byPath(a, b) })
	slices.SortStableFunc(r.ToolDefinitions, func(a, b *llmrelayv1.ExtractedToolDefinition) int { return byPath(a, b) })
	slices.Sort(r.MatchedPatterns)
}

// sameSchemas checks that each definition's parameters_json holds the
// same JSON as its parameters (a value payload's in key order, a JSON
// payload's in document order, so the texts may differ), then clears it
// in both responses for the comparison of the rest.
func sameSchemas(t *testing.T, fromJSON, fromValue *llmrelayv1.ExtractResponse) {
	t.Helper()
	for _, r := range []*llmrelayv1.ExtractResponse{fromJSON, fromValue} {
		for _, d := range r.GetToolDefinitions() {
			if d.GetParameters() == nil {
				if d.GetParametersJson() != "" {
					t.Errorf("%s: parameters_json %q without parameters", d.GetPath(), d.GetParametersJson())
				}
				continue
			}
			want, err := protojson.Marshal(d.GetParameters())
			if err != nil {
				t.Fatal(err)
			}
			var a, b any
			if err := json.Unmarshal(want, &a); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(d.GetParametersJson()), &b); err != nil || !reflect.DeepEqual(a, b) {
				t.Errorf("%s: parameters_json %q is not the parameters %s (%v)", d.GetPath(), d.GetParametersJson(), want, err)
			}
			d.ParametersJson = ""
		}
	}
}
