package disk

import (
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"

	"github.com/lightcone/lightcone/internal/ratelog"
)

// Disk full: how the engine survives it.
//
// Pebble (v1.1.5, the version in go.mod) treats a failed write-ahead-log
// write as fatal: a commit whose WAL write, WAL rotation or WAL fsync fails
// ends in Logger.Fatalf("pebble: fatal commit error"), which by default
// exits the process, and once the log writer has failed it stays failed: a
// later commit panics and DB.Close may block on the commit pipeline's lock.
// A failed MANIFEST write (after a flush or compaction) is fatal too. A
// failed flush or compaction is not: Pebble reports it to
// EventListener.BackgroundError and retries, and while memtables cannot be
// flushed, commits stall. So the defence is to never let Pebble's own
// writes meet a full disk:
//
//  1. Admission. The engine keeps the filesystem's free space (GetDiskUsage,
//     a statfs: re-read every CheckInterval and after every Reserve/4 bytes
//     committed) and Writable refuses client writes while it is below the
//     reserve. The reserve is what flushes, compactions, WAL rotations and
//     the protocols' own writes (replication from peers, lease and metadata
//     records), which are never refused, need: by default 5% of the
//     filesystem, at least 4 memtables and at most 1 GiB. On filesystems
//     under 256 MiB the memtable shrinks too (total/64, at least 256 KiB),
//     so a 20 MiB tmpfs keeps about 2 MiB back. Writes are taken again, on
//     their own, once free space is back over the reserve (plus 1/8 of it,
//     so the node does not flap at the edge).
//  2. A ballast. At open the engine allocates EMERGENCY_BALLAST (two
//     memtables) in the data directory. Should a write meet ENOSPC anyway
//     (another process filled the disk between two checks), the
//     filesystem wrapper (vfs.OnDiskFull) deletes the ballast and retries
//     the write once, so the WAL, flush or MANIFEST write that would have
//     been fatal goes through; client writes stay refused until there is
//     room to allocate the ballast again above the reserve.
//  3. No crash if both fail. Pebble's Fatalf panics instead of exiting; Sync
//     recovers it and the engine fails for good: the batch is not
//     acknowledged, every later Sync fails, Writable reports it. The node
//     keeps serving what it can and says it needs a restart (see package
//     node); nothing acknowledged is lost, since every acknowledged write
//     was committed before its reply left.
//
// Background errors and write stalls are logged at most once per
// LogInterval, with how many were suppressed.

// Options configures Open. Zero fields take the defaults noted.
type Options struct {
	// Sync is the fsync policy. Default SyncAlways.
	Sync SyncPolicy
	// FS is the filesystem the data directory is on. Default vfs.Default
	// (the operating system's); tests inject a FillingFS or errorfs.
	FS vfs.FS
	// ReserveBytes is the free space below which client writes are
	// refused. Default DefaultReserve of the filesystem's size.
	ReserveBytes ByteSize
	// CheckInterval is how often the free space is read. Default 1s.
	CheckInterval time.Duration
	// LogInterval is how often one condition (disk full, background
	// errors, stalls) may be logged. Default 10s.
	LogInterval time.Duration
	// Log receives the engine's warnings. Default: discarded.
	Log *slog.Logger
	// FsyncHoldsThread makes the log's fsyncs raw system calls that keep
	// their thread's Go scheduler slot (P) while the disk flushes, as
	// Redis's one thread waits in its appendfsync always fsync: no hand-off
	// of the P to another thread and back around each fsync, and no
	// sysmon polling every 20 µs to take it. The node's loop turns it off
	// for a batch whose read replies left before the fsync (their
	// connections could run meanwhile) through Pebble.HoldThread
	// (store.ThreadHolder). Under sync always on one core (GOMAXPROCS=1):
	// SET -P 1 x1.33 requests/s and x0.70 p99, YCSB within its spread
	// (docs/performance.md, "Fsyncs that hold their thread"). The price: while such an fsync runs nothing else of the
	// process runs on that P, and a garbage collection waits for it to
	// end; a disk that hangs in fsync stalls the whole process (its HTTP
	// admin included) until the fsync returns, as Redis's one thread
	// stalls in appendfsync always. Only files with an OS descriptor are
	// affected; Linux only.
	FsyncHoldsThread bool
	// RowCacheBytes bounds the row cache: the value bytes it keeps, and
	// one key per RowCacheBytesPerKey of it. Default DefaultCacheBytes
	// (64 MiB, 131,072 keys). Each key kept costs about 0.6 KiB of the
	// process's memory besides its value (docs/limits.md).
	RowCacheBytes ByteSize
	// SpareProc raises GOMAXPROCS by one while the engine flushes or
	// compacts, and restores it after: with GOMAXPROCS=1, background work
	// runs on the second core instead of taking the loop's. It acts only
	// when the GOMAXPROCS environment variable set the process below the
	// CPUs it may run on (runtime.NumCPU); under Go's default, which
	// follows a container's CPU quota, it does nothing (and logs so), and
	// it does not know of a quota GOMAXPROCS was set under. Default false.
	SpareProc bool
	// spare is the spareProcs SpareProc uses (tests inject one); nil: the
	// process's.
	spare *spareProcs
}

// ballastName is the emergency ballast's file name in the data directory
// (Pebble ignores files it does not recognise).
const ballastName = "EMERGENCY_BALLAST"

// MemTableSize is the memtable size the engine gives Pebble on a
// filesystem of total bytes: Pebble's default 4 MiB, scaled down to
// total/64 (at least 256 KiB) on filesystems under 256 MiB, whose reserve
// must hold a few of them.
func MemTableSize(total uint64) uint64 {
	return min(max(total/64, 256<<10), 4<<20)
}

// DefaultReserve is the default reserve on a filesystem of total bytes: 5%
// of it, at least four memtables (a WAL rotation, a flush and a compaction
// step), at most 1 GiB.
func DefaultReserve(total uint64) uint64 {
	return max(min(total/20, 1<<30), 4*MemTableSize(total))
}

// NoSpaceError says why client writes are refused: the data directory's
// filesystem has less free space than the reserve. It is retryable: writes
// are taken again once space returns.
type NoSpaceError struct {
	Dir                      string
	AvailBytes, ReserveBytes uint64
	TotalBytes               uint64
	// BallastReleased: a write met ENOSPC and the emergency ballast was
	// released to let it through.
	BallastReleased bool
}

func (e *NoSpaceError) Error() string {
	const tail = "; writes are refused until space is freed, reads are served"
	if e.BallastReleased && e.AvailBytes >= e.ReserveBytes {
		// Free bytes but ENOSPC: out of inodes, a quota, or space
		// that came and went between two readings.
		return fmt.Sprintf("disk full: a write met ENOSPC on the data directory %s (%s free of %s now; the emergency ballast was released)",
			e.Dir, Bytes(e.AvailBytes), Bytes(e.TotalBytes)) + tail
	}
	s := fmt.Sprintf("disk full: %s free of %s on the data directory %s, below the %s reserve",
		Bytes(e.AvailBytes), Bytes(e.TotalBytes), e.Dir, Bytes(e.ReserveBytes))
	if e.BallastReleased {
		s += " (a write met ENOSPC; the emergency ballast was released)"
	}
	return s + tail
}

// Bytes formats n in binary units ("1.5 MiB").
func Bytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.2f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// Space is the data directory's filesystem as the engine last read it.
type Space struct {
	TotalBytes   uint64 `json:"total_bytes"`
	AvailBytes   uint64 `json:"avail_bytes"`
	ReserveBytes uint64 `json:"reserve_bytes"`
	BallastBytes uint64 `json:"ballast_bytes"` // 0 once released
	// Writable says whether client writes are taken; Reason says why not.
	Writable bool   `json:"writable"`
	Reason   string `json:"reason,omitempty"`
	// Refused counts client writes refused since open.
	Refused int64 `json:"writes_refused"`
	// BackgroundErrors counts failed flushes and compactions since open.
	BackgroundErrors int64 `json:"background_errors"`
}

// monitor tracks free space, the ballast and the engine's failure.
type monitor struct {
	fs       vfs.FS // the caller's FS, without the OnDiskFull wrapper
	dir      string
	reserve  uint64 // 0: DefaultReserve
	ballastN uint64
	log      *slog.Logger
	spare    *spareProcs // Options.SpareProc in effect; nil: off

	// state is what Writable reads: nil when writes are taken.
	state    atomic.Pointer[error]
	failure  atomic.Pointer[error] // a failed commit: permanent
	refused  atomic.Int64
	bgErrors atomic.Int64

	mu           sync.Mutex // check's
	total, avail uint64
	resv         uint64
	ballast      bool // allocated
	checkErr     error

	fullLog, bgLog, stallLog, failLog ratelog.Limiter
}

func newMonitor(fs vfs.FS, dir string, o Options, log *slog.Logger) *monitor {
	m := &monitor{fs: fs, dir: dir, reserve: uint64(max(o.ReserveBytes, 0)), log: log}
	for _, l := range []*ratelog.Limiter{&m.fullLog, &m.bgLog, &m.stallLog, &m.failLog} {
		l.Every = o.LogInterval
	}
	return m
}

// sizes reads the filesystem's size once, for the memtable, reserve and
// ballast sizes.
func (m *monitor) sizes() (memTable uint64, err error) {
	u, err := m.fs.GetDiskUsage(m.dir)
	if err != nil {
		return 0, err
	}
	memTable = MemTableSize(u.TotalBytes)
	m.resv = m.reserve
	if m.resv == 0 {
		m.resv = DefaultReserve(u.TotalBytes)
	}
	m.ballastN = 2 * memTable
	return memTable, nil
}

func (m *monitor) ballastPath() string { return m.fs.PathJoin(m.dir, ballastName) }

// allocBallast creates the ballast; on failure nothing is left behind.
func (m *monitor) allocBallast() error {
	path := m.ballastPath()
	f, err := m.fs.Create(path)
	if err != nil {
		return err
	}
	err = f.Preallocate(0, int64(m.ballastN))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = m.fs.Remove(path)
		return err
	}
	m.ballast = true
	return nil
}

// onDiskFull runs when a write met ENOSPC (vfs.OnDiskFull; writes wait
// for it): it releases the ballast so the write's retry can succeed.
func (m *monitor) onDiskFull() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.ballast {
		m.log.Error("disk: a write met ENOSPC and the emergency ballast is already gone; it will fail", "dir", m.dir)
		return
	}
	if err := m.fs.Remove(m.ballastPath()); err != nil {
		m.log.Error("disk: a write met ENOSPC; releasing the emergency ballast failed", "dir", m.dir, "err", err)
		return
	}
	m.ballast = false
	if u, err := m.fs.GetDiskUsage(m.dir); err == nil {
		m.total, m.avail = u.TotalBytes, u.AvailBytes
	}
	m.log.Error("disk: a write met ENOSPC; released the emergency ballast so it can go through, client writes are refused", "dir", m.dir, "ballast", Bytes(m.ballastN))
	m.publishLocked()
}

// check re-reads the free space, restores the ballast if there is room,
// and publishes whether writes are taken (logging a change, and a
// reminder once per interval while refusing).
func (m *monitor) check() {
	m.mu.Lock()
	defer m.mu.Unlock()
	u, err := m.fs.GetDiskUsage(m.dir)
	if err != nil {
		// Unknown free space is no reason to refuse writes; say so.
		if m.checkErr == nil || m.fullLog.Allow() {
			m.log.Warn("disk: cannot read the data directory's free space", "dir", m.dir, "err", err)
		}
		m.checkErr = err
		return
	}
	m.checkErr = nil
	m.total, m.avail = u.TotalBytes, u.AvailBytes
	if !m.ballast && m.avail >= m.resv+m.ballastN+m.resv/8 {
		if err := m.allocBallast(); err != nil {
			if m.fullLog.Allow() {
				m.log.Warn("disk: cannot allocate the emergency ballast", "dir", m.dir, "err", err)
			}
		} else if u, err := m.fs.GetDiskUsage(m.dir); err == nil {
			m.avail = u.AvailBytes
		}
	}
	m.publishLocked()
}

// publishLocked sets the state Writable reads and logs changes.
func (m *monitor) publishLocked() {
	was := m.state.Load() == nil
	need := m.resv
	if !was {
		need += m.resv / 8 // hysteresis: resume clear of the edge
	}
	var err error
	if m.avail < need || !m.ballast {
		err = &NoSpaceError{Dir: m.dir, AvailBytes: m.avail, ReserveBytes: m.resv, TotalBytes: m.total, BallastReleased: !m.ballast}
	}
	if err == nil {
		m.state.Store(nil)
		if !was {
			m.log.Info("disk: space is back; client writes are taken again", "dir", m.dir, "avail", Bytes(m.avail), "reserve", Bytes(m.resv))
		}
		return
	}
	m.state.Store(&err)
	if was {
		m.fullLog.Force()
	}
	if m.fullLog.Allow() {
		m.log.Error("disk: refusing client writes", "err", err, "writes_refused", m.refused.Load())
	}
}

// writable returns why client writes are refused, or nil.
func (m *monitor) writable() error {
	if f := m.failure.Load(); f != nil {
		return *f
	}
	if s := m.state.Load(); s != nil {
		return *s
	}
	return nil
}

func (m *monitor) fail(err error) {
	m.failure.CompareAndSwap(nil, &err)
}

// listener reports Pebble's background errors and stalls, rate-limited,
// and with Options.SpareProc tells m.spare of flushes and compactions.
func (m *monitor) listener() *pebble.EventListener {
	l := &pebble.EventListener{
		BackgroundError: func(err error) {
			m.bgErrors.Add(1)
			if ok, n := m.bgLog.AllowN(); ok {
				m.log.Error("disk: background error (flush or compaction; Pebble retries it)", "dir", m.dir, "err", err, "suppressed", n)
			}
			if vfs.IsNoSpaceError(err) {
				m.check()
			}
		},
		WriteStallBegin: func(info pebble.WriteStallBeginInfo) {
			if ok, n := m.stallLog.AllowN(); ok {
				m.log.Warn("disk: writes stalled", "reason", info.Reason, "suppressed", n)
			}
		},
		DiskSlow: func(info pebble.DiskSlowInfo) {
			if ok, n := m.stallLog.AllowN(); ok {
				m.log.Warn("disk: slow disk operation", "info", info.String(), "suppressed", n)
			}
		},
	}
	if s := m.spare; s != nil {
		l.FlushBegin = func(pebble.FlushInfo) { s.begin() }
		l.FlushEnd = func(pebble.FlushInfo) { s.end() }
		l.CompactionBegin = func(pebble.CompactionInfo) { s.begin() }
		l.CompactionEnd = func(pebble.CompactionInfo) { s.end() }
		l.TableCreated = func(pebble.TableCreateInfo) { s.tableCreated() }
	}
	return l
}

// space reports the last reading.
func (m *monitor) space() Space {
	m.mu.Lock()
	s := Space{TotalBytes: m.total, AvailBytes: m.avail, ReserveBytes: m.resv, Refused: m.refused.Load(), BackgroundErrors: m.bgErrors.Load()}
	if m.ballast {
		s.BallastBytes = m.ballastN
	}
	m.mu.Unlock()
	s.Writable = true
	if f := m.failure.Load(); f != nil {
		s.Writable, s.Reason = false, (*f).Error()
	} else if st := m.state.Load(); st != nil {
		s.Writable, s.Reason = false, (*st).Error()
	}
	return s
}

// pebbleLogger routes Pebble's logging to slog; Fatalf panics (recovered
// by Sync) instead of exiting the process.
type pebbleLogger struct{ log *slog.Logger }

func (l pebbleLogger) Infof(format string, args ...any) {
	l.log.Debug("pebble: " + fmt.Sprintf(format, args...))
}

func (l pebbleLogger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	l.log.Error("pebble: fatal: " + msg)
	panic(&fatalError{msg: msg})
}

// fatalError is Pebble's Fatalf as a panic value.
type fatalError struct{ msg string }

func (e *fatalError) Error() string { return e.msg }

// recoverFatal turns a panic inside Pebble into *err.
func recoverFatal(err *error) {
	r := recover()
	if r == nil {
		return
	}
	switch v := r.(type) {
	case error:
		*err = v
	default:
		*err = fmt.Errorf("%v", v)
	}
	*err = fmt.Errorf("pebble: %w", *err)
}

// ByteSize is a size in bytes in configuration: a plain number of bytes or
// one with a unit (KiB, MiB, GiB, TiB; KB, MB, GB, TB are powers of 1000).
type ByteSize int64

var byteUnits = []struct {
	suffix string
	n      int64
}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1}}

// ParseByteSize parses "512MiB", "1 GiB", "1048576".
func ParseByteSize(s string) (ByteSize, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range byteUnits {
		if len(t) > len(u.suffix) && strings.EqualFold(t[len(t)-len(u.suffix):], u.suffix) {
			t, mult = strings.TrimSpace(t[:len(t)-len(u.suffix)]), u.n
			break
		}
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || f < 0 || f*float64(mult) > math.MaxInt64/2 {
		return 0, fmt.Errorf("disk: size %q: want a number of bytes, optionally with a unit (KiB, MiB, GiB, TiB, KB, MB, GB, TB)", s)
	}
	return ByteSize(f * float64(mult)), nil
}

// UnmarshalText parses a size as ParseByteSize does (YAML).
func (b *ByteSize) UnmarshalText(text []byte) error {
	v, err := ParseByteSize(string(text))
	if err == nil {
		*b = v
	}
	return err
}

// String formats the size in binary units.
func (b ByteSize) String() string {
	if b == 0 {
		return "0" // pflag shows no default for it
	}
	return Bytes(uint64(max(b, 0)))
}

// Set implements pflag.Value.
func (b *ByteSize) Set(s string) error { return b.UnmarshalText([]byte(s)) }

// Type implements pflag.Value.
func (b *ByteSize) Type() string { return "size" }
