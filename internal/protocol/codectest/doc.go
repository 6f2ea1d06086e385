// Package codectest holds only tests: the property test that round-trips
// every message type of every protocol, filled with random contents,
// through the codec (internal/wire/wiretest), and its teeth — for every
// field of every message, a codec that drops the field is caught. It sits
// under internal/protocol because it names the protocols; a protocol
// package may not import another.
package codectest
