package resp

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// Limits the Reader enforces unless told otherwise. They match Redis's
// defaults (proto-max-bulk-len, the multibulk cap of Redis < 7 and
// PROTO_INLINE_MAX_SIZE).
const (
	DefaultMaxBulkBytes    = 512 << 20 // largest bulk string argument, bytes
	DefaultMaxMultibulkLen = 1 << 20   // most arguments in one command
	MaxInlineBytes         = 64 << 10  // longest inline command or length line, bytes
)

// bulkPreallocBytes bounds what the Reader allocates for a bulk string before
// its bytes arrive: a client that announces "$500000000" and then sends
// nothing costs us this much, not the announced length. Larger bulks grow as
// their data is received.
const bulkPreallocBytes = 64 << 10

// argsPrealloc bounds the argument slice allocated from a multibulk count
// alone, for the same reason (Redis caps it at 1024 too).
const argsPrealloc = 1024

// ProtocolError is a malformed request. The connection it arrived on cannot
// be resynchronised: the server replies the error and closes it, as Redis
// does.
type ProtocolError struct {
	Msg string // Redis's wording after "Protocol error: ", e.g. "invalid bulk length"
}

// Error returns the error exactly as Redis words it on the wire
// ("ERR Protocol error: invalid bulk length"), because clients and tests
// match on that text.
func (e *ProtocolError) Error() string { return "ERR Protocol error: " + e.Msg }

// CommandError is a command the Reader refused but consumed whole: an
// argument over MaxArgBytes, or arguments the Budget would not hold. The
// connection stays in step; the server replies Msg and reads on.
type CommandError struct {
	Msg string // the error reply, code first ("ERR argument too large ...")
}

func (e *CommandError) Error() string { return e.Msg }

// ArgOverheadBytes is what the Reader charges a Budget for an argument
// beyond its bytes: its slice header and allocation rounding, so that a
// million one-byte arguments cost what they really take.
const ArgOverheadBytes = 40

var (
	errInvalidMultibulk  = &ProtocolError{"invalid multibulk length"}
	errInvalidBulk       = &ProtocolError{"invalid bulk length"}
	errBigInline         = &ProtocolError{"too big inline request"}
	errBigMultibulkCount = &ProtocolError{"too big mbulk count string"}
	errBigBulkCount      = &ProtocolError{"too big bulk count string"}
	errUnbalancedQuotes  = &ProtocolError{"unbalanced quotes in request"}
	errBulkTerminator    = &ProtocolError{"expected CRLF after bulk data"}
)

// errLineTooLong is readLine's internal signal; callers map it to the
// wording Redis uses for that kind of line.
var errLineTooLong = errors.New("resp: line too long")

// Reader reads client commands: RESP arrays of bulk strings, and inline
// commands (a line of space-separated, optionally quoted words, as telnet
// and redis-cli's inline mode send). Every limit is checked before the
// memory it guards is allocated. A Reader is not safe for concurrent use.
type Reader struct {
	br *bufio.Reader
	// MaxBulkBytes is the largest bulk string accepted, in bytes; a larger
	// announced length is a protocol error. Default DefaultMaxBulkBytes.
	MaxBulkBytes int64
	// MaxMultibulkLen is the most arguments one command may have. Default
	// DefaultMaxMultibulkLen.
	MaxMultibulkLen int
	// MaxArgBytes is the largest argument the Reader buffers, in bytes. A
	// larger bulk string, within MaxBulkBytes, is read and discarded
	// without being held, and the command is refused with a
	// *CommandError. Default MaxBulkBytes (nothing is discarded).
	MaxArgBytes int64
	// Budget, if set, is asked before each argument is read how its n
	// bytes (the argument's length plus ArgOverheadBytes) may be held, the
	// command so far having taken cmdBytes. An error refuses the command:
	// the rest of it is read and discarded and ReadCommand returns a
	// *CommandError with the error's text. What the Budget granted for a
	// command is reported by TakeCommandBytes.
	Budget func(cmdBytes, n int64) error

	// Borrow, if set, lets ReadCommand return a multibulk command's
	// argument slice, and each of its arguments of at most BorrowMaxBytes,
	// in memory the Reader reuses: they are valid only until the next
	// ReadCommand. The caller copies what it keeps (see Owned). It saves
	// the allocations a short command costs otherwise, one per argument
	// and one for the slice.
	Borrow bool

	line     []byte   // scratch for lines longer than br's buffer
	cmdBytes int64    // granted by Budget to the command being read or last read
	arena    []byte   // Borrow: the current command's short arguments
	args     [][]byte // Borrow: the current command's argument slice
}

// BorrowMaxBytes is the longest argument a Borrow Reader returns in its
// reused memory; a longer one is allocated for the command alone, as
// without Borrow.
const BorrowMaxBytes = 512

// borrowArenaBytes is the initial size of a Borrow Reader's arena.
const borrowArenaBytes = 4 << 10

// owned returns a, copied if it may be borrowed (see Owned).
func owned(a []byte) []byte {
	if len(a) <= BorrowMaxBytes {
		return append(make([]byte, 0, len(a)), a...)
	}
	return a
}

// Owned returns args as ReadCommand would have returned them without
// Borrow: a new slice, and a copy of each argument that may be borrowed
// (every one of at most BorrowMaxBytes). Arguments the caller keeps past
// the next ReadCommand must be owned.
func Owned(args [][]byte) [][]byte {
	out := make([][]byte, len(args))
	for i, a := range args {
		out[i] = owned(a)
	}
	return out
}

// TakeCommandBytes returns the bytes Budget granted to the arguments of
// the last command read (whole or refused), or of the one being read when
// reading failed, and forgets them: the caller now accounts for them.
func (r *Reader) TakeCommandBytes() int64 {
	n := r.cmdBytes
	r.cmdBytes = 0
	return n
}

// NewReader returns a Reader over br with the default limits.
func NewReader(br *bufio.Reader) *Reader {
	return &Reader{br: br, MaxBulkBytes: DefaultMaxBulkBytes, MaxMultibulkLen: DefaultMaxMultibulkLen, MaxArgBytes: DefaultMaxBulkBytes}
}

// ReadCommand reads the next non-empty command and returns its arguments;
// args[0] is the command name. Empty commands ("*0\r\n", "*-1\r\n", blank
// inline lines) are skipped, as Redis skips them. It returns io.EOF at a
// clean end of input, io.ErrUnexpectedEOF inside a command, a
// *ProtocolError for malformed input, and a *CommandError for a command it
// read but refused (see MaxArgBytes and Budget).
func (r *Reader) ReadCommand() ([][]byte, error) {
	if r.Borrow {
		clear(r.args)
		r.args = r.args[:0]
		r.arena = r.arena[:0]
	}
	for {
		b, err := r.br.Peek(1)
		if err != nil {
			return nil, err
		}
		var args [][]byte
		if b[0] == '*' {
			args, err = r.readMultibulk()
		} else {
			args, err = r.readInline()
		}
		if err != nil {
			return nil, err
		}
		if len(args) > 0 {
			return args, nil
		}
	}
}

func (r *Reader) readMultibulk() ([][]byte, error) {
	line, err := r.readLine(MaxInlineBytes)
	if err == errLineTooLong {
		return nil, errBigMultibulkCount
	}
	if err != nil {
		return nil, noEOF(err)
	}
	n, ok := parseCRLFInt(line[1:])
	if !ok || n > int64(r.MaxMultibulkLen) {
		return nil, errInvalidMultibulk
	}
	if n <= 0 {
		return nil, nil
	}
	var args [][]byte
	if r.Borrow {
		args = r.args[:0]
	} else {
		args = make([][]byte, 0, min(n, argsPrealloc))
	}
	var refused *CommandError
	for range n {
		line, err := r.readLine(MaxInlineBytes)
		if err == errLineTooLong {
			return nil, errBigBulkCount
		}
		if err != nil {
			return nil, noEOF(err)
		}
		if line[0] != '$' {
			return nil, &ProtocolError{fmt.Sprintf("expected '$', got '%c'", line[0])}
		}
		size, ok := parseCRLFInt(line[1:])
		if !ok || size < 0 || size > r.MaxBulkBytes {
			return nil, errInvalidBulk
		}
		if refused == nil && size > r.MaxArgBytes {
			refused = &CommandError{fmt.Sprintf("ERR argument too large (%d bytes; max %d)", size, r.MaxArgBytes)}
		}
		if refused == nil && r.Budget != nil {
			if err := r.Budget(r.cmdBytes, size+ArgOverheadBytes); err != nil {
				refused = &CommandError{err.Error()}
			} else {
				r.cmdBytes += size + ArgOverheadBytes
			}
		}
		if refused != nil {
			// Drop what was read: from here on the command costs nothing.
			clear(args)
			args = args[:0]
			if err := r.discardBulk(size); err != nil {
				return nil, err
			}
			continue
		}
		var arg []byte
		if r.Borrow && size <= BorrowMaxBytes {
			arg, err = r.readBorrowed(int(size))
		} else {
			arg, err = r.readBulk(int(size))
		}
		if err != nil {
			return nil, err
		}
		args = append(args, arg)
	}
	if r.Borrow {
		r.args = args
	}
	if refused != nil {
		return nil, refused
	}
	return args, nil
}

// readBorrowed is readBulk into the Reader's arena. An arena too short
// for the argument is replaced by a larger one; the arguments already in
// the old one keep it alive until the next command.
func (r *Reader) readBorrowed(size int) ([]byte, error) {
	total := size + 2
	if cap(r.arena)-len(r.arena) < total {
		r.arena = make([]byte, 0, max(borrowArenaBytes, 2*cap(r.arena), total))
	}
	start := len(r.arena)
	buf := r.arena[start : start+total]
	if _, err := io.ReadFull(r.br, buf); err != nil {
		return nil, noEOF(err)
	}
	if buf[size] != '\r' || buf[size+1] != '\n' {
		return nil, errBulkTerminator
	}
	r.arena = r.arena[:start+total]
	return buf[:size:size], nil
}

// discardBulk skips size bytes and checks the CRLF after them, holding
// none of it: an oversized or refused argument costs the read buffer only.
func (r *Reader) discardBulk(size int64) error {
	for size > 0 {
		n, err := r.br.Discard(int(min(size, 1<<30)))
		size -= int64(n)
		if err != nil {
			return noEOF(err)
		}
	}
	crlf, err := r.br.Peek(2)
	if err != nil {
		return noEOF(err)
	}
	if crlf[0] != '\r' || crlf[1] != '\n' {
		return errBulkTerminator
	}
	_, err = r.br.Discard(2)
	return err
}

// readBulk reads size bytes and the CRLF after them. Up to
// bulkPreallocBytes is allocated at once; beyond that the buffer grows only
// as data arrives, so memory tracks bytes received, not bytes announced.
func (r *Reader) readBulk(size int) ([]byte, error) {
	total := size + 2
	buf := make([]byte, 0, min(total, bulkPreallocBytes))
	for len(buf) < total {
		if len(buf) == cap(buf) {
			grown := make([]byte, len(buf), min(total, 2*cap(buf)))
			copy(grown, buf)
			buf = grown
		}
		n, err := r.br.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err != nil && len(buf) < total {
			return nil, noEOF(err)
		}
	}
	if buf[size] != '\r' || buf[size+1] != '\n' {
		return nil, errBulkTerminator
	}
	return buf[:size:size], nil
}

func (r *Reader) readInline() ([][]byte, error) {
	line, err := r.readLine(MaxInlineBytes)
	if err == errLineTooLong {
		return nil, errBigInline
	}
	if err != nil {
		return nil, noEOF(err)
	}
	line = line[:len(line)-1] // the '\n'; a '\r' before it is whitespace to splitArgs
	args, ok := splitArgs(line)
	if !ok {
		return nil, errUnbalancedQuotes
	}
	if r.Budget != nil && len(args) > 0 {
		n := int64(len(line) + len(args)*ArgOverheadBytes)
		if err := r.Budget(r.cmdBytes, n); err != nil {
			return nil, &CommandError{err.Error()}
		}
		r.cmdBytes += n
	}
	return args, nil
}

// readLine returns the next line including its '\n'. The slice is valid
// until the next read. A line whose content (without "\r\n") exceeds max
// bytes yields errLineTooLong as soon as that is known, without reading
// the rest of it.
func (r *Reader) readLine(max int) ([]byte, error) {
	line, err := r.br.ReadSlice('\n')
	if err == nil {
		if contentLen(line) > max {
			return nil, errLineTooLong
		}
		return line, nil
	}
	if err != bufio.ErrBufferFull {
		return nil, err
	}
	buf := append(r.line[:0], line...)
	for {
		if len(buf) > max+1 { // max content bytes plus a possible '\r'
			return nil, errLineTooLong
		}
		if err != bufio.ErrBufferFull {
			return nil, err
		}
		line, err = r.br.ReadSlice('\n')
		buf = append(buf, line...)
		if err == nil {
			break
		}
	}
	r.line = buf
	if contentLen(buf) > max {
		return nil, errLineTooLong
	}
	return buf, nil
}

// contentLen is the length of line without its "\n" or "\r\n" terminator.
func contentLen(line []byte) int {
	n := len(line) - 1
	if n > 0 && line[n-1] == '\r' {
		n--
	}
	return n
}

// parseCRLFInt parses the number in a length line ("123\r\n" after its type
// byte). A line ending in a bare "\n" is malformed.
func parseCRLFInt(b []byte) (int64, bool) {
	if len(b) < 2 || b[len(b)-2] != '\r' {
		return 0, false
	}
	return parseInt(b[:len(b)-2])
}

// parseInt parses a decimal int64 as strictly as Redis's string2ll: an
// optional '-', no '+', no leading zeros, no spaces, no overflow.
func parseInt(b []byte) (int64, bool) {
	if len(b) == 1 && b[0] == '0' {
		return 0, true
	}
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	// 19 digits hold every int64 and cannot overflow a uint64.
	if len(b) == 0 || len(b) > 19 || b[0] < '1' || b[0] > '9' {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return int64(-v), true
	}
	if v > 1<<63-1 {
		return 0, false
	}
	return int64(v), true
}

// noEOF turns an EOF inside a command into io.ErrUnexpectedEOF.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// splitArgs splits an inline command the way Redis's sdssplitargs does:
// words separated by whitespace; "double quotes" with \n \r \t \b \a \\ \"
// and \xHH escapes; 'single quotes' with only \' as an escape; a closing
// quote must be followed by whitespace or the end of the line. A NUL byte
// ends the line, as it ends the C string Redis parses. ok is false for
// unbalanced quotes.
func splitArgs(line []byte) (args [][]byte, ok bool) {
	for i, c := range line {
		if c == 0 {
			line = line[:i]
			break
		}
	}
	i := 0
	for {
		for i < len(line) && isSpace(line[i]) {
			i++
		}
		if i == len(line) {
			return args, true
		}
		var cur []byte
		inDouble, inSingle := false, false
		for done := false; !done; {
			switch {
			case inDouble:
				switch {
				case i == len(line):
					return nil, false
				case line[i] == '\\' && i+3 < len(line) && line[i+1] == 'x' && isHex(line[i+2]) && isHex(line[i+3]):
					cur = append(cur, unhex(line[i+2])<<4|unhex(line[i+3]))
					i += 3
				case line[i] == '\\' && i+1 < len(line):
					i++
					switch line[i] {
					case 'n':
						cur = append(cur, '\n')
					case 'r':
						cur = append(cur, '\r')
					case 't':
						cur = append(cur, '\t')
					case 'b':
						cur = append(cur, '\b')
					case 'a':
						cur = append(cur, '\a')
					default:
						cur = append(cur, line[i])
					}
				case line[i] == '"':
					if i+1 < len(line) && !isSpace(line[i+1]) {
						return nil, false
					}
					done = true
				default:
					cur = append(cur, line[i])
				}
			case inSingle:
				switch {
				case i == len(line):
					return nil, false
				case line[i] == '\\' && i+1 < len(line) && line[i+1] == '\'':
					i++
					cur = append(cur, '\'')
				case line[i] == '\'':
					if i+1 < len(line) && !isSpace(line[i+1]) {
						return nil, false
					}
					done = true
				default:
					cur = append(cur, line[i])
				}
			default:
				switch {
				case i == len(line) || isSpace(line[i]):
					done = true
				case line[i] == '"':
					inDouble = true
				case line[i] == '\'':
					inSingle = true
				default:
					cur = append(cur, line[i])
				}
			}
			if i < len(line) {
				i++
			}
		}
		if cur == nil {
			cur = []byte{}
		}
		args = append(args, cur)
	}
}

// isSpace matches C's isspace in the "C" locale.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}
