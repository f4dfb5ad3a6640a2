package provider

import (
	"mime"
	"strings"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// File parts: which request format takes which media type from which
// source. The server checks every file part against its target format
// before calling (InvalidArgument naming the field); the adapters check
// again, defensively, and never drop a file they cannot send.

// Request formats that take file parts (catalog names).
const (
	formatBuiltin   = "builtin"
	formatResponses = "openai-responses"
	formatAnthropic = "anthropic-messages"
	formatGemini    = "gemini"
)

// chatCompletionsFormats are the formats sent to OpenAI Chat Completions.
var chatCompletionsFormats = map[string]bool{"openai-chat": true, "openai-tools": true, "openai-reasoning": true}

// ToolResultsOnly reports whether format's tool messages can hold
// tool_result parts only: the OpenAI formats send each result as a message
// or input item of its own, with no place for text beside it (Anthropic
// sends a tool message as a user turn, where text may follow the results).
func ToolResultsOnly(format string) bool {
	return chatCompletionsFormats[format] || format == formatResponses
}

// ToolResultNames reports whether format must name each tool result's
// function (Gemini's functionResponse has a name, no call id): a result
// without a name takes the name of the earlier tool call with its call_id.
func ToolResultNames(format string) bool { return format == formatGemini }

// ObjectArguments reports whether format takes tool-call arguments only as
// a JSON object (Gemini's args is a Struct).
func ObjectArguments(format string) bool { return format == formatGemini }

// MediaType is the file's mime type, lowercased and without parameters
// ("text/plain; charset=utf-8" is "text/plain"); empty when unset or not
// a media type.
func MediaType(f *llmrelayv1.File) string {
	mt := f.GetMimeType()
	if mt == "" {
		return ""
	}
	parsed, _, err := mime.ParseMediaType(mt)
	if err != nil {
		return ""
	}
	return parsed
}

// ImageMediaType is the image's mime type without parameters
// ("image/jpeg; charset=binary", copied from a Content-Type, is
// "image/jpeg"): Gemini refuses a media type with parameters
// ("Unsupported MIME type: text/plain; charset=utf-8",
// gemini/testdata/real_maruel_gemini25_flash_mime_parameter_error.http),
// Anthropic takes only its four image types, and OpenAI reads it inside a
// data URL. One that does not parse is returned as it is, for the
// provider to name in its refusal; "" when unset.
func ImageMediaType(img *llmrelayv1.Image) string {
	mt := strings.TrimSpace(img.GetMimeType())
	if mt == "" {
		return ""
	}
	if parsed, _, err := mime.ParseMediaType(mt); err == nil {
		return parsed
	}
	return mt
}

// IsAudio reports whether the file is audio (an audio/* mime type): audio
// parts need the audio capability, every other file the documents one.
func IsAudio(f *llmrelayv1.File) bool {
	return strings.HasPrefix(MediaType(f), "audio/")
}

// extensions are the file name extensions of the common types, where
// mime.ExtensionsByType depends on the system's tables or lists several.
var extensions = map[string]string{
	"application/pdf": ".pdf", "text/plain": ".txt", "text/markdown": ".md", "text/csv": ".csv",
	"text/html": ".html", "application/json": ".json", "audio/wav": ".wav", "audio/x-wav": ".wav",
	"audio/wave": ".wav", "audio/mpeg": ".mp3", "audio/mp3": ".mp3",
}

// Filename is the file's name, or "file.<ext>" from its mime type (just
// "file" when the type has no known extension): OpenAI Chat Completions
// needs a name with inline data and reads the type from its extension.
func Filename(f *llmrelayv1.File) string {
	if f.GetFilename() != "" {
		return f.GetFilename()
	}
	mt := MediaType(f)
	if ext, ok := extensions[mt]; ok {
		return "file" + ext
	}
	if exts, err := mime.ExtensionsByType(mt); err == nil && len(exts) > 0 {
		return "file" + exts[0]
	}
	return "file"
}

// OpenAIAudioFormat is the Chat Completions input_audio format of an audio
// media type: "wav" or "mp3", the only two it takes; empty otherwise.
func OpenAIAudioFormat(mediaType string) string {
	switch mediaType {
	case "audio/wav", "audio/x-wav", "audio/wave", "audio/vnd.wave":
		return "wav"
	case "audio/mpeg", "audio/mp3":
		return "mp3"
	}
	return ""
}

// responsesDocuments are the document types the Responses API's input_file
// takes inline (besides text/*): PDF, JSON/XML and the office formats its
// file inputs guide lists.
var responsesDocuments = map[string]bool{
	"application/pdf": true, "application/json": true, "application/xml": true, "application/rtf": true,
	"application/msword": true, "application/vnd.openxmlformats-officedocument.wordprocessingml.document": true,
	"application/vnd.ms-powerpoint": true, "application/vnd.openxmlformats-officedocument.presentationml.presentation": true,
	"application/vnd.ms-excel": true, "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": true,
	"application/vnd.oasis.opendocument.text": true,
}

// CheckFile says whether a request format can send the file part: ok, or
// the field of the File to blame ("mime_type", "url", "file_id", "data")
// and why. Formats without file input (ollama, embeddings) take none.
func CheckFile(format string, f *llmrelayv1.File) (field, reason string) {
	mt := MediaType(f)
	audio := strings.HasPrefix(mt, "audio/")
	src := f.GetSource()
	switch {
	case format == formatBuiltin:
		return "", ""
	case chatCompletionsFormats[format]:
		if audio {
			if _, ok := src.(*llmrelayv1.File_Data); !ok {
				return sourceField(src), "OpenAI Chat Completions takes audio as inline data only (input_audio)"
			}
			if OpenAIAudioFormat(mt) == "" {
				return "mime_type", "OpenAI Chat Completions takes wav (audio/wav) or mp3 (audio/mpeg) audio only, not " + mt
			}
			return "", ""
		}
		switch src.(type) {
		case *llmrelayv1.File_Url:
			return "url", "OpenAI Chat Completions takes files as inline data or an uploaded file_id, not by URL"
		case *llmrelayv1.File_Data:
			if mt != "application/pdf" {
				return "mime_type", "OpenAI Chat Completions takes PDF files (application/pdf) as inline data, not " + orNone(mt) + "; upload others and send the file_id"
			}
		}
		return "", ""
	case format == formatResponses:
		if audio {
			return "mime_type", "the OpenAI Responses API takes no audio input; use an openai-chat format (Chat Completions input_audio)"
		}
		if _, ok := src.(*llmrelayv1.File_Data); ok && !strings.HasPrefix(mt, "text/") && !responsesDocuments[mt] {
			return "mime_type", "the OpenAI Responses API does not take " + orNone(mt) + " files (PDF, text, JSON, XML and office documents)"
		}
		if u, ok := src.(*llmrelayv1.File_Url); ok && !isHTTPURL(u.Url) {
			return "url", "the OpenAI Responses API takes http(s) file URLs only"
		}
		return "", ""
	case format == formatAnthropic:
		if audio {
			return "mime_type", "Anthropic takes no audio input"
		}
		switch s := src.(type) {
		case *llmrelayv1.File_Url:
			if mt != "" && mt != "application/pdf" {
				return "mime_type", "Anthropic takes URLs of PDF documents only, not " + mt
			}
			if !isHTTPURL(s.Url) {
				return "url", "Anthropic takes http(s) document URLs only"
			}
		case *llmrelayv1.File_Data:
			if mt != "application/pdf" && mt != "text/plain" {
				return "mime_type", "Anthropic takes PDF (application/pdf) and plain text (text/plain) documents, not " + orNone(mt)
			}
		case *llmrelayv1.File_FileId:
			if mt != "" && mt != "application/pdf" && mt != "text/plain" {
				return "mime_type", "Anthropic takes uploaded PDF and plain text documents, not " + mt
			}
		}
		return "", ""
	case format == formatGemini:
		if _, isURL := src.(*llmrelayv1.File_Url); isURL && mt == "" {
			return "mime_type", "required for Gemini with a url (fileData.mimeType)"
		}
		if mt != "" && !geminiType(mt) {
			return "mime_type", "Gemini takes PDF, text, audio, video and image files, not " + mt
		}
		return "", ""
	}
	return "", "format " + format + " takes no file input"
}

func geminiType(mt string) bool {
	for _, p := range []string{"text/", "audio/", "video/", "image/"} {
		if strings.HasPrefix(mt, p) {
			return true
		}
	}
	return mt == "application/pdf" || mt == "application/json" || mt == "application/x-javascript" || mt == "application/x-python"
}

func sourceField(src any) string {
	switch src.(type) {
	case *llmrelayv1.File_Url:
		return "url"
	case *llmrelayv1.File_FileId:
		return "file_id"
	}
	return "data"
}

func orNone(mt string) string {
	if mt == "" {
		return "files without a mime_type"
	}
	return mt
}

// isHTTPURL reports whether u is an http(s) URL, its scheme in any case
// (URL schemes are case-insensitive: validation accepts HTTPS://).
func isHTTPURL(u string) bool {
	scheme, _, ok := strings.Cut(u, "://")
	return ok && (strings.EqualFold(scheme, "http") || strings.EqualFold(scheme, "https"))
}

// Tool results with parts (ToolResult.parts): text, images and files after
// the result's content. Which format takes which kind in a tool result:
//   - Anthropic: tool_result.content as blocks, text, image and document
//     (anthropics/anthropic-sdk-python src/anthropic/types/tool_result_block_param.py:
//     Content = TextBlockParam | ImageBlockParam | SearchResultBlockParam |
//     DocumentBlockParam);
//   - OpenAI Responses: function_call_output.output as input_text,
//     input_image and input_file items (openai/openai-python
//     src/openai/types/responses/response_function_call_output_item_param.py
//     @ 1db4657d0ac77a2e68aad7c2b748064b35a25d4a);
//   - Gemini: functionResponse.parts (Gemini 3) or parts of the same user
//     turn (earlier models): any file Gemini takes;
//   - Ollama: images in the tool message's images (the server's prompt
//     builder takes a message's images whatever its role:
//     ollama/ollama server/prompt.go chatPrompt); no files;
//   - OpenAI Chat Completions and its compatible servers: text only (the
//     tool message's content is a string or text parts:
//     openai/openai-python src/openai/types/chat/chat_completion_tool_message_param.py
//     @ 6777813cdc4ba427f6093089747aa792b2e47a2c).

// ToolResultText is the text of a tool result: its content and its text
// parts, in order, joined by newlines (empty pieces left out), for the
// formats whose tool result is one text.
func ToolResultText(tr *llmrelayv1.ToolResult) string {
	if len(tr.GetParts()) == 0 {
		return tr.GetContent()
	}
	var texts []string
	if tr.GetContent() != "" {
		texts = append(texts, tr.GetContent())
	}
	for _, p := range tr.GetParts() {
		if t := p.GetText(); t != "" {
			texts = append(texts, t)
		}
	}
	return strings.Join(texts, "\n")
}

// ToolResultMedia reports whether the tool result has image or file parts.
func ToolResultMedia(tr *llmrelayv1.ToolResult) bool {
	for _, p := range tr.GetParts() {
		if p.GetImage() != nil || p.GetFile() != nil {
			return true
		}
	}
	return false
}

// ToolResultBlocks are the tool result as parts: its content as a text part
// (when not empty), then its parts.
func ToolResultBlocks(tr *llmrelayv1.ToolResult) []*llmrelayv1.Part {
	out := make([]*llmrelayv1.Part, 0, len(tr.GetParts())+1)
	if tr.GetContent() != "" {
		out = append(out, &llmrelayv1.Part{Kind: &llmrelayv1.Part_Text{Text: tr.GetContent()}})
	}
	return append(out, tr.GetParts()...)
}

// chatToolResultText is why Chat Completions refuses media in a tool result.
const chatToolResultText = "OpenAI Chat Completions takes text only in a tool message (its content is a string or text parts): send the image or file in a user message after the tool messages, or use a format that takes it (openai-responses, anthropic-messages, gemini)"

// CheckToolResultPart says whether a request format can send an image or
// file part of a tool result: ok, or the field of the part to blame
// ("image", "file.mime_type", ...) and why. Text parts are always ok.
func CheckToolResultPart(format string, p *llmrelayv1.Part) (field, reason string) {
	switch k := p.GetKind().(type) {
	case *llmrelayv1.Part_Image:
		if chatCompletionsFormats[format] {
			return "image", chatToolResultText
		}
		return "", ""
	case *llmrelayv1.Part_File:
		if chatCompletionsFormats[format] {
			return "file", chatToolResultText
		}
		if format == "ollama" {
			return "file", "Ollama's chat API takes no document or audio input (a tool message takes text and images)"
		}
		field, reason := CheckFile(format, k.File)
		if reason == "" {
			return "", ""
		}
		if field != "" {
			return "file." + field, reason
		}
		return "file", reason
	}
	return "", ""
}
