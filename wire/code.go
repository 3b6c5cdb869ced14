package wire

// Code is the error code of an error reply: one of the eight codes of the protocol.
// A code received that is not exactly one of them is read as [CodeFailed].
type Code string

// The eight error codes of the protocol (docs/protocol.md, "Errors").
const (
	CodeInvalid     Code = "invalid"
	CodeClosed      Code = "closed"
	CodeAborted     Code = "aborted"
	CodeDenied      Code = "denied"
	CodeUnavailable Code = "unavailable"
	CodeBusy        Code = "busy"
	CodeFailed      Code = "failed"
	CodeDeadline    Code = "deadline"
)
