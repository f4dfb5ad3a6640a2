package extract

import "fmt"

// SyntaxError reports a payload that is not JSON. The server maps it to
// INVALID_ARGUMENT with the offset in the field violation.
type SyntaxError struct {
	// Offset is the 0-based byte offset of the offending byte, or the input
	// length when the input ends too early (0 ≤ Offset ≤ len(input)).
	Offset int64
	// Msg describes the problem, e.g. "invalid character '}' looking for
	// beginning of value".
	Msg string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("payload is not valid JSON: %s (at byte offset %d)", e.Msg, e.Offset)
}

// InputError reports an invalid ExtractRequest (no payload, empty payload).
// The server maps it to INVALID_ARGUMENT with a field violation on Field.
type InputError struct {
	// Field is the request field at fault, e.g. "payload" or "value".
	Field string
	// Msg says what is wrong with it.
	Msg string
}

// Error is "<field>: <problem>", as the gateway's other request errors
// ("invalid payload: is required: ..." read as two errors).
func (e *InputError) Error() string {
	return fmt.Sprintf("%s: %s", e.Field, e.Msg)
}
