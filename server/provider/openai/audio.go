package openai

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// Audio output: a gpt-4o-audio model asked for modalities ["text",
// "audio"] answers with message.audio ({"id", "data" (base64), "expires_at",
// "transcript"}) and content null; streamed, the deltas carry it in
// pieces: the id with the transcript's text, then the data in chunks, then
// expires_at (testdata/dialect_openai_audio_output_stream.http, the shape
// of openai/openai-dotnet's ChatWithBasicAudioOutput record). The contract
// has no audio output part, so the audio was dropped without a word, and
// with it the transcript, the only words of the answer, and the id a
// follow-up turn refers to. The id, transcript and expiry are kept in
// meta.extended["audio"]; a warning says the audio itself was dropped.

const (
	// extAudio is the meta.extended key of a message's audio output.
	extAudio = "audio"
	// maxAudioTranscriptBytes bounds the transcript kept of a stream.
	maxAudioTranscriptBytes = 1 << 20
	// warnAudioOutput reports the dropped audio.
	warnAudioOutput = "audio output not supported; the audio dropped (its id, transcript and expiry are in meta.extended[\"audio\"])"
)

// wireAudio is a message's audio output, or a delta's piece of it.
type wireAudio struct {
	ID         flexString      `json:"id"`
	Data       json.RawMessage `json:"data"`
	ExpiresAt  json.RawMessage `json:"expires_at"`
	Transcript *string         `json:"transcript"`
}

// audioState is a stream's audio output so far.
type audioState struct {
	id, expiresAt string
	transcript    strings.Builder
	// hasTranscript: a transcript was sent (an empty one too); cut: it
	// outgrew maxAudioTranscriptBytes.
	hasTranscript, cut bool
	// pending: something not reported yet.
	pending bool
}

// readAudio decodes a message's audio; ok is false for a shape that is no
// audio object.
func readAudio(raw json.RawMessage) (a wireAudio, ok bool) {
	if err := json.Unmarshal(raw, &a); err != nil {
		return wireAudio{}, false
	}
	return a, true
}

// expiryText is expires_at as sent when it is a number (Unix seconds).
func expiryText(raw json.RawMessage) string {
	var n json.Number
	if !isPresent(raw) || json.Unmarshal(raw, &n) != nil {
		return ""
	}
	if _, err := n.Float64(); err != nil {
		return ""
	}
	return n.String()
}

// audioExtended is the meta.extended["audio"] value: the id, the
// transcript and the expiry (Unix seconds) that were sent.
func audioExtended(id, transcript, expiresAt string, hasTranscript bool) map[string]any {
	v := map[string]any{}
	if id != "" {
		v["id"] = validUTF8(id)
	}
	if hasTranscript {
		v["transcript"] = validUTF8(transcript)
	}
	if expiresAt != "" {
		var f float64
		if _, err := fmt.Sscan(expiresAt, &f); err == nil {
			v["expires_at"] = f
		}
	}
	return v
}

// unaryAudio reports a unary message's audio output in meta.
func unaryAudio(raw json.RawMessage, meta *llmrelayv1.ResponseMeta) {
	if !isPresent(raw) {
		return
	}
	a, ok := readAudio(raw)
	if !ok {
		meta.Warnings = append(meta.Warnings, "message audio has an unrecognized shape; ignored")
		return
	}
	var transcript string
	if a.Transcript != nil {
		transcript = *a.Transcript
	}
	provider.SetExtended(meta, extAudio, audioExtended(string(a.ID), transcript, expiryText(a.ExpiresAt), a.Transcript != nil))
	meta.Warnings = append(meta.Warnings, warnAudioOutput)
}

// noteAudio adds a delta's piece of the audio output to the stream's; the
// first piece warns that the audio is dropped.
func (s *chatStream) noteAudio(raw json.RawMessage, meta *llmrelayv1.ResponseMeta) {
	r := s.rareOf()
	a, ok := readAudio(raw)
	if !ok {
		if r.audio == nil {
			r.audio = &audioState{}
			meta.Warnings = append(meta.Warnings, "delta audio has an unrecognized shape; ignored")
		}
		return
	}
	if r.audio == nil {
		r.audio = &audioState{}
		meta.Warnings = append(meta.Warnings, warnAudioOutput)
	}
	st := r.audio
	if id := string(a.ID); id != "" && id != st.id {
		st.id, st.pending = id, true
	}
	if e := expiryText(a.ExpiresAt); e != "" && e != st.expiresAt {
		st.expiresAt, st.pending = e, true
	}
	if a.Transcript != nil && !st.hasTranscript {
		st.hasTranscript, st.pending = true, true
	}
	if a.Transcript != nil && *a.Transcript != "" && !st.cut {
		t := *a.Transcript
		if st.transcript.Len()+len(t) > maxAudioTranscriptBytes {
			n := maxAudioTranscriptBytes - st.transcript.Len()
			for n > 0 && !utf8.RuneStart(t[n]) {
				n--
			}
			t = t[:n]
			st.cut = true
			meta.Warnings = append(meta.Warnings, fmt.Sprintf("audio transcript longer than %d bytes; the rest not kept", maxAudioTranscriptBytes))
		}
		st.transcript.WriteString(t)
		st.pending = true
	}
}

// flushAudio reports the stream's audio output when some of it was not
// reported yet (meta.extended keys are replaced whole: the transcript so
// far, at the finish and at the end, not per delta).
func (s *chatStream) flushAudio() {
	if s.rare == nil || s.rare.audio == nil || !s.rare.audio.pending {
		return
	}
	st := s.rare.audio
	st.pending = false
	meta := &llmrelayv1.ResponseMeta{}
	provider.SetExtended(meta, extAudio, audioExtended(st.id, st.transcript.String(), st.expiresAt, st.hasTranscript))
	s.push(&provider.Event{Kind: provider.EventMeta, Meta: meta})
}
