package providertest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// idPattern finds the ids a provider makes per response: response, item,
// tool call and request ids in bodies, request-id headers and Cloudflare
// ray ids.
var idPattern = regexp.MustCompile(`\b(?:chatcmpl-|resp_|call_|fc_|rs_|msg_|toolu_|srvtoolu_|req_)[A-Za-z0-9]{6,}\b|"responseId":\s*"[^"]+"|(?im)^(?:x-request-id|request-id|apim-request-id|x-ms-client-request-id|cf-ray):\s*\S*[0-9]\S*`)

// referencePattern finds the ids a response refers to without making
// them: a block's tool_use_id (a server tool's result answering a call
// made in an earlier answer).
var referencePattern = regexp.MustCompile(`"tool_use_id":\s*"([^"]+)"`)

// documentationIDs are ids from the providers' documentation examples,
// which a recording must not reuse.
var documentationIDs = []string{
	"toolu_01A09q90qw90lq917835lq9", "msg_01XFDUDYJgAACzvnptvVoYEL", "msg_01Aq9w938a90dw8q7rGcn1Kd",
	"msg_013Zva2CMHLNnXjNJJKqJ2EF", "chatcmpl-123", "chatcmpl-abc123", "call_abc123", "call_12345xyz",
	"msg_1nZdL29xx5MUA1yADyHTEsnR8uuvGzszyY", // Anthropic's streaming docs
}

// TestRecordingsHaveTheirOwnIDs: no provider-made id appears in two
// recordings, and none is a documentation example's (see the testdata
// READMEs). Account-level values (organization, project) are one
// fictional account's and are not checked.
func TestRecordingsHaveTheirOwnIDs(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("../*/testdata/*.http")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 100 {
		t.Fatalf("found %d recordings; the glob is wrong", len(files))
	}
	seen := map[string]string{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ids := map[string]bool{}
		// An id this response only refers to (a server tool's result
		// naming, by tool_use_id, the call an earlier answer of the
		// same conversation made) is not an id it made.
		refs := map[string]int{}
		for _, m := range referencePattern.FindAllStringSubmatch(string(raw), -1) {
			refs[m[1]]++
		}
		made := map[string]int{}
		for _, id := range idPattern.FindAllString(string(raw), -1) {
			made[id]++
		}
		for _, id := range idPattern.FindAllString(string(raw), -1) {
			if n := refs[id]; n > 0 && n == made[id] {
				continue
			}
			if k, v, ok := strings.Cut(id, ":"); ok && !strings.HasPrefix(id, `"`) {
				id = strings.ToLower(k) + ": " + strings.TrimSpace(v) // a header
			}
			ids[id] = true
		}
		for id := range ids {
			for _, doc := range documentationIDs {
				// A documentation id, or one cut short from it (SDK test
				// data shortens them).
				if strings.Contains(id, doc) || len(id) >= 14 && strings.HasPrefix(doc, id) {
					t.Errorf("%s: %s is a documentation example id; give the recording a random id of its own in the same format", f, id)
				}
			}
			if other, ok := seen[id]; ok {
				t.Errorf("%s and %s share the id %s; give each recording random ids of its own in the same format", other, f, id)
			}
			seen[id] = f
		}
	}
}
