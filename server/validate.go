package server

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"

	"github.com/llmrelay/llmrelay/fold"
	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/schema"
)

// Request limits: a request beyond them is InvalidArgument, never cut.
const (
	maxMessages   = 10000
	maxTools      = 512
	maxEmbedInput = 2048
)

var toolName = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,128}$`)

// schemaName is what OpenAI accepts as a response format name (the other
// providers do not send it).
var schemaName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// inputKinds are the non-text inputs of a conversation, each needing its
// capability: images vision, document files documents, audio files audio.
type inputKinds struct {
	images, documents, audio bool
	// toolMedia: a tool result has image or file parts, which the target
	// format must be able to send in a tool result (checkToolResultParts).
	toolMedia bool
}

// validateMessages checks the conversation; it reports the first problem
// with its field path.
func validateMessages(msgs []*llmrelayv1.Message) (kinds inputKinds, err error) {
	if len(msgs) == 0 {
		return kinds, invalidField("messages", "at least one message is required")
	}
	if len(msgs) > maxMessages {
		return kinds, invalidField("messages", "at most %d messages, got %d", maxMessages, len(msgs))
	}
	for i, m := range msgs {
		// Field paths are built only for the error: this runs on every call.
		f := func() string { return fmt.Sprintf("messages[%d]", i) }
		if m.GetRole() == llmrelayv1.Role_ROLE_UNSPECIFIED {
			return kinds, invalidField(f()+".role", "role is required (ROLE_SYSTEM, ROLE_USER, ROLE_ASSISTANT or ROLE_TOOL)")
		}
		if _, known := llmrelayv1.Role_name[int32(m.GetRole())]; !known {
			return kinds, invalidField(f()+".role", "unknown role %d", m.GetRole())
		}
		if len(m.GetParts()) == 0 {
			return kinds, invalidField(f()+".parts", "a message needs at least one part")
		}
		var callIDs idSet
		for j, p := range m.GetParts() {
			pf := func() string { return fmt.Sprintf("messages[%d].parts[%d]", i, j) }
			switch k := p.GetKind().(type) {
			case *llmrelayv1.Part_Text:
			case *llmrelayv1.Part_Refusal:
				// A refusal is the model's: the OpenAI formats have no
				// place for one in another role.
				if m.GetRole() != llmrelayv1.Role_ROLE_ASSISTANT {
					return kinds, invalidField(pf()+".refusal", "refusals belong in assistant messages")
				}
			case *llmrelayv1.Part_Reasoning:
				if m.GetRole() != llmrelayv1.Role_ROLE_ASSISTANT {
					return kinds, invalidField(pf()+".reasoning", "reasoning belongs in assistant messages")
				}
			case *llmrelayv1.Part_ProviderItem:
				if m.GetRole() != llmrelayv1.Role_ROLE_ASSISTANT {
					return kinds, invalidField(pf()+".provider_item", "provider items belong in assistant messages")
				}
				if k.ProviderItem.GetType() == "" {
					return kinds, invalidField(pf()+".provider_item.type", "required: the provider's type name of the item")
				}
				if !jsonObject(k.ProviderItem.GetJson()) {
					return kinds, invalidField(pf()+".provider_item.json", "must be one JSON object (the item as the provider sent it)")
				}
			case *llmrelayv1.Part_Image:
				if err := validateImage(pf, k.Image); err != nil {
					return kinds, err
				}
				if m.GetRole() != llmrelayv1.Role_ROLE_USER {
					return kinds, invalidField(pf()+".image", "images are only accepted in user messages")
				}
				kinds.images = true
			case *llmrelayv1.Part_File:
				if err := validateFile(pf, k.File); err != nil {
					return kinds, err
				}
				if m.GetRole() != llmrelayv1.Role_ROLE_USER {
					return kinds, invalidField(pf()+".file", "files are only accepted in user messages")
				}
				if provider.IsAudio(k.File) {
					kinds.audio = true
				} else {
					kinds.documents = true
				}
			case *llmrelayv1.Part_ToolCall:
				if m.GetRole() != llmrelayv1.Role_ROLE_ASSISTANT {
					return kinds, invalidField(pf()+".tool_call", "tool calls belong in assistant messages")
				}
				if k.ToolCall.GetCallId() == "" {
					return kinds, invalidField(pf()+".tool_call.call_id", "required")
				}
				if k.ToolCall.GetName() == "" {
					return kinds, invalidField(pf()+".tool_call.name", "required")
				}
				// One turn's calls are answered by call_id: two with one id
				// cannot both be answered (Anthropic refuses the turn;
				// others would pair both with the first result). A set,
				// not a scan of the parts before: a message of n calls
				// took n²/2 comparisons (a 4 MiB request of small calls,
				// minutes of CPU).
				if id := k.ToolCall.GetCallId(); callIDs.seen(id) {
					return kinds, invalidField(pf()+".tool_call.call_id", "%q is the id of an earlier call of this message: each call needs its own", id)
				}
			case *llmrelayv1.Part_ToolResult:
				if m.GetRole() != llmrelayv1.Role_ROLE_TOOL {
					return kinds, invalidField(pf()+".tool_result", "tool results belong in tool messages")
				}
				if k.ToolResult.GetCallId() == "" {
					return kinds, invalidField(pf()+".tool_result.call_id", "required: the call_id of the tool call this answers")
				}
				if err := validateResultParts(pf, k.ToolResult.GetParts(), &kinds); err != nil {
					return kinds, err
				}
			default:
				return kinds, invalidField(pf(), "a part needs one of text, image, file, tool_call, tool_result, refusal, reasoning, provider_item")
			}
		}
	}
	return kinds, nil
}

// validateResultParts checks a tool result's parts (ToolResult.parts):
// text, image and file only, images and files by the rules of user parts,
// each needing its capability as a user part does.
func validateResultParts(pf func() string, parts []*llmrelayv1.Part, kinds *inputKinds) error {
	for n, p := range parts {
		rf := func() string { return fmt.Sprintf("%s.tool_result.parts[%d]", pf(), n) }
		switch k := p.GetKind().(type) {
		case *llmrelayv1.Part_Text:
		case *llmrelayv1.Part_Image:
			if err := validateImage(rf, k.Image); err != nil {
				return err
			}
			kinds.images, kinds.toolMedia = true, true
		case *llmrelayv1.Part_File:
			if err := validateFile(rf, k.File); err != nil {
				return err
			}
			if provider.IsAudio(k.File) {
				kinds.audio = true
			} else {
				kinds.documents = true
			}
			kinds.toolMedia = true
		default:
			return invalidField(rf(), "a tool result's parts are text, image or file")
		}
	}
	return nil
}

// checkToolResultParts refuses the images and files of tool results that
// the target format cannot send in a tool result, naming the field: never
// dropped.
func checkToolResultParts(msgs []*llmrelayv1.Message, format string) error {
	for i, m := range msgs {
		for j, p := range m.GetParts() {
			for n, rp := range p.GetToolResult().GetParts() {
				if field, reason := provider.CheckToolResultPart(format, rp); reason != "" {
					return invalidField(fmt.Sprintf("messages[%d].parts[%d].tool_result.parts[%d].%s", i, j, n, field), "%s", reason)
				}
			}
		}
	}
	return nil
}

// jsonObject reports whether s is one JSON object.
func jsonObject(s string) bool {
	t := strings.TrimLeft(s, " \t\r\n")
	return t != "" && t[0] == '{' && json.Valid([]byte(s))
}

// idSet is the call ids of one message: the first without a map (most
// messages have one call, and this runs on every call), a map from the
// second on.
type idSet struct {
	first string
	has   bool
	more  map[string]struct{}
}

// seen reports whether id was added before, and adds it.
func (s *idSet) seen(id string) bool {
	switch {
	case !s.has:
		s.first, s.has = id, true
		return false
	case id == s.first:
		return true
	case s.more == nil:
		s.more = map[string]struct{}{}
	}
	if _, ok := s.more[id]; ok {
		return true
	}
	s.more[id] = struct{}{}
	return false
}

func validateImage(part func() string, img *llmrelayv1.Image) error {
	f := func() string { return part() + ".image" }
	switch src := img.GetSource().(type) {
	case *llmrelayv1.Image_Url:
		u, err := url.Parse(src.Url)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "data") {
			return invalidField(f()+".url", "must be an http(s) or data: URL")
		}
		if u.Scheme == "data" && !strings.Contains(src.Url, ";base64,") {
			return invalidField(f()+".url", "data: URLs must be base64 (data:<mime>;base64,...)")
		}
	case *llmrelayv1.Image_Data:
		if len(src.Data) == 0 {
			return invalidField(f()+".data", "empty image")
		}
		if !strings.HasPrefix(img.GetMimeType(), "image/") {
			return invalidField(f()+".mime_type", "required with inline data (e.g. image/png)")
		}
	default:
		return invalidField(f(), "an image needs a url or data")
	}
	return nil
}

// validateFile checks a file part's source and media type; whether the
// target format takes the type and the source is the adapter's to say.
func validateFile(part func() string, file *llmrelayv1.File) error {
	f := func() string { return part() + ".file" }
	switch src := file.GetSource().(type) {
	case *llmrelayv1.File_Url:
		u, err := url.Parse(src.Url)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "gs") || u.Host == "" {
			return invalidField(f()+".url", "must be an http(s) URL (or a gs:// URI for Gemini); send inline bytes as data")
		}
	case *llmrelayv1.File_Data:
		if len(src.Data) == 0 {
			return invalidField(f()+".data", "empty file")
		}
		if file.GetMimeType() == "" {
			return invalidField(f()+".mime_type", "required with inline data (e.g. application/pdf, text/plain, audio/wav)")
		}
	case *llmrelayv1.File_FileId:
		if strings.TrimSpace(src.FileId) == "" {
			return invalidField(f()+".file_id", "empty file id")
		}
	default:
		return invalidField(f(), "a file needs a url, data or file_id")
	}
	if mt := file.GetMimeType(); mt != "" {
		if _, _, err := mime.ParseMediaType(mt); err != nil || !strings.Contains(mt, "/") {
			return invalidField(f()+".mime_type", "%q is not a media type (e.g. application/pdf)", mt)
		}
	}
	if strings.ContainsAny(file.GetFilename(), "\x00\r\n") {
		return invalidField(f()+".filename", "control characters are not allowed")
	}
	return nil
}

// checkFiles refuses the file parts the target format cannot send, naming
// the field: a file is never dropped.
func checkFiles(msgs []*llmrelayv1.Message, format string) error {
	for i, m := range msgs {
		for j, p := range m.GetParts() {
			f := p.GetFile()
			if f == nil {
				continue
			}
			if field, reason := provider.CheckFile(format, f); reason != "" {
				path := fmt.Sprintf("messages[%d].parts[%d].file", i, j)
				if field != "" {
					path += "." + field
				}
				return invalidField(path, "%s", reason)
			}
		}
	}
	return nil
}

// checkToolParts refuses what the format cannot send of the tool calls
// and results in the conversation, naming the field, before the adapter
// (which would refuse it naming none): text beside tool results where a
// tool message holds results only, a result whose function the format
// must name but cannot find, arguments that are no JSON object where the
// format takes objects only.
func checkToolParts(msgs []*llmrelayv1.Message, format string) error {
	resultsOnly, names, objects := provider.ToolResultsOnly(format), provider.ToolResultNames(format), provider.ObjectArguments(format)
	// The formats that send a result under its function's name (Gemini's
	// functionResponse.name, Ollama's tool_name).
	sendsName := names || format == "ollama"
	if !resultsOnly && !sendsName && !objects {
		return nil
	}
	called := map[string]string{} // call_id → the function called
	for i, m := range msgs {
		for j, p := range m.GetParts() {
			pf := func() string { return fmt.Sprintf("messages[%d].parts[%d]", i, j) }
			if tc := p.GetToolCall(); tc != nil {
				called[tc.GetCallId()] = tc.GetName()
				if objects && strings.TrimSpace(tc.GetArguments()) != "" && !fold.ValidArguments(tc.GetArguments()) {
					return invalidField(pf()+".tool_call.arguments", "the %s format takes arguments as a JSON object only", format)
				}
			}
			if m.GetRole() != llmrelayv1.Role_ROLE_TOOL {
				continue
			}
			tr := p.GetToolResult()
			switch {
			case tr == nil && resultsOnly:
				return invalidField(pf(), "the %s format takes tool_result parts only in tool messages: send the text as the tool result's content", format)
			case tr != nil && names && tr.GetName() == "" && called[tr.GetCallId()] == "":
				return invalidField(pf()+".tool_result.name",
					"required by the %s format when no earlier tool call has call_id %q", format, tr.GetCallId())
			case tr != nil && sendsName && tr.GetName() != "" && called[tr.GetCallId()] != "" && tr.GetName() != called[tr.GetCallId()]:
				// The format sends the result under this name: the model
				// would read it as another function's.
				return invalidField(pf()+".tool_result.name",
					"%q, but call %q is a call of %q (the %s format sends the result under its name)", tr.GetName(), tr.GetCallId(), called[tr.GetCallId()], format)
			}
		}
	}
	return nil
}

func validateTools(tools []*llmrelayv1.Tool) error {
	if len(tools) == 0 {
		return invalidField("tools", "at least one tool is required (use Chat for calls without tools)")
	}
	if len(tools) > maxTools {
		return invalidField("tools", "at most %d tools, got %d", maxTools, len(tools))
	}
	seen := map[string]bool{}
	for i, t := range tools {
		f := "tools[" + strconv.Itoa(i) + "].name" // no fmt on the per-tool path
		if !toolName.MatchString(t.GetName()) {
			return invalidField(f, "%q: 1-128 characters of letters, digits, _ . : -", t.GetName())
		}
		if seen[t.GetName()] {
			return invalidField(f, "duplicate tool %q", t.GetName())
		}
		seen[t.GetName()] = true
		if p := t.GetParameters(); p != "" {
			if _, err := schema.Compile(p); err != nil {
				return invalidField("tools["+strconv.Itoa(i)+"].parameters", "%v", err)
			}
			if err := schema.CheckObjectRoot(p); err != nil {
				return invalidField("tools["+strconv.Itoa(i)+"].parameters", "%v", err)
			}
		}
	}
	return nil
}

func validateOptions(o *llmrelayv1.GenerationOptions, tools []*llmrelayv1.Tool) error {
	if name := o.GetToolChoice().GetFunctionName(); name != "" &&
		!slices.ContainsFunc(tools, func(t *llmrelayv1.Tool) bool { return t.GetName() == name }) {
		return invalidField("options.tool_choice.function_name", "%q is not one of the offered tools", name)
	}
	rf := o.GetResponseFormat()
	if _, known := llmrelayv1.ResponseFormatType_name[int32(rf.GetType())]; !known {
		return invalidField("options.response_format.type", "unknown type %d", rf.GetType())
	}
	if rf.GetType() == llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA && rf.GetSchema() == "" {
		return invalidField("options.response_format.schema", "required for RESPONSE_FORMAT_TYPE_JSON_SCHEMA")
	}
	if rf.GetType() != llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA {
		// Both belong to a schema: without one no format sends them.
		if rf.GetSchemaName() != "" {
			return invalidField("options.response_format.schema_name", "a schema name needs type RESPONSE_FORMAT_TYPE_JSON_SCHEMA")
		}
		if rf.GetStrict() {
			return invalidField("options.response_format.strict", "strict holds an answer to a schema: it needs type RESPONSE_FORMAT_TYPE_JSON_SCHEMA")
		}
	}
	if n := rf.GetSchemaName(); n != "" && !schemaName.MatchString(n) {
		return invalidField("options.response_format.schema_name", "%q: 1-64 characters of letters, digits, _ and -", n)
	}
	if s := rf.GetSchema(); s != "" {
		if rf.GetType() != llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA {
			return invalidField("options.response_format.schema", "a schema needs type RESPONSE_FORMAT_TYPE_JSON_SCHEMA")
		}
		if _, err := schema.Compile(s); err != nil {
			return invalidField("options.response_format.schema", "%v", err)
		}
	}
	return nil
}

func notFoundModel(name string) error {
	return &requestError{code: codes.NotFound, reason: llmrelayv1.ErrorReason_ERROR_REASON_MODEL_NOT_FOUND, field: "model",
		model: name, resourceType: "model", resource: name, msg: fmt.Sprintf("model %q is not configured (ListModels shows the models)", name)}
}

func missingCapability(model, capability string) error {
	return &requestError{code: codes.FailedPrecondition, reason: llmrelayv1.ErrorReason_ERROR_REASON_CAPABILITY_NOT_SUPPORTED,
		model: model, msg: fmt.Sprintf("model %q has no %s capability", model, capability)}
}
