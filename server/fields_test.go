package server

import (
	"errors"
	"math"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// naiveBad is the plain definition checkFields implements: some enum value
// anywhere (google.protobuf's JSON types aside) is undeclared, or some
// float is NaN or infinite. It walks everything, without checkFields'
// pruning by message type.
func naiveBad(m protoreflect.Message) bool {
	if m.Descriptor().ParentFile().Package() == "google.protobuf" {
		return false
	}
	bad := false
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		one := func(fd protoreflect.FieldDescriptor, v protoreflect.Value) {
			switch fd.Kind() {
			case protoreflect.EnumKind:
				bad = bad || fd.Enum().Values().ByNumber(v.Enum()) == nil
			case protoreflect.DoubleKind, protoreflect.FloatKind:
				bad = bad || math.IsNaN(v.Float()) || math.IsInf(v.Float(), 0)
			case protoreflect.MessageKind:
				bad = bad || naiveBad(v.Message())
			}
		}
		switch {
		case fd.IsList():
			for i := 0; i < v.List().Len(); i++ {
				one(fd, v.List().Get(i))
			}
		case fd.IsMap():
			v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
				one(fd.MapValue(), mv)
				return true
			})
		default:
			one(fd, v)
		}
		return !bad
	})
	return bad
}

// FuzzCheckFields: for any request the decoder accepts, checkFields
// reports a field exactly when the plain definition finds one.
func FuzzCheckFields(f *testing.F) {
	nan := math.NaN()
	for _, m := range []proto.Message{
		&llmrelayv1.ChatRequest{Model: "m", Messages: []*llmrelayv1.Message{{Role: 9, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_Text{Text: "x"}}}}}},
		&llmrelayv1.ToolsRequest{Options: &llmrelayv1.GenerationOptions{Temperature: &nan, ToolChoice: &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: 2}}}},
		&llmrelayv1.EmbedRequest{Inputs: []string{"a"}},
	} {
		b, err := proto.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, m := range []proto.Message{&llmrelayv1.ChatRequest{}, &llmrelayv1.ToolsRequest{}, &llmrelayv1.EmbedRequest{}} {
			if proto.Unmarshal(b, m) != nil {
				continue
			}
			err := checkFields(m.ProtoReflect())
			if want := naiveBad(m.ProtoReflect()); (err != nil) != want {
				t.Fatalf("%T %v: checkFields = %v, the plain walk finds a bad field: %v", m, m, err, want)
			}
		}
	})
}

func TestCheckFieldsPaths(t *testing.T) {
	t.Parallel()
	inf := math.Inf(1)
	cases := []struct {
		m    proto.Message
		want string
	}{
		{&llmrelayv1.ToolsRequest{Messages: []*llmrelayv1.Message{{Role: 1}, {Role: 2, Parts: []*llmrelayv1.Part{{}, {Kind: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{Detail: 42}}}}}}},
			"messages[1].parts[1].image.detail"},
		{&llmrelayv1.ChatRequest{Options: &llmrelayv1.GenerationOptions{FrequencyPenalty: &inf}}, "options.frequency_penalty"},
		{&llmrelayv1.ChatRequest{Model: "ok", Messages: []*llmrelayv1.Message{{Role: 1}}}, ""},
	}
	for _, tc := range cases {
		err := checkFields(tc.m.ProtoReflect())
		var re *requestError
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: %v", tc.m, err)
		case tc.want != "" && (!errors.As(err, &re) || re.field != tc.want):
			t.Errorf("%v: err %v, want field %s", tc.m, err, tc.want)
		}
	}
}
