package catalog

import (
	"errors"
	"math"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// TestDrop21GeminiStopAndSeed: Gemini's GenerationConfig takes up to 5 stop
// sequences and an int32 seed; a sixth stop sequence or a seed beyond 32
// bits went to Gemini, which refused the call naming no field of ours.
// They are refused here, naming the option (even with
// ignore_invalid_options: the option is the format's, its value is wrong);
// other formats keep what they take.
func TestDrop21GeminiStopAndSeed(t *testing.T) {
	t.Parallel()
	six := []string{"1", "2", "3", "4", "5", "6"}
	seed := func(v int64) *int64 { return &v }
	cases := []struct {
		name   string
		format string
		opts   *llmrelayv1.GenerationOptions
		want   string
	}{
		{"gemini 5 stops", "gemini", &llmrelayv1.GenerationOptions{Stop: six[:5]}, ""},
		{"gemini 6 stops", "gemini", &llmrelayv1.GenerationOptions{Stop: six}, "stop"},
		{"anthropic 6 stops", "anthropic-messages", &llmrelayv1.GenerationOptions{Stop: six}, ""},
		{"openai-chat 6 stops (compatible servers take them)", "openai-chat", &llmrelayv1.GenerationOptions{Stop: six}, ""},
		{"gemini int32 seed", "gemini", &llmrelayv1.GenerationOptions{Seed: seed(math.MaxInt32)}, ""},
		{"gemini negative int32 seed", "gemini", &llmrelayv1.GenerationOptions{Seed: seed(math.MinInt32)}, ""},
		{"gemini 33-bit seed", "gemini", &llmrelayv1.GenerationOptions{Seed: seed(math.MaxInt32 + 1)}, "seed"},
		{"gemini seed below int32", "gemini", &llmrelayv1.GenerationOptions{Seed: seed(math.MinInt32 - 1)}, "seed"},
		{"openai 64-bit seed", "openai-chat", &llmrelayv1.GenerationOptions{Seed: seed(1 << 40)}, ""},
		{"ollama 64-bit seed", "ollama", &llmrelayv1.GenerationOptions{Seed: seed(1 << 40)}, ""},
	}
	for _, tc := range cases {
		for _, ignore := range []bool{false, true} {
			_, err := Validate("m", Formats[tc.format], false, false, tc.opts, ignore)
			var oe *OptionError
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("%s (ignore %v): %v", tc.name, ignore, err)
			case tc.want != "" && (!errors.As(err, &oe) || oe.Option != tc.want):
				t.Errorf("%s (ignore %v): got %v, want an error on %s", tc.name, ignore, err, tc.want)
			}
		}
	}
}

// TestDrop21ConfiguredGeminiStops: a model configured with more stop
// sequences than Gemini takes is a configuration error, as an out-of-range
// number is.
func TestDrop21ConfiguredGeminiStops(t *testing.T) {
	t.Parallel()
	o, _, err := optionsFromConfig(map[string]any{"stop": []any{"a", "b", "c", "d", "e", "f"}}, Formats["gemini"])
	if err != nil {
		t.Fatal(err)
	}
	if name, _ := checkNumbers(Formats["gemini"], o); name != "stop" {
		t.Fatalf("checkNumbers = %q, want stop", name)
	}
}
