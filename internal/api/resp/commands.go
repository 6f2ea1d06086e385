package resp

import (
	"crypto/subtle"
	"fmt"
	"net"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/lightcone/lightcone/internal/wire"
)

// redisVersion is what INFO and HELLO report: clients parse it to pick
// features, so it names the Redis version whose commands we follow.
const redisVersion = "7.0.0-lightcone"

// Error replies, worded as Redis words them.
const (
	msgSyntax       = "ERR syntax error"
	msgNotInteger   = "ERR value is not an integer or out of range"
	msgOverflow     = "ERR increment or decrement would overflow"
	msgWrongType    = "WRONGTYPE Operation against a key holding the wrong kind of value"
	msgNoAuth       = "NOAUTH Authentication required."
	msgWrongPass    = "WRONGPASS invalid username-password pair or user is disabled."
	msgNotSupported = "ERR not supported by lightcone"
	msgNoProto      = "NOPROTO sorry, this protocol version is not supported"
	msgCorrupt      = "ERR corrupt value envelope"
)

// command is one entry of the command table.
type command struct {
	// arity follows Redis: n > 0 means exactly n arguments (the name
	// included); n < 0 means at least -n.
	arity int
	// noAuth commands run before a client authenticates.
	noAuth bool
	// inMulti commands run inside MULTI rather than being queued.
	inMulti bool
	// borrows commands keep no argument, nor the argument slice, past
	// their run: they may be given the Reader's borrowed memory (see
	// Reader.Borrow). Every other command is given owned arguments.
	borrows bool
	// loop commands never wait for a reply while they run (no
	// awaitPending, call or drain): an event loop runs them (loop.go's
	// loopSafe adds conditions for SET and MGET). Every other command
	// moves its connection to a goroutine of its own.
	loop bool
	run  func(c *conn, args [][]byte)
}

// commands maps lower-case command names to their implementation. It is
// filled in init because COMMAND COUNT refers to it.
var commands map[string]*command

// cmdGetEntry, cmdSetEntry and cmdMGetEntry are commands["get"], ["set"]
// and ["mget"].
var cmdGetEntry, cmdSetEntry, cmdMGetEntry *command

func init() {
	commands = map[string]*command{
		"ping":    {arity: -1, loop: true, run: cmdPing},
		"echo":    {arity: 2, loop: true, run: cmdEcho},
		"hello":   {arity: -1, noAuth: true, loop: true, run: cmdHello},
		"auth":    {arity: -2, noAuth: true, loop: true, run: cmdAuth},
		"quit":    {arity: -1, noAuth: true, inMulti: true, loop: true, run: cmdQuit},
		"select":  {arity: 2, loop: true, run: cmdSelect},
		"info":    {arity: -1, loop: true, run: cmdInfo},
		"client":  {arity: -2, loop: true, run: cmdClient},
		"command": {arity: -1, loop: true, run: cmdCommand},
		"config":  {arity: -2, loop: true, run: cmdConfig},

		"get":    {arity: 2, borrows: true, loop: true, run: cmdGet},
		"set":    {arity: -3, borrows: true, loop: true, run: cmdSet},
		"del":    {arity: -2, run: cmdDel},
		"exists": {arity: -2, run: cmdExists},
		"mget":   {arity: -2, loop: true, run: cmdMGet},
		"mset":   {arity: -3, run: cmdMSet},
		"incr":   {arity: 2, run: cmdIncr},
		"decr":   {arity: 2, run: cmdIncr},
		"incrby": {arity: 3, run: cmdIncr},
		"decrby": {arity: 3, run: cmdIncr},
		"ttl":    {arity: 2, run: cmdTTL},
		"pttl":   {arity: 2, run: cmdTTL},

		// keys.go, strings.go
		"type":        {arity: 2, run: cmdType},
		"unlink":      {arity: -2, run: cmdDel},
		"expire":      {arity: -3, run: cmdExpire},
		"pexpire":     {arity: -3, run: cmdExpire},
		"expireat":    {arity: -3, run: cmdExpire},
		"pexpireat":   {arity: -3, run: cmdExpire},
		"persist":     {arity: 2, run: cmdPersist},
		"setex":       {arity: 4, run: cmdSetEx},
		"psetex":      {arity: 4, run: cmdSetEx},
		"setnx":       {arity: 3, run: cmdSetNX},
		"getset":      {arity: 3, run: cmdGetSet},
		"getdel":      {arity: 2, run: cmdGetDel},
		"getex":       {arity: -2, run: cmdGetEx},
		"append":      {arity: 3, run: cmdAppend},
		"strlen":      {arity: 2, run: cmdStrlen},
		"incrbyfloat": {arity: 3, run: cmdIncrByFloat},

		"hset":    {arity: -4, run: cmdHSet},
		"hmset":   {arity: -4, run: cmdHSet},
		"hdel":    {arity: -3, run: cmdHDel},
		"hget":    {arity: 3, run: cmdHRead},
		"hmget":   {arity: -3, run: cmdHRead},
		"hgetall": {arity: 2, run: cmdHRead},
		"hexists": {arity: 3, run: cmdHRead},
		"hlen":    {arity: 2, run: cmdHRead},

		// hashes.go
		"hincrby":      {arity: 4, run: cmdHIncrBy},
		"hincrbyfloat": {arity: 4, run: cmdHIncrByFloat},
		"hsetnx":       {arity: 4, run: cmdHSetNX},
		"hkeys":        {arity: 2, run: cmdHList},
		"hvals":        {arity: 2, run: cmdHList},
		"hstrlen":      {arity: 3, run: cmdHStrlen},

		// lists.go
		"lpush":  {arity: -3, run: cmdPush},
		"rpush":  {arity: -3, run: cmdPush},
		"lpushx": {arity: -3, run: cmdPush},
		"rpushx": {arity: -3, run: cmdPush},
		"lpop":   {arity: -2, run: cmdPop},
		"rpop":   {arity: -2, run: cmdPop},
		"lrange": {arity: 4, run: cmdLRange},
		"llen":   {arity: 2, run: cmdLLen},
		"lindex": {arity: 3, run: cmdLIndex},

		// sets.go
		"sadd":        {arity: -3, run: cmdSAdd},
		"srem":        {arity: -3, run: cmdSRem},
		"spop":        {arity: -2, run: cmdSPop},
		"smembers":    {arity: 2, run: cmdSRead},
		"scard":       {arity: 2, run: cmdSRead},
		"sismember":   {arity: 3, run: cmdSRead},
		"srandmember": {arity: -2, run: cmdSRandMember},

		// zsets.go
		"zadd":             {arity: -4, run: cmdZAdd},
		"zincrby":          {arity: 4, run: cmdZAdd},
		"zrem":             {arity: -3, run: cmdZRem},
		"zpopmin":          {arity: -2, run: cmdZPop},
		"zpopmax":          {arity: -2, run: cmdZPop},
		"zscore":           {arity: 3, run: cmdZRead},
		"zcard":            {arity: 2, run: cmdZRead},
		"zrange":           {arity: -4, run: cmdZRange},
		"zrevrange":        {arity: -4, run: cmdZRange},
		"zrangebyscore":    {arity: -4, run: cmdZRange},
		"zrevrangebyscore": {arity: -4, run: cmdZRange},

		"dbsize":    {arity: 1, run: cmdDBSize},
		"flushall":  {arity: -1, run: cmdNotSupported},
		"flushdb":   {arity: -1, run: cmdNotSupported},
		"keys":      {arity: 2, run: cmdKeys},
		"scan":      {arity: -2, run: cmdScan},
		"randomkey": {arity: 1, run: cmdNotSupported},

		"lc.consistency": {arity: -1, run: cmdLCConsistency},
		"lc.keyspace":    {arity: -1, run: cmdLCKeyspace},
		"lc.get":         {arity: -2, run: cmdLCOp},
		"lc.getat":       {arity: -2, run: cmdLCOp},
		"lc.set":         {arity: -3, run: cmdLCOp},
		"lc.del":         {arity: -2, run: cmdLCOp},
		"lc.cas":         {arity: -4, run: cmdLCOp},
		"lc.cad":         {arity: -3, run: cmdLCOp},
		"lc.migrate":     {arity: 3, run: cmdLCMigrate},
		"lc.acquire":     {arity: 2, run: cmdLCHold},
		"lc.release":     {arity: 2, run: cmdLCHold},
		"lc.txn":         {arity: -1, run: cmdLCTxn},

		// txn.go
		"multi":   {arity: 1, inMulti: true, run: cmdMulti},
		"exec":    {arity: 1, inMulti: true, run: cmdExec},
		"discard": {arity: 1, inMulti: true, run: cmdDiscard},
		"watch":   {arity: -2, inMulti: true, run: cmdWatch},
	}
	cmdGetEntry, cmdSetEntry, cmdMGetEntry = commands["get"], commands["set"], commands["mget"]
}

// lookup returns the command args names, or nil if there is none.
func lookup(args [][]byte) *command {
	raw := args[0]
	if len(raw) == 3 && raw[1]|0x20 == 'e' && raw[2]|0x20 == 't' && (raw[0]|0x20 == 'g' || raw[0]|0x20 == 's') {
		// GET and SET, the commonest commands, without hashing the name:
		// the only bytes that |0x20 maps to a lower-case letter are that
		// letter and its upper case.
		if raw[0]|0x20 == 's' {
			return cmdSetEntry
		}
		return cmdGetEntry
	}
	// Lower-case the name in place of an allocation: command names are
	// short, and a map index by string(bytes) does not allocate.
	var buf [32]byte
	if len(raw) > len(buf) {
		return nil
	}
	for i, b := range raw {
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		buf[i] = b
	}
	return commands[string(buf[:len(raw)])]
}

// exec runs one command. Its reply is queued in c.pending.
func (c *conn) exec(args [][]byte) {
	cmd := lookup(args)
	name := ""
	if cmd == nil || cmd.arity > 0 && len(args) != cmd.arity || cmd.arity < 0 && len(args) < -cmd.arity {
		name = strings.ToLower(string(args[0])) // for the error text
	}
	switch {
	case cmd == nil:
		c.abortMulti()
		c.replyError(unknownCommand(args))
	case cmd.arity > 0 && len(args) != cmd.arity || cmd.arity < 0 && len(args) < -cmd.arity:
		c.abortMulti()
		c.replyError(wrongArity(name))
	case !c.authed && !cmd.noAuth:
		c.replyError(msgNoAuth)
	case c.multi != nil && !cmd.inMulti:
		c.queue(strings.ToLower(string(args[0])), Owned(args))
	case cmd.borrows:
		cmd.run(c, args)
	default:
		cmd.run(c, Owned(args))
	}
}

// abortMulti makes an open MULTI's EXEC fail: a command sent inside it
// was refused (Redis's EXECABORT).
func (c *conn) abortMulti() {
	if c.multi != nil {
		c.multi.aborted = true
	}
}

// unknownCommand words the error as Redis 7 does, quoting at most about
// 128 bytes of arguments.
func unknownCommand(args [][]byte) string {
	var b strings.Builder
	for _, a := range args[1:] {
		if b.Len() >= 128 {
			break
		}
		fmt.Fprintf(&b, "'%s' ", clip(a, 128-b.Len()))
	}
	return fmt.Sprintf("ERR unknown command '%s', with args beginning with: %s", clip(args[0], 128), b.String())
}

func clip(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}

func wrongArity(name string) string {
	return fmt.Sprintf("ERR wrong number of arguments for '%s' command", name)
}

func unknownSubcommand(sub []byte, cmd string) string {
	return fmt.Sprintf("ERR unknown subcommand '%s'. Try %s HELP.", clip(sub, 128), cmd)
}

// backendError words a backend failure for the client. A timeout says the
// outcome is unknown: the write may still take effect.
func backendError(e *wire.Error) string {
	switch e.Code {
	case wire.ErrTimeout:
		return "TIMEOUT outcome unknown: " + e.Msg
	case wire.ErrUnavailable:
		return "UNAVAILABLE " + e.Msg
	case wire.ErrInvalid, wire.ErrNoSpace:
		return "ERR " + e.Msg
	case wire.ErrConflict:
		return "CONFLICT " + e.Msg
	}
	return "ERR " + e.Error()
}

// firstError returns the error reply for the first failed reply, if any.
func firstError(reps []*wire.Reply) (string, bool) {
	for _, r := range reps {
		if r.Err != nil {
			return backendError(r.Err), true
		}
	}
	return "", false
}

// --- requests ---

func (c *conn) getReq(key string, l wire.Level) *wire.Request {
	r := c.reqs.New()
	r.Op, r.Key, r.Level = wire.OpGet, key, l
	return r
}

func (c *conn) putReq(key string, v []byte, l wire.Level) *wire.Request {
	r := c.reqs.New()
	r.Op, r.Key, r.Value, r.Level = wire.OpPut, key, v, l
	return r
}

func (c *conn) delReq(key string, l wire.Level) *wire.Request {
	return &wire.Request{Op: wire.OpDelete, Key: key, Level: l}
}

// keys checks every key's size, replying the error for the first that is
// too large.
func (c *conn) keys(args [][]byte) ([]string, bool) {
	ks := make([]string, len(args))
	for i, a := range args {
		if len(a) > c.s.cfg.MaxKeyBytes {
			c.replyError(c.keyTooLarge(len(a)))
			return nil, false
		}
		ks[i] = string(a)
	}
	return ks, true
}

func (c *conn) key(a []byte) (string, bool) {
	if len(a) > c.s.cfg.MaxKeyBytes {
		c.replyError(c.keyTooLarge(len(a)))
		return "", false
	}
	return string(a), true
}

// valueFits replies an error and returns false if a value of n bytes is
// too large.
func (c *conn) valueFits(n int) bool {
	if n > c.s.cfg.MaxValueBytes {
		c.replyError(c.valueTooLarge(n))
		return false
	}
	return true
}

func (c *conn) keyTooLarge(n int) string {
	return fmt.Sprintf("ERR key too large (%d bytes; max %d)", n, c.s.cfg.MaxKeyBytes)
}

func (c *conn) valueTooLarge(n int) string {
	return fmt.Sprintf("ERR value too large (%d bytes; max %d)", n, c.s.cfg.MaxValueBytes)
}

func (c *conn) nowMs() int64 { return c.s.cfg.Now().UnixMilli() }

// decode interprets a get's reply. found is false for an absent or expired
// value; errMsg is set for a backend error or a corrupt envelope.
func (c *conn) decode(r *wire.Reply) (v value, found bool, errMsg string) {
	if r.Err != nil {
		return value{}, false, backendError(r.Err)
	}
	if !r.Found {
		return value{}, false, ""
	}
	v, err := decodeValue(r.Value)
	if err != nil {
		return value{}, false, msgCorrupt
	}
	// Only a value with an expiry needs the clock.
	if v.expiryMs != 0 && v.expired(c.nowMs()) {
		return value{}, false, ""
	}
	return v, true, ""
}

// --- connection commands ---

func cmdPing(c *conn, args [][]byte) {
	switch len(args) {
	case 1:
		c.reply(func(w *Writer) { w.WriteSimple("PONG") })
	case 2:
		c.reply(func(w *Writer) { w.WriteBulk(args[1]) })
	default:
		c.replyError(wrongArity("ping"))
	}
}

func cmdEcho(c *conn, args [][]byte) { c.reply(func(w *Writer) { w.WriteBulk(args[1]) }) }

func cmdQuit(c *conn, _ [][]byte) {
	c.reply(func(w *Writer) { w.WriteSimple("OK") })
	c.quit = true
}

func cmdSelect(c *conn, args [][]byte) {
	db, ok := parseInt(args[1])
	switch {
	case !ok:
		c.replyError(msgNotInteger)
	case db != 0:
		c.replyError("ERR DB index is out of range")
	default:
		c.reply(func(w *Writer) { w.WriteSimple("OK") })
	}
}

// checkAuth reports whether user and pass name the only user, "default".
// The comparison takes the same time whatever the password.
func (c *conn) checkAuth(user, pass []byte) bool {
	okUser := string(user) == "default"
	okPass := subtle.ConstantTimeCompare(pass, []byte(c.s.cfg.RequirePass)) == 1 || c.s.cfg.RequirePass == ""
	return okUser && okPass
}

func cmdAuth(c *conn, args [][]byte) {
	user, pass := []byte("default"), args[1]
	switch len(args) {
	case 2:
		if c.s.cfg.RequirePass == "" {
			c.replyError("ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?")
			return
		}
	case 3:
		user, pass = args[1], args[2]
	default:
		c.replyError(msgSyntax)
		return
	}
	if !c.checkAuth(user, pass) {
		c.replyError(msgWrongPass)
		return
	}
	c.authed = true
	c.reply(func(w *Writer) { w.WriteSimple("OK") })
}

// cmdHello implements HELLO [protover [AUTH user pass] [SETNAME name]].
// Only RESP2 is spoken; its reply is the RESP3 map flattened to an array.
func cmdHello(c *conn, args [][]byte) {
	if len(args) >= 2 {
		ver, ok := parseInt(args[1])
		if !ok {
			c.replyError("ERR Protocol version is not an integer or out of range")
			return
		}
		if ver != 2 {
			c.replyError(msgNoProto)
			return
		}
	}
	var user, pass, name []byte
	var setName bool
	for i := 2; i < len(args); i++ {
		opt := strings.ToLower(string(args[i]))
		switch {
		case opt == "auth" && i+2 < len(args):
			user, pass = args[i+1], args[i+2]
			i += 2
		case opt == "setname" && i+1 < len(args):
			name, setName = args[i+1], true
			i++
		default:
			c.replyError(fmt.Sprintf("ERR Syntax error in HELLO option '%s'", clip(args[i], 128)))
			return
		}
	}
	if user != nil {
		if !c.checkAuth(user, pass) {
			c.replyError(msgWrongPass)
			return
		}
		c.authed = true
	}
	if !c.authed {
		c.replyError("NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time")
		return
	}
	if setName {
		if !validClientName(name) {
			c.replyError(msgBadClientName)
			return
		}
		c.name = string(name)
	}
	id := int64(c.id)
	c.reply(func(w *Writer) {
		w.WriteArray(14)
		w.WriteBulkString("server")
		w.WriteBulkString("lightcone")
		w.WriteBulkString("version")
		w.WriteBulkString(redisVersion)
		w.WriteBulkString("proto")
		w.WriteInt(2)
		w.WriteBulkString("id")
		w.WriteInt(id)
		w.WriteBulkString("mode")
		w.WriteBulkString("standalone")
		w.WriteBulkString("role")
		w.WriteBulkString("master")
		w.WriteBulkString("modules")
		w.WriteArray(0)
	})
}

const msgBadClientName = "ERR Client names cannot contain spaces, newlines or special characters."

// validClientName applies Redis's rule: printable ASCII without spaces.
func validClientName(b []byte) bool {
	for _, ch := range b {
		if ch < '!' || ch > '~' {
			return false
		}
	}
	return true
}

func cmdClient(c *conn, args [][]byte) {
	sub := strings.ToLower(string(args[1]))
	arity := map[string]int{"setname": 3, "getname": 2, "id": 2, "setinfo": 4}
	want, known := arity[sub]
	if !known {
		c.replyError(unknownSubcommand(args[1], "CLIENT"))
		return
	}
	if len(args) != want {
		c.replyError(wrongArity("client|" + sub))
		return
	}
	switch sub {
	case "setname":
		if !validClientName(args[2]) {
			c.replyError(msgBadClientName)
			return
		}
		c.name = string(args[2])
		c.reply(func(w *Writer) { w.WriteSimple("OK") })
	case "getname":
		name := c.name
		c.reply(func(w *Writer) {
			if name == "" {
				w.WriteNull()
			} else {
				w.WriteBulkString(name)
			}
		})
	case "id":
		id := int64(c.id)
		c.reply(func(w *Writer) { w.WriteInt(id) })
	case "setinfo": // LIB-NAME / LIB-VER: accepted and ignored
		c.reply(func(w *Writer) { w.WriteSimple("OK") })
	}
}

// cmdCommand answers enough of COMMAND for redis-cli's startup and
// go-redis: no command metadata is served.
func cmdCommand(c *conn, args [][]byte) {
	if len(args) == 1 {
		c.reply(func(w *Writer) { w.WriteArray(0) })
		return
	}
	switch sub := strings.ToLower(string(args[1])); sub {
	case "count":
		n := int64(len(commands))
		c.reply(func(w *Writer) { w.WriteInt(n) })
	case "docs":
		c.reply(func(w *Writer) { w.WriteArray(0) })
	case "info":
		n := len(args) - 2
		c.reply(func(w *Writer) {
			w.WriteArray(n)
			for range n {
				w.WriteNullArray()
			}
		})
	case "list":
		names := make([]string, 0, len(commands))
		for name := range commands { // lint:order-independent: sorted below
			names = append(names, name)
		}
		sort.Strings(names)
		c.reply(func(w *Writer) {
			w.WriteArray(len(names))
			for _, n := range names {
				w.WriteBulkString(n)
			}
		})
	default:
		c.replyError(unknownSubcommand(args[1], "COMMAND"))
	}
}

// configParams are what CONFIG GET reports: redis-benchmark asks for save
// and appendonly at startup.
var configParams = map[string]string{"save": "", "appendonly": "no", "databases": "1"}

func cmdConfig(c *conn, args [][]byte) {
	switch sub := strings.ToLower(string(args[1])); sub {
	case "get":
		if len(args) < 3 {
			c.replyError(wrongArity("config|get"))
			return
		}
		var names []string
		for name := range configParams { // lint:order-independent: sorted below
			for _, pat := range args[2:] {
				if ok, _ := path.Match(strings.ToLower(string(pat)), name); ok {
					names = append(names, name)
					break
				}
			}
		}
		sort.Strings(names)
		c.reply(func(w *Writer) {
			w.WriteArray(2 * len(names))
			for _, n := range names {
				w.WriteBulkString(n)
				w.WriteBulkString(configParams[n])
			}
		})
	case "set", "resetstat", "rewrite":
		c.replyError(msgNotSupported)
	default:
		c.replyError(unknownSubcommand(args[1], "CONFIG"))
	}
}

func cmdNotSupported(c *conn, _ [][]byte) { c.replyError(msgNotSupported) }

func cmdInfo(c *conn, args [][]byte) {
	all := len(args) == 1
	want := map[string]bool{}
	for _, a := range args[1:] {
		s := strings.ToLower(string(a))
		if s == "all" || s == "default" || s == "everything" {
			all = true
		}
		want[s] = true
	}
	var b strings.Builder
	section := func(name string, lines ...string) {
		if !all && !want[strings.ToLower(name)] {
			return
		}
		if b.Len() > 0 {
			b.WriteString("\r\n")
		}
		b.WriteString("# " + name + "\r\n")
		for _, l := range lines {
			b.WriteString(oneLine(l) + "\r\n")
		}
	}
	port := ""
	if a, ok := c.nc.LocalAddr().(*net.TCPAddr); ok {
		port = strconv.Itoa(a.Port)
	}
	uptime := int64(c.s.cfg.Now().Sub(c.s.start).Seconds())
	section("Server",
		"redis_version:"+redisVersion,
		"redis_mode:standalone",
		"server_name:lightcone",
		"tcp_port:"+port,
		"uptime_in_seconds:"+strconv.FormatInt(uptime, 10),
		"uptime_in_days:"+strconv.FormatInt(uptime/86400, 10))
	section("Clients", "connected_clients:"+strconv.FormatInt(c.s.nconns.Load(), 10),
		"maxclients:"+strconv.Itoa(c.s.cfg.MaxClients),
		// Connections an event loop serves, and those that left one for a
		// goroutine of their own (loop_linux.go).
		"lightcone_event_loops:"+strconv.Itoa(c.s.loopCount()),
		"lightcone_event_loop_clients:"+strconv.FormatInt(c.s.onLoops.Load(), 10),
		"lightcone_event_loop_detached:"+strconv.FormatInt(c.s.detached.Load(), 10))
	// Bytes of command arguments and replies all connections hold, against
	// Config.BufferBudget (Redis reports its client buffers here too).
	section("Memory", "mem_clients_normal:"+strconv.FormatInt(c.s.buffered.Load(), 10))
	section("Stats", "rejected_connections:"+strconv.FormatInt(c.s.rejected.Load(), 10))
	section("Keyspace")
	lc := []string{
		"keyspace:" + c.keyspace,
		"read_level:" + c.read.String(),
		"write_level:" + c.write.String(),
	}
	if c.s.cfg.Info != nil {
		extra := c.s.cfg.Info()
		keys := make([]string, 0, len(extra))
		for k := range extra { // lint:order-independent: sorted below
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			lc = append(lc, k+":"+extra[k])
		}
	}
	section("Lightcone", lc...)
	text := b.String()
	c.reply(func(w *Writer) { w.WriteBulkString(text) })
}

// --- string commands ---

func cmdGet(c *conn, args [][]byte) { c.readKind(args[1], kindString, writeString) }

// setOptions are SET's options after the key and value.
type setOptions struct {
	nx, xx, get, keepTTL bool
	expiryMs             int64 // absolute Unix ms; 0: none
}

// parseSetOptions parses [NX|XX] [GET] [EX s|PX ms|EXAT s|PXAT ms|KEEPTTL]
// as Redis does, returning an error reply on failure.
func parseSetOptions(opts [][]byte, nowMs int64) (setOptions, string) {
	var o setOptions
	hasExpiry := false
	for i := 0; i < len(opts); i++ {
		switch opt := strings.ToUpper(string(opts[i])); opt {
		case "NX":
			if o.xx {
				return o, msgSyntax
			}
			o.nx = true
		case "XX":
			if o.nx {
				return o, msgSyntax
			}
			o.xx = true
		case "GET":
			o.get = true
		case "KEEPTTL":
			if hasExpiry {
				return o, msgSyntax
			}
			o.keepTTL = true
		case "EX", "PX", "EXAT", "PXAT":
			if hasExpiry || o.keepTTL || i+1 == len(opts) {
				return o, msgSyntax
			}
			hasExpiry = true
			i++
			n, ok := parseInt(opts[i])
			if !ok {
				return o, msgNotInteger
			}
			const invalid = "ERR invalid expire time in 'set' command"
			if n <= 0 {
				return o, invalid
			}
			if opt == "EX" || opt == "EXAT" {
				if n > (1<<63-1)/1000 {
					return o, invalid
				}
				n *= 1000
			}
			if opt == "EX" || opt == "PX" {
				if n > 1<<63-1-nowMs {
					return o, invalid
				}
				n += nowMs
			}
			o.expiryMs = n
		default:
			return o, msgSyntax
		}
	}
	return o, ""
}

func cmdSet(c *conn, args [][]byte) {
	key, ok := c.key(args[1])
	if !ok {
		return
	}
	// A SET without options does not read the clock (a clock read was 4%
	// of SET -P 16's CPU); options are parsed with it, for an expiry.
	var nowMs int64
	if len(args) > 3 {
		nowMs = c.nowMs()
	}
	o, msg := parseSetOptions(args[3:], nowMs)
	if msg != "" {
		c.replyError(msg)
		return
	}
	if !c.valueFits(len(args[2])) {
		return
	}
	// The value is stored: it must not be the Reader's borrowed memory.
	nv := value{kind: kindString, str: owned(args[2]), expiryMs: o.expiryMs}
	if !o.nx && !o.xx && !o.get && !o.keepTTL {
		enc := nv.encode()
		if !c.valueFits(len(enc)) {
			return
		}
		c.await1(c.putReq(key, enc, c.write), writeOK)
		return
	}
	var old value
	var found bool
	ok = c.modify(key, func(o0 value, f0 bool) (value, edit, string) {
		old, found = o0, f0
		if o.get && found && old.kind != kindString {
			return value{}, editKeep, msgWrongType
		}
		if o.nx && found || o.xx && !found {
			return value{}, editKeep, ""
		}
		put := nv
		if o.keepTTL && found {
			put.expiryMs = old.expiryMs
		}
		return put, editPut, ""
	})
	if !ok {
		return
	}
	written := !(o.nx && found || o.xx && !found)
	c.reply(func(w *Writer) {
		switch {
		case o.get && found:
			w.WriteBulk(old.str)
		case o.get || !written:
			w.WriteNull()
		default:
			w.WriteSimple("OK")
		}
	})
}

func writeOK(w *Writer, reps []*wire.Reply) {
	if msg, failed := firstError(reps); failed {
		w.WriteError(msg)
		return
	}
	w.WriteSimple("OK")
}

// keysFit checks every key's size without converting any, replying the
// error for the first that is too large.
func (c *conn) keysFit(args [][]byte) bool {
	for _, a := range args {
		if len(a) > c.s.cfg.MaxKeyBytes {
			_, ok := c.key(a)
			return ok
		}
	}
	return true
}

// inSlices runs fn over consecutive runs of at most multiKeySlice of n
// items, [lo, hi), until it returns false. A multi-key command runs its
// slices one after the other, each one hand-off to the backend, so that it
// takes turns with other clients and holds one slice's requests and
// replies at a time.
func inSlices(n, per int, fn func(lo, hi int) bool) {
	for lo := 0; lo < n; lo += per {
		if !fn(lo, min(lo+per, n)) {
			return
		}
	}
}

// cmdDel reads each key to count the existing ones, then deletes those:
// the backend's delete does not say whether the key existed. Keys go in
// slices; a key repeated in a later slice is gone by then, so it is
// counted once, as in Redis.
func cmdDel(c *conn, args [][]byte) {
	if !c.keysFit(args[1:]) {
		return
	}
	c.awaitPending()
	var n int64
	msg := ""
	inSlices(len(args)-1, multiKeySlice, func(lo, hi int) bool {
		var deleted int64
		deleted, msg = c.delSlice(args[1+lo : 1+hi])
		n += deleted
		return msg == ""
	})
	if msg != "" {
		c.replyError(msg)
		return
	}
	c.reply(func(w *Writer) { w.WriteInt(n) })
}

// delSlice deletes keys, returning how many were live, or an error reply.
func (c *conn) delSlice(args [][]byte) (int64, string) {
	seen := make(map[string]bool, len(args))
	var gets []*wire.Request
	for _, a := range args {
		if k := string(a); !seen[k] {
			seen[k] = true
			gets = append(gets, c.getReq(k, c.read))
		}
	}
	reps, ok := c.call(gets...)
	if !ok {
		return 0, errClosing
	}
	var dels []*wire.Request
	var n int64
	for i, r := range reps {
		if r.Err != nil {
			return 0, backendError(r.Err)
		}
		if !r.Found {
			continue
		}
		// An expired value is deleted too, but not counted.
		if _, live, _ := c.decode(r); live {
			n++
		}
		dels = append(dels, c.delReq(gets[i].Key, c.write))
	}
	c.releaseReplies()
	if reps, ok = c.call(dels...); !ok {
		return 0, errClosing
	}
	if msg, failed := firstError(reps); failed {
		return 0, msg
	}
	c.releaseReplies()
	return n, ""
}

// errClosing is the reply, never sent, of a command cut short because the
// server is closing.
const errClosing = "ERR server closing"

// getsFor returns a get request for each key.
func (c *conn) getsFor(args [][]byte) []*wire.Request {
	gets := make([]*wire.Request, len(args))
	for i, a := range args {
		gets[i] = c.getReq(string(a), c.read)
	}
	return gets
}

func cmdExists(c *conn, args [][]byte) {
	keys := args[1:]
	if !c.keysFit(keys) {
		return
	}
	count := func(reps []*wire.Reply) (int64, string) {
		var n int64
		for _, r := range reps {
			_, found, msg := c.decode(r)
			if msg != "" {
				return 0, msg
			}
			if found {
				n++
			}
		}
		return n, ""
	}
	if len(keys) <= multiKeySlice {
		c.await(c.getsFor(keys), func(w *Writer, reps []*wire.Reply) {
			if n, msg := count(reps); msg != "" {
				w.WriteError(msg)
			} else {
				w.WriteInt(n)
			}
		})
		return
	}
	c.awaitPending()
	var n int64
	msg := ""
	inSlices(len(keys), multiKeySlice, func(lo, hi int) bool {
		reps, ok := c.call(c.getsFor(keys[lo:hi])...)
		if !ok {
			msg = errClosing
			return false
		}
		var part int64
		part, msg = count(reps)
		n += part
		c.releaseReplies()
		return msg == ""
	})
	if msg != "" {
		c.replyError(msg)
		return
	}
	c.reply(func(w *Writer) { w.WriteInt(n) })
}

// cmdMGet reads the keys. A large MGET is read in slices and its reply
// written as each slice arrives, so the connection never holds more than
// one slice of values. An error in the first slice is the reply, as for a
// small MGET; a key that fails in a later slice, the array being under
// way, is an error element of the array (go-redis returns it as that
// element's error).
func cmdMGet(c *conn, args [][]byte) {
	keys := args[1:]
	if !c.keysFit(keys) {
		return
	}
	element := func(w *Writer, r *wire.Reply) {
		// As in Redis, a value of another type reads as nil.
		v, found, msg := c.decode(r)
		if msg != "" || !found || v.kind != kindString {
			w.WriteNull()
		} else {
			w.WriteBulk(v.str)
		}
	}
	if len(keys) <= multiKeySlice {
		c.await(c.getsFor(keys), func(w *Writer, reps []*wire.Reply) {
			if msg, failed := firstError(reps); failed {
				w.WriteError(msg)
				return
			}
			w.WriteArray(len(reps))
			for _, r := range reps {
				element(w, r)
			}
		})
		return
	}
	// Nothing is owed before this reply: it goes straight to the writer,
	// which sends it on as its buffer fills.
	c.awaitPending()
	inSlices(len(keys), multiKeySlice, func(lo, hi int) bool {
		reps, ok := c.call(c.getsFor(keys[lo:hi])...)
		if !ok {
			return false
		}
		if lo == 0 {
			if msg, failed := firstError(reps); failed {
				c.w.WriteError(msg)
				return false
			}
			c.w.WriteArray(len(keys))
		}
		for _, r := range reps {
			if r.Err != nil {
				c.w.WriteError(backendError(r.Err))
			} else {
				element(c.w, r)
			}
		}
		c.releaseReplies()
		return true
	})
}

// cmdMSet writes every pair concurrently, a slice of pairs at a time.
// Unlike Redis's MSET it is not atomic: on an error reply some pairs may
// have been written.
func cmdMSet(c *conn, args [][]byte) {
	if len(args)%2 != 1 {
		c.replyError(wrongArity("mset"))
		return
	}
	pairs := args[1:]
	if len(pairs) <= 2*multiKeySlice {
		if reqs, msg := c.putsFor(pairs); msg != "" {
			c.replyError(msg)
		} else {
			c.await(reqs, writeOK)
		}
		return
	}
	// Refuse a bad key or value before writing any pair.
	for i := 0; i < len(pairs); i += 2 {
		if len(pairs[i]) > c.s.cfg.MaxKeyBytes || len(pairs[i+1]) > c.s.cfg.MaxValueBytes {
			_, msg := c.putsFor(pairs[i : i+2])
			c.replyError(msg)
			return
		}
	}
	c.awaitPending()
	msg := ""
	inSlices(len(pairs)/2, multiKeySlice, func(lo, hi int) bool {
		var reqs []*wire.Request
		if reqs, msg = c.putsFor(pairs[2*lo : 2*hi]); msg != "" {
			return false
		}
		reps, ok := c.call(reqs...)
		if !ok {
			msg = errClosing
			return false
		}
		msg, _ = firstError(reps)
		c.releaseReplies()
		return msg == ""
	})
	if msg != "" {
		c.replyError(msg)
		return
	}
	c.reply(func(w *Writer) { w.WriteSimple("OK") })
}

// putsFor returns a put for each key-value pair, or the error reply for
// the first key or value that is too large.
func (c *conn) putsFor(pairs [][]byte) ([]*wire.Request, string) {
	reqs := make([]*wire.Request, 0, len(pairs)/2)
	for i := 0; i < len(pairs); i += 2 {
		if n := len(pairs[i]); n > c.s.cfg.MaxKeyBytes {
			return nil, c.keyTooLarge(n)
		}
		v := value{kind: kindString, str: pairs[i+1]}
		enc := v.encode()
		if n := len(enc); n > c.s.cfg.MaxValueBytes {
			return nil, c.valueTooLarge(n)
		}
		reqs = append(reqs, c.putReq(string(pairs[i]), enc, c.write))
	}
	return reqs, ""
}

// cmdIncr implements INCR, DECR, INCRBY and DECRBY through modify (an
// atomic read-modify-write). The value keeps its TTL, as in Redis.
func cmdIncr(c *conn, args [][]byte) {
	name := strings.ToLower(string(args[0]))
	delta := int64(1)
	switch name {
	case "decr":
		delta = -1
	case "incrby", "decrby":
		d, ok := parseInt(args[2])
		if !ok {
			c.replyError(msgNotInteger)
			return
		}
		if name == "decrby" {
			if d == -1<<63 {
				c.replyError("ERR decrement would overflow")
				return
			}
			d = -d
		}
		delta = d
	}
	key, ok := c.key(args[1])
	if !ok {
		return
	}
	var n int64
	ok = c.modify(key, func(old value, found bool) (value, edit, string) {
		var cur int64
		if found {
			if old.kind != kindString {
				return value{}, editKeep, msgWrongType
			}
			var ok bool
			if cur, ok = parseInt(old.str); !ok {
				return value{}, editKeep, msgNotInteger
			}
		}
		if delta > 0 && cur > 1<<63-1-delta || delta < 0 && cur < -1<<63-delta {
			return value{}, editKeep, msgOverflow
		}
		n = cur + delta
		return value{kind: kindString, str: strconv.AppendInt(nil, n, 10), expiryMs: old.expiryMs}, editPut, ""
	})
	if ok {
		c.reply(func(w *Writer) { w.WriteInt(n) })
	}
}

func cmdTTL(c *conn, args [][]byte) {
	key, ok := c.key(args[1])
	if !ok {
		return
	}
	ms := strings.ToLower(string(args[0])) == "pttl"
	c.await([]*wire.Request{c.getReq(key, c.read)}, func(w *Writer, reps []*wire.Reply) {
		v, found, msg := c.decode(reps[0])
		switch {
		case msg != "":
			w.WriteError(msg)
		case !found:
			w.WriteInt(-2)
		case v.expiryMs == 0:
			w.WriteInt(-1)
		case ms:
			w.WriteInt(v.expiryMs - c.nowMs())
		default:
			w.WriteInt((v.expiryMs - c.nowMs() + 500) / 1000)
		}
	})
}

// --- hash commands ---

// cmdHSet implements HSET and HMSET through modify: get the hash, merge,
// put it back if nothing changed it meanwhile.
func cmdHSet(c *conn, args [][]byte) {
	name := strings.ToLower(string(args[0]))
	if len(args)%2 != 0 {
		c.replyError(wrongArity(name))
		return
	}
	key, ok := c.key(args[1])
	if !ok {
		return
	}
	var added int64
	ok = c.modify(key, func(h value, found bool) (value, edit, string) {
		if !found {
			h = value{kind: kindHash}
		} else if h.kind != kindHash {
			return value{}, editKeep, msgWrongType
		}
		added = 0
		for i := 2; i < len(args); i += 2 {
			if h.set(args[i], args[i+1]) {
				added++
			}
		}
		return h, editPut, ""
	})
	if !ok {
		return
	}
	if name == "hmset" {
		c.reply(func(w *Writer) { w.WriteSimple("OK") })
	} else {
		c.reply(func(w *Writer) { w.WriteInt(added) })
	}
}

// cmdHDel removes fields; a hash left empty is deleted, as in Redis.
func cmdHDel(c *conn, args [][]byte) {
	key, ok := c.key(args[1])
	if !ok {
		return
	}
	var removed int64
	ok = c.modify(key, func(h value, found bool) (value, edit, string) {
		removed = 0
		if !found {
			return value{}, editKeep, ""
		}
		if h.kind != kindHash {
			return value{}, editKeep, msgWrongType
		}
		for _, f := range args[2:] {
			if h.del(f) {
				removed++
			}
		}
		switch {
		case removed == 0:
			return value{}, editKeep, ""
		case len(h.fields) == 0:
			return value{}, editDelete, ""
		}
		return h, editPut, ""
	})
	if ok {
		c.reply(func(w *Writer) { w.WriteInt(removed) })
	}
}

// cmdHRead implements the hash reads: HGET, HMGET, HGETALL, HEXISTS, HLEN.
func cmdHRead(c *conn, args [][]byte) {
	name := strings.ToLower(string(args[0]))
	key, ok := c.key(args[1])
	if !ok {
		return
	}
	fields := args[2:]
	c.await([]*wire.Request{c.getReq(key, c.read)}, func(w *Writer, reps []*wire.Reply) {
		h, found, msg := c.decode(reps[0])
		if msg != "" {
			w.WriteError(msg)
			return
		}
		if found && h.kind != kindHash {
			w.WriteError(msgWrongType)
			return
		}
		switch name {
		case "hget":
			if i, ok := h.find(fields[0]); ok {
				w.WriteBulk(h.fields[i].val)
			} else {
				w.WriteNull()
			}
		case "hmget":
			w.WriteArray(len(fields))
			for _, f := range fields {
				if i, ok := h.find(f); ok {
					w.WriteBulk(h.fields[i].val)
				} else {
					w.WriteNull()
				}
			}
		case "hgetall":
			w.WriteArray(2 * len(h.fields))
			for _, f := range h.fields {
				w.WriteBulk(f.name)
				w.WriteBulk(f.val)
			}
		case "hexists":
			if _, ok := h.find(fields[0]); ok {
				w.WriteInt(1)
			} else {
				w.WriteInt(0)
			}
		case "hlen":
			w.WriteInt(int64(len(h.fields)))
		}
	})
}

// --- Lightcone extensions ---

// parseLevel parses a consistency level; "DEFAULT" selects the keyspace's.
func parseLevel(b []byte) (wire.Level, string) {
	if strings.EqualFold(string(b), "default") {
		return wire.LevelDefault, ""
	}
	l, err := wire.ParseLevel(string(b))
	if err != nil {
		return 0, "ERR " + err.Error()
	}
	return l, ""
}

// cmdLCConsistency implements LC.CONSISTENCY [READ level] [WRITE level].
func cmdLCConsistency(c *conn, args [][]byte) {
	if len(args) == 1 {
		r, wr := c.read.String(), c.write.String()
		c.reply(func(w *Writer) {
			w.WriteArray(4)
			w.WriteBulkString("READ")
			w.WriteBulkString(r)
			w.WriteBulkString("WRITE")
			w.WriteBulkString(wr)
		})
		return
	}
	if len(args)%2 != 1 {
		c.replyError(msgSyntax)
		return
	}
	read, write := c.read, c.write
	for i := 1; i < len(args); i += 2 {
		l, msg := parseLevel(args[i+1])
		if msg != "" {
			c.replyError(msg)
			return
		}
		switch strings.ToUpper(string(args[i])) {
		case "READ":
			read = l
		case "WRITE":
			write = l
		default:
			c.replyError(msgSyntax)
			return
		}
	}
	c.read, c.write = read, write
	c.reply(func(w *Writer) { w.WriteSimple("OK") })
}

// cmdLCKeyspace implements LC.KEYSPACE [name].
func cmdLCKeyspace(c *conn, args [][]byte) {
	switch len(args) {
	case 1:
		ks := c.keyspace
		c.reply(func(w *Writer) { w.WriteBulkString(ks) })
	case 2:
		if len(args[1]) == 0 {
			c.replyError("ERR keyspace name must not be empty")
			return
		}
		name := string(args[1])
		if ks := c.s.cfg.Keyspaces; ks != nil && !slices.Contains(ks, name) {
			c.replyError(fmt.Sprintf("ERR unknown keyspace %q (keyspaces: %s)", name, strings.Join(ks, ", ")))
			return
		}
		c.keyspace = name
		c.reply(func(w *Writer) { w.WriteSimple("OK") })
	default:
		c.replyError(wrongArity("lc.keyspace"))
	}
}

// cmdLCOp implements LC.GET key [LEVEL l], LC.GETAT key [LEVEL l],
// LC.SET key value [LEVEL l] [UPDATE ACTIVE|PASSIVE], LC.DEL key [LEVEL
// l] [UPDATE ...], and the conditional LC.CAS key expected_version value
// [...] and LC.CAD key expected_version [...]: one backend operation on
// the raw stored bytes (no envelope decoding), replying the version read
// or written.
func cmdLCOp(c *conn, args [][]byte) {
	name := strings.ToLower(string(args[0]))
	fixed := map[string]int{"lc.set": 3, "lc.cas": 4, "lc.cad": 3}[name]
	fixed = max(fixed, 2)
	var level wire.Level
	var lvlSet bool
	var update wire.UpdateMode
	rest := args[fixed:]
	if len(rest)%2 != 0 {
		c.replyError(msgSyntax)
		return
	}
	for ; len(rest) > 0; rest = rest[2:] {
		switch {
		case strings.EqualFold(string(rest[0]), "level"):
			l, msg := parseLevel(rest[1])
			if msg != "" {
				c.replyError(msg)
				return
			}
			level, lvlSet = l, true
		case strings.EqualFold(string(rest[0]), "update") && name != "lc.get" && name != "lc.getat":
			m, err := wire.ParseUpdateMode(string(rest[1]))
			if err != nil {
				c.replyError("ERR " + err.Error())
				return
			}
			update = m
		default:
			c.replyError(msgSyntax)
			return
		}
	}
	key, ok := c.key(args[1])
	if !ok {
		return
	}
	var req *wire.Request
	switch name {
	case "lc.get", "lc.getat":
		req = c.getReq(key, c.read)
	case "lc.set":
		if !c.valueFits(len(args[2])) {
			return
		}
		req = c.putReq(key, args[2], c.write)
	case "lc.del":
		req = c.delReq(key, c.write)
	case "lc.cas", "lc.cad":
		expected, err := wire.ParseVersion(string(args[2]))
		if err != nil {
			c.replyError("ERR " + err.Error())
			return
		}
		if name == "lc.cas" {
			if !c.valueFits(len(args[3])) {
				return
			}
			req = c.putReq(key, args[3], c.write)
		} else {
			req = c.delReq(key, c.write)
		}
		req.Cond, req.Expected = true, expected
	}
	if lvlSet {
		req.Level = level
	}
	req.Update = update
	c.await([]*wire.Request{req}, func(w *Writer, reps []*wire.Reply) {
		r := reps[0]
		switch {
		case r.Err != nil && r.Err.Code == wire.ErrConflict:
			// The current version first, so a client can retry with it.
			w.WriteError("CONFLICT " + r.Version.String() + " " + r.Err.Msg)
		case r.Err != nil:
			w.WriteError(backendError(r.Err))
		case name == "lc.getat":
			// Where the protocol's order places the read (checkers'
			// hint), with the value (nil if absent) and its version.
			w.WriteArray(3)
			if r.Found {
				w.WriteBulk(r.Value)
			} else {
				w.WriteNull()
			}
			w.WriteBulkString(r.Version.String())
			w.WriteInt(r.ReadAt)
		case name != "lc.get":
			w.WriteBulkString(r.Version.String())
		case !r.Found:
			w.WriteNullArray()
		default:
			w.WriteArray(2)
			w.WriteBulk(r.Value)
			w.WriteBulkString(r.Version.String())
		}
	})
}

// cmdLCHold implements LC.ACQUIRE key and LC.RELEASE key: take or give
// back the connection's hold on key (wire.OpAcquire, wire.OpRelease;
// protocol rc), replying +OK. The connection remembers its holds and
// releases them when it closes.
func cmdLCHold(c *conn, args [][]byte) {
	key, ok := c.key(args[1])
	if !ok {
		return
	}
	op := wire.OpAcquire
	if strings.EqualFold(string(args[0]), "lc.release") {
		op = wire.OpRelease
	}
	h := hold{keyspace: c.keyspace, key: key}
	c.await([]*wire.Request{{Op: op, Key: key, Keyspace: h.keyspace}}, func(w *Writer, reps []*wire.Reply) {
		r := reps[0]
		switch {
		case op == wire.OpRelease:
			// Refused or not, the row is no longer this connection's.
			delete(c.holds, h)
		case r.Err == nil:
			if c.holds == nil {
				c.holds = make(map[hold]struct{})
			}
			c.holds[h] = struct{}{}
		}
		if r.Err != nil {
			w.WriteError(backendError(r.Err))
		} else {
			w.WriteSimple("OK")
		}
	})
}

// cmdLCMigrate implements LC.MIGRATE key region: move key's write
// mastership to region, in the connection's keyspace, replying the region
// of the key's master afterwards.
func cmdLCMigrate(c *conn, args [][]byte) {
	key, ok := c.key(args[1])
	if !ok {
		return
	}
	if len(args[2]) == 0 {
		c.replyError("ERR region name must not be empty")
		return
	}
	req := &wire.Request{Op: wire.OpMigrate, Key: key, Value: args[2]}
	c.await([]*wire.Request{req}, func(w *Writer, reps []*wire.Reply) {
		if r := reps[0]; r.Err != nil {
			w.WriteError(backendError(r.Err))
		} else {
			w.WriteBulk(r.Value)
		}
	})
}
