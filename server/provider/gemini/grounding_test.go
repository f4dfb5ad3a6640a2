package gemini

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestGroundingMetadata: a grounded answer's groundingMetadata (its
// sources, the text each supports, the search queries) reaches
// meta.extended["gemini.grounding_metadata"] as sent, unary and streamed.
// A grounded stream sends an empty groundingMetadata on every chunk but
// the last (pydantic-ai's recording,
// testdata/real_pyd_google_model_web_search_tool_stream_1.http): empty
// objects never replace what was sent, nor stand for grounding.
func TestGroundingMetadata(t *testing.T) {
	t.Parallel()
	check := func(t *testing.T, what string, g map[string]any) {
		t.Helper()
		if g == nil {
			t.Fatalf("%s: no %s", what, extGroundingMetadata)
		}
		chunks, _ := g["groundingChunks"].([]any)
		queries, _ := g["webSearchQueries"].([]any)
		supports, _ := g["groundingSupports"].([]any)
		if len(chunks) != 5 || len(supports) != 7 || len(queries) != 1 || queries[0] != "weather in San Francisco today" {
			t.Errorf("%s: grounding %d chunks, %d supports, queries %v", what, len(chunks), len(supports), queries)
		}
		first, _ := chunks[0].(map[string]any)["web"].(map[string]any)
		if first["title"] != "wunderground.com" || !strings.HasPrefix(first["uri"].(string), "https://vertexaisearch.cloud.google.com/grounding-api-redirect/AUZIYQHHBnOQ") {
			t.Errorf("%s: first source %v", what, first)
		}
	}

	p, _ := replay(t, "real_pyd_google_model_web_search_tool_stream_1")
	s, err := p.Stream(context.Background(), generateCases(t)["plain"])
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, _ := drain(t, s)
	f := foldEvents(evs)
	g, _ := f.meta.GetExtended().AsMap()[extGroundingMetadata].(map[string]any)
	check(t, "stream", g)
	// Segments are UTF-8 byte offsets into the answer's text.
	seg := g["groundingSupports"].([]any)[0].(map[string]any)["segment"].(map[string]any)
	start, end := int(seg["startIndex"].(float64)), int(seg["endIndex"].(float64))
	if end > len(f.text) || f.text[start:end] != seg["text"] {
		t.Errorf("segment [%d:%d] of the streamed text is not %q", start, end, seg["text"])
	}

	// The same candidate, unary.
	last := lastChunk(t, "testdata/real_pyd_google_model_web_search_tool_stream_1.http")
	var w generateContentResponse
	if err := json.Unmarshal(last, &w); err != nil {
		t.Fatal(err)
	}
	res, err := p.toResult(&w)
	if err != nil {
		t.Fatal(err)
	}
	g, _ = res.Meta.GetExtended().AsMap()[extGroundingMetadata].(map[string]any)
	check(t, "unary", g)

	// Empty grounding is none.
	for _, raw := range []string{`{}`, ` { } `, `null`, ``} {
		if grounded(json.RawMessage(raw)) {
			t.Errorf("grounded(%q)", raw)
		}
	}
	if !grounded(json.RawMessage(`{"webSearchQueries":["q"]}`)) {
		t.Error("a non-empty groundingMetadata is not grounded")
	}
}

// lastChunk returns the JSON of a recorded stream's last event.
func lastChunk(t *testing.T, path string) []byte {
	t.Helper()
	events := strings.Split(strings.TrimSpace(string(providertest.Load(t, path).Body)), "\r\n\r\n")
	return []byte(strings.TrimPrefix(events[len(events)-1], "data: "))
}

// TestURLContextMetadata: the URL context tool's urlContextMetadata (the
// URLs retrieved and their status) reaches
// meta.extended["gemini.url_context_metadata"]; in pydantic-ai's recording
// (testdata/real_pyd_google_model_web_fetch_tool_stream.http) it comes on
// the first chunk and the grounding on the last, and both are kept.
func TestURLContextMetadata(t *testing.T) {
	t.Parallel()
	p, _ := replay(t, "real_pyd_google_model_web_fetch_tool_stream")
	s, err := p.Stream(context.Background(), generateCases(t)["plain"])
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, _ := drain(t, s)
	ext := foldEvents(evs).meta.GetExtended().AsMap()
	u, _ := ext[extURLContextMetadata].(map[string]any)
	urls, _ := u["urlMetadata"].([]any)
	if len(urls) != 1 {
		t.Fatalf("url context %v", ext[extURLContextMetadata])
	}
	if m := urls[0].(map[string]any); m["retrievedUrl"] != "https://ai.pydantic.dev" || m["urlRetrievalStatus"] != "URL_RETRIEVAL_STATUS_SUCCESS" {
		t.Errorf("url metadata %v", m)
	}
	g, _ := ext[extGroundingMetadata].(map[string]any)
	if chunks, _ := g["groundingChunks"].([]any); len(chunks) != 1 {
		t.Errorf("grounding %v", ext[extGroundingMetadata])
	}

	// Unary: the first chunk's candidate, alone.
	events := strings.Split(string(providertest.Load(t, "testdata/real_pyd_google_model_web_fetch_tool_stream.http").Body), "\r\n\r\n")
	var w generateContentResponse
	if err := json.Unmarshal([]byte(strings.TrimPrefix(events[0], "data: ")), &w); err != nil {
		t.Fatal(err)
	}
	res, err := p.toResult(&w)
	if err != nil {
		t.Fatal(err)
	}
	ext = res.Meta.GetExtended().AsMap()
	u, _ = ext[extURLContextMetadata].(map[string]any)
	if urls, _ := u["urlMetadata"].([]any); len(urls) != 1 {
		t.Errorf("unary url context %v", ext[extURLContextMetadata])
	}
	if _, ok := ext[extGroundingMetadata]; ok {
		t.Errorf("an empty groundingMetadata reached meta.extended: %v", ext[extGroundingMetadata])
	}
}
