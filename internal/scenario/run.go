package scenario

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lightcone/lightcone/internal/check"
	"github.com/lightcone/lightcone/internal/cost"
	"github.com/lightcone/lightcone/internal/fifo"
	"github.com/lightcone/lightcone/internal/hlc"
	"github.com/lightcone/lightcone/internal/protocol"
	"github.com/lightcone/lightcone/internal/sim"
	"github.com/lightcone/lightcone/internal/storagesvc"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/wire"
	"github.com/lightcone/lightcone/internal/workload"
)

// Run executes one simulation and checks its history.
func Run(c Config) (*Result, error) {
	c.EnsureDefaults()
	r, err := resolve(c)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	res := r.run()
	res.RealTime = time.Since(start)
	return res, nil
}

// opClass is a latency series of the report.
type opClass uint8

const (
	classRead opClass = iota
	classUpdate
	classInsert
	classScan
	classRMW
	numClasses
)

func classOf(k workload.OpKind) opClass {
	switch k {
	case workload.Update:
		return classUpdate
	case workload.Insert:
		return classInsert
	case workload.Scan:
		return classScan
	case workload.ReadModifyWrite:
		return classRMW
	}
	return classRead
}

var classNames = [numClasses]string{"read", "update", "insert", "scan", "rmw"}

// NumOpClasses is how many operation kinds a report distinguishes.
const NumOpClasses = int(numClasses)

// OpClass returns the report series of a workload operation: its index
// (below NumOpClasses) and name ("read", "update", "insert", "scan", "rmw").
func OpClass(k workload.OpKind) (int, string) {
	c := classOf(k)
	return int(c), classNames[c]
}

// OpClassName names series i.
func OpClassName(i int) string { return classNames[i] }

// step is one request of a logical operation (a scan or a read-modify-write
// takes several).
type step struct {
	op  wire.Op
	key string
	txn *wire.Txn // op OpTxn
}

// client is one simulated YCSB client thread: it runs one operation at a
// time, from a queue of Poisson arrivals (open loop) or back to back.
type client struct {
	idx     int
	region  int
	gateway wire.NodeID
	rng     *rand.Rand
	session wire.ClientID

	queue    []int64 // arrival times of operations not yet started (open loop)
	busy     bool
	class    opClass
	intended int64 // arrival time of the running operation
	started  int64 // when its first request left
	steps    []step
	stepBuf  []step // the array steps was last built in, reused by the next operation
	// waits are the requests whose client timeout is pending, oldest
	// first: every timeout waits ClientTimeout, so they fire in the order
	// they were scheduled, and one func per client (timeout) serves them
	// all instead of a closure per request.
	waits      fifo.Queue[sentReq]
	timeout    func()
	reqID      wire.RequestID
	call       int64 // when the current request left
	value      string
	failed     bool
	opsStarted int // operations started (Config.OpsPerClient)
}

type runner struct {
	r        *resolved
	s        *sim.Sim
	gen      *workload.Generator
	tgen     *workload.TxnGenerator // Config.Transactions; nil otherwise
	clients  []*client
	sessions map[wire.ClientID]*client
	nextSess wire.ClientID
	end      int64 // clients start no operation after this
	warmup   int64 // operations started before this are not measured
	// stopped is when every client had run Config.OpsPerClient operations
	// (0: the run went to Duration).
	stopped int64
	// warmMsgs are the message counts when the warm-up ended.
	warmMsgs []sim.KindCount
	// acc counts what the run is charged for (Result.Cost); svcBase are
	// the services' own request counts when counting began (after the
	// load phase's direct writes, or at the end of the warm-up).
	acc     *cost.Accountant
	svcBase map[string]int64
	record  bool
	hist    check.History // Ops taken from histOps at the end
	histOps opLog
	txns    []check.Txn                           // the transactional history (Config.Transactions)
	txnOut  map[string]TxnOutcomes                // Result.TxnOutcomes
	lat     [][numClasses]*hdrhistogram.Histogram // [region][class] service latency, µs; nil until used (latencies)
	intent  [][numClasses]*hdrhistogram.Histogram // from intended start (coordinated omission corrected)
	errs    map[string]int
	ops     int
	writes  uint64
	// perSecond[class][s] holds the latencies of operations completing in
	// second s of the run (time series), at two significant digits.
	perSecond [numClasses][]*hdrhistogram.Histogram
}

func newHist() *hdrhistogram.Histogram {
	return hdrhistogram.New(1, int64(time.Hour/time.Microsecond), 3)
}

func (r *resolved) run() *Result {
	c := r.cfg
	rn := &runner{r: r, sessions: map[wire.ClientID]*client{}, errs: map[string]int{}, end: int64(c.Duration), warmup: int64(c.Warmup)}
	rn.record = c.Check != "none"
	rn.hist.Init = map[string]string{}
	gen, err := workload.NewGenerator(r.workload)
	if err != nil {
		panic(err) // validated in resolve
	}
	rn.gen = gen
	if r.txns != nil {
		rn.tgen = r.newTxnGenerator()
	}
	names := make([]string, len(r.world.Regions))
	for i, reg := range r.world.Regions {
		names[i] = reg.Name
	}
	rn.acc = cost.NewAccountant(names)
	for _, v := range r.vms {
		rn.acc.AddVMs(v)
	}
	rn.s = sim.New(sim.Config{
		Seed:         c.Seed,
		Topology:     r.topo,
		Factory:      r.proto.Factory(),
		Clock:        sim.ClockConfig{MaxOffset: c.Clock.MaxOffset, MaxDriftPPM: c.Clock.MaxDriftPPM},
		Net:          c.Net.sim(),
		OnReply:      rn.onReply,
		ServiceTime:  c.ServiceTime,
		PublishReads: c.PublishReads,
		StoreFaults:  c.StoreFaults,
		Codec:        runCodec(simCodec),
		// A broken invariant is recorded (Failures) and fails the run's
		// check (checkHistory) rather than panicking.
		OnViolation: func(sim.Failure) {},
		Meter:       rn.acc,
	})
	// Load phase: every record is on all its replicas before the run starts.
	loadVersion := wire.Version{TS: hlc.Timestamp{WallNanos: sim.Epoch - int64(time.Hour)}}
	var holders []wire.NodeID
	for _, key := range gen.LoadKeys() {
		if rn.tgen != nil {
			break // transactional records start absent
		}
		v := rn.valueBytes("load:" + key)
		sk, rec := r.proto.Load(key, store.Record{Value: v, Version: loadVersion})
		holders = r.proto.Replicas(holders[:0], key)
		for _, n := range holders {
			rn.s.Engine(n).Load(sk, rec)
		}
		if ol, ok := r.proto.(protocol.ObjectLoader); ok {
			ol.LoadObjects(key, store.Record{Value: v, Version: loadVersion}, func(svc wire.NodeID, k string, data []byte, meta storagesvc.Meta) {
				if _, err := rn.s.ServiceAt(svc).Put(context.Background(), k, data, meta, storagesvc.Cond{}); err != nil {
					panic(fmt.Sprintf("scenario: preloading %q into storage service %d: %v", k, svc, err))
				}
			})
		}
		rn.hist.Init[key] = unpadValue(v)
	}
	rn.lat = make([][numClasses]*hdrhistogram.Histogram, len(r.world.Regions))
	rn.intent = make([][numClasses]*hdrhistogram.Histogram, len(r.world.Regions))
	faults := r.faults
	if c.RandomFaults {
		fr := rand.New(rand.NewPCG(c.Seed, 0x666c74)) // "flt"
		for _, f := range RandomFaults(fr, r.topo, c.Duration) {
			rf, err := resolveFault(f, r.topo)
			if err != nil {
				panic(err) // generated from the topology's own names
			}
			faults = append(faults, rf)
		}
	}
	for _, f := range faults {
		f.schedule(rn.s)
	}
	rn.s.MeterStored() // what the load phase put
	rn.svcBase = rn.serviceRequests()
	if rn.warmup > 0 {
		rn.s.At(rn.warmup, func() {
			rn.warmMsgs = rn.s.MessageCounts()
			rn.acc.Reset(time.Duration(rn.warmup))
			rn.svcBase = rn.serviceRequests()
		})
	}
	// Clients: spread over the regions in order, each on a node of its region.
	perRegion := make([]int, len(r.world.Regions))
	for i := 0; i < c.Clients; i++ {
		reg := i % len(r.world.Regions)
		nodes := r.topo.ByRegion[reg]
		cl := &client{idx: i, region: reg, gateway: nodes[perRegion[reg]%len(nodes)],
			rng: rand.New(rand.NewPCG(c.Seed, 0x636c69<<20|uint64(i)))} // "cli"
		perRegion[reg]++
		rn.newSession(cl)
		rn.clients = append(rn.clients, cl)
		if c.Rate > 0 {
			rn.scheduleArrival(cl, 0)
		} else {
			rn.s.At(0, func() { rn.startOp(cl, rn.s.Now()) })
		}
	}
	// Drain: let in-flight requests finish or time out. With a per-client
	// operation count, stop as soon as every client is done with its own.
	limit := int64(c.Duration + c.ClientTimeout + time.Second)
	if c.OpsPerClient > 0 {
		for t := int64(time.Second); t < limit && !rn.allDone(); t += int64(time.Second) {
			rn.s.Run(t)
		}
		if rn.allDone() {
			rn.stopped = rn.s.Now()
			return rn.result()
		}
	}
	rn.s.Run(limit)
	return rn.result()
}

// serviceRequests are the storage services' own request counts
// (storagesvc.MemStats), "region/op", summed over each region's replicas.
func (rn *runner) serviceRequests() map[string]int64 {
	out := map[string]int64{}
	for reg, rg := range rn.r.world.Regions {
		for _, m := range rn.s.ServiceReplicas(reg) {
			for op, n := range m.Stats().Requests {
				if n > 0 {
					out[rg.Name+"/"+storagesvc.Op(op).String()] += n
				}
			}
		}
	}
	return out
}

// allDone says every client has finished its Config.OpsPerClient operations.
func (rn *runner) allDone() bool {
	for _, cl := range rn.clients {
		if cl.busy || cl.opsStarted < rn.r.cfg.OpsPerClient {
			return false
		}
	}
	return true
}

func (rn *runner) newSession(cl *client) {
	if cl.session != 0 {
		delete(rn.sessions, cl.session)
	}
	rn.nextSess++
	cl.session = rn.nextSess
	rn.sessions[cl.session] = cl
}

// scheduleArrival schedules the client's next Poisson arrival after from.
// A gap that crosses a rate step is drawn again from the step at the new
// rate: exponential gaps are memoryless, so the arrivals stay a Poisson
// process whose rate changes exactly at the step.
func (rn *runner) scheduleArrival(cl *client, from int64) {
	var at int64
	for {
		total, next := rn.r.cfg.rateAt(time.Duration(from))
		at = from + int64(workload.PoissonGap(cl.rng, total/float64(rn.r.cfg.Clients)))
		if next < 0 || at < int64(next) {
			break
		}
		from = int64(next)
	}
	if at >= rn.end {
		return
	}
	rn.s.At(at, func() {
		rn.scheduleArrival(cl, at)
		if cl.busy {
			cl.queue = append(cl.queue, at)
			return
		}
		rn.startOp(cl, at)
	})
}

// startOp begins the client's next operation, which arrived at intended.
func (rn *runner) startOp(cl *client, intended int64) {
	now := rn.s.Now()
	if now >= rn.end || (rn.r.cfg.OpsPerClient > 0 && cl.opsStarted >= rn.r.cfg.OpsPerClient) {
		return
	}
	cl.opsStarted++
	if rn.tgen != nil {
		t := rn.tgen.Next(cl.rng)
		class := classRMW
		if t.ReadOnly {
			class = classRead
		}
		txn := txnRequest(t, rn.tgen.Spec().Update, func() string { return rn.nextValue(cl) })
		cl.busy, cl.class, cl.intended, cl.started, cl.failed = true, class, intended, now, false
		cl.steps = append(cl.steps[:0], step{op: wire.OpTxn, txn: txn})
		rn.sendStep(cl)
		return
	}
	op := rn.gen.Next(cl.rng)
	prefix := rn.regionPrefix(cl)
	op.Key = prefix + op.Key
	cl.busy, cl.class, cl.intended, cl.started, cl.failed = true, classOf(op.Kind), intended, now, false
	cl.steps = cl.stepBuf[:0]
	switch op.Kind {
	case workload.Read:
		cl.steps = append(cl.steps, step{op: wire.OpGet, key: op.Key})
	case workload.Update, workload.Insert:
		cl.steps = append(cl.steps, step{op: wire.OpPut, key: op.Key})
	case workload.ReadModifyWrite:
		cl.steps = append(cl.steps, step{op: wire.OpGet, key: op.Key}, step{op: wire.OpPut, key: op.Key})
	case workload.Scan:
		// The protocol contract has no range read: a scan is ScanLen
		// sequential reads of consecutive records.
		for _, k := range rn.gen.ScanKeys(op) {
			cl.steps = append(cl.steps, step{op: wire.OpGet, key: prefix + k})
		}
	}
	for i := 1; i < rn.r.cfg.Batch; i++ {
		// The rest of the hold's batch: the generator's next operations,
		// on the batch's key (resolve allows Batch > 1 only with Locking).
		next := rn.gen.Next(cl.rng)
		switch next.Kind {
		case workload.Read, workload.Scan:
			cl.steps = append(cl.steps, step{op: wire.OpGet, key: op.Key})
		case workload.Update, workload.Insert:
			cl.steps = append(cl.steps, step{op: wire.OpPut, key: op.Key})
		case workload.ReadModifyWrite:
			cl.steps = append(cl.steps, step{op: wire.OpGet, key: op.Key}, step{op: wire.OpPut, key: op.Key})
		}
	}
	cl.stepBuf = cl.steps
	if rn.r.def.Locking {
		cl.steps = bracket(cl.steps)
	}
	rn.sendStep(cl)
}

// regionPrefix draws whether the client's next operation is on its
// region's rows (Config.RegionKeys) and returns the key prefix: its
// region's name and "/", or "" for a shared row. It draws nothing when
// RegionKeys is 0, so runs without it keep their random sequence.
func (rn *runner) regionPrefix(cl *client) string {
	if rn.r.cfg.RegionKeys == 0 || cl.rng.Float64() >= rn.r.cfg.RegionKeys {
		return ""
	}
	return rn.r.world.Regions[cl.region].Name + "/"
}

// bracket wraps each run of steps on one key in an acquire and a release
// of the key, for protocols whose clients must hold a key to use it
// (protocol.Definition.Locking; seed 002's modified workload F: a batch of
// operations between acquire and release).
func bracket(steps []step) []step {
	out := make([]step, 0, len(steps)+2)
	for i, st := range steps {
		if i == 0 || steps[i-1].key != st.key {
			out = append(out, step{op: wire.OpAcquire, key: st.key})
		}
		out = append(out, st)
		if i == len(steps)-1 || steps[i+1].key != st.key {
			out = append(out, step{op: wire.OpRelease, key: st.key})
		}
	}
	return out
}

// skipFailed drops the steps a failed step leaves pointless: after a failed
// acquire, everything up to and including its release; after another
// failed step in a hold, everything up to the release (which still runs,
// so the hold is given back). Without holds: every remaining step.
func skipFailed(steps []step) []step {
	st := steps[0]
	if st.op == wire.OpRelease {
		return steps[1:]
	}
	for i := 1; i < len(steps); i++ {
		if steps[i].op == wire.OpRelease && steps[i].key == st.key {
			if st.op == wire.OpAcquire {
				return steps[i+1:]
			}
			return steps[i:]
		}
	}
	return steps[:0]
}

func (rn *runner) sendStep(cl *client) {
	st := cl.steps[0]
	cl.reqID++
	cl.call = rn.s.Now()
	req := &wire.Request{ID: cl.reqID, Client: cl.session, Op: st.op, Key: st.key, Txn: st.txn}
	if st.op == wire.OpPut {
		cl.value = rn.nextValue(cl)
		req.Value = rn.valueBytes(cl.value)
	}
	rn.s.Submit(cl.region, cl.gateway, req)
	if cl.timeout == nil {
		cl.timeout = func() { rn.clientTimeout(cl) }
	}
	cl.waits.Push(sentReq{cl.reqID, cl.session})
	rn.s.After(rn.r.cfg.ClientTimeout, cl.timeout)
}

// sentReq is a request a client's timeout waits for.
type sentReq struct {
	id   wire.RequestID
	sess wire.ClientID
}

// clientTimeout is the client timeout of cl's oldest request still
// waited for: it fails the request if it is still the one running.
func (rn *runner) clientTimeout(cl *client) {
	w := cl.waits.Pop()
	if cl.session == w.sess && cl.reqID == w.id && cl.busy {
		rn.complete(cl, &wire.Reply{ID: w.id, Client: w.sess, Err: &wire.Error{Code: wire.ErrTimeout, Msg: "client timeout"}})
	}
}

// nextValue is the value of cl's next write: unique per history, since
// the checkers identify writes by value.
func (rn *runner) nextValue(cl *client) string {
	rn.writes++
	return "c" + strconv.Itoa(cl.idx) + "-" + strconv.FormatUint(rn.writes, 10)
}

func (rn *runner) onReply(rep *wire.Reply) {
	cl := rn.sessions[rep.Client]
	if cl == nil || !cl.busy || rep.ID != cl.reqID {
		return // late reply to a request already given up on
	}
	rn.complete(cl, rep)
}

// complete records the current request's outcome and moves the client on.
func (rn *runner) complete(cl *client, rep *wire.Reply) {
	now := rn.s.Now()
	st := cl.steps[0]
	if st.op == wire.OpTxn && cl.started >= rn.warmup {
		rn.countTxn(classNames[cl.class], rep.Err)
	}
	if rn.record && st.op == wire.OpTxn {
		rn.txns = append(rn.txns, recordTxn(int64(cl.session), cl.call, now, st.txn, rep))
	} else if rn.record {
		op := check.Op{Client: int64(cl.session), Key: st.key, Call: cl.call, Return: now, Outcome: check.OK}
		switch st.op {
		case wire.OpAcquire:
			op.Kind = check.Acquire
		case wire.OpRelease:
			op.Kind = check.Release
		case wire.OpGet:
			op.Kind, op.Found, op.Value = check.Read, rep.Found, unpadValue(rep.Value)
			if rep.ReadAt != 0 {
				op.Pos = check.Position{Set: true, T: rep.ReadAt, Sub: math.MaxInt64, Node: math.MaxInt64}
			}
		default:
			op.Kind, op.Found, op.Value = check.Write, st.op == wire.OpPut, cl.value
			op.Pos = versionPos(rep.Version)
		}
		if rep.Err != nil {
			switch {
			case isWrite(st.op) && rep.Err.OutcomeUnknown():
				op.Outcome, op.Return = check.Unknown, check.Never
			default:
				op.Outcome = check.Failed
			}
		}
		rn.histOps.add(op, now, rn.end)
	}
	if rep.Err != nil {
		rn.errs[rep.Err.Code.String()]++
		cl.failed = true
		if (isWrite(st.op) || st.op == wire.OpTxn && !st.txn.ReadOnly) && rep.Err.OutcomeUnknown() {
			// The write may still take effect later: continue as a new
			// session so program order stays true (check.History).
			rn.newSession(cl)
		}
		cl.steps = skipFailed(cl.steps)
	} else {
		cl.steps = cl.steps[1:]
	}
	if len(cl.steps) > 0 {
		rn.sendStep(cl)
		return
	}
	cl.busy = false
	if !cl.failed {
		rn.recordSecond(cl.class, now, max(1, (now-cl.started)/1e3))
		if cl.started >= rn.warmup {
			rn.ops++
			lat, intent := rn.latencies(cl.region, cl.class)
			lat.RecordValue(max(1, (now-cl.started)/1e3))
			intent.RecordValue(max(1, (now-cl.intended)/1e3))
		}
	}
	switch {
	case rn.r.cfg.Rate == 0:
		rn.startOp(cl, now)
	case len(cl.queue) > 0:
		next := cl.queue[0]
		cl.queue = cl.queue[1:]
		rn.startOp(cl, next)
	}
}

// latencies are the histograms of region's operations of class k, made
// when its first operation completes: each is ~190 KB to allocate and
// clear, and a run uses few of the regions × classes (YCSB B: reads and
// updates), so making all of them up front was ~2% of a quorum run.
func (rn *runner) latencies(region int, k opClass) (lat, intent *hdrhistogram.Histogram) {
	if rn.lat[region][k] == nil {
		rn.lat[region][k], rn.intent[region][k] = newHist(), newHist()
	}
	return rn.lat[region][k], rn.intent[region][k]
}

// opLog collects a run's history in chunks, and gives it as one slice at
// the end (all). The first chunk is short (opLogMin); the second is sized
// from the rate at which operations completed in the first (what the rest
// of the run should add at that rate, a quarter more, up to opLogLeap),
// and the first one's operations move into it, so that a steady run keeps
// its whole history in that one chunk and all copies nothing. A run whose
// rate rises goes on in chunks of opLogMin, copied into one slice by all,
// once, as they always were (gathering every chunk at the end, as the
// heap peaked, was ~6% of a meteor run; growing one slice by doubling
// copied the history again at every doubling).
type opLog struct {
	full  [][]check.Op // filled chunks, oldest first
	cur   []check.Op
	first int64 // when the first operation was added
	sized bool  // the second chunk, sized from the rate, is made
}

// opLogMin is the length of the first chunk and of those after the second;
// opLogLeap bounds the second's. A rate measured early that falls later
// (sc's) reserves no more than that: the rest of the chunk is never
// written.
const (
	opLogMin  = 4096
	opLogLeap = 1 << 18
)

// add appends op, completed at now (ns into the run, as Sim.Now), in a run
// whose clients start operations until end.
func (l *opLog) add(op check.Op, now, end int64) {
	if len(l.cur) == cap(l.cur) {
		l.next(now, end)
	}
	if len(l.cur) == 0 && len(l.full) == 0 {
		l.first = now
	}
	l.cur = append(l.cur, op)
}

// next starts a chunk (add). The rate is measured from the first
// operation's completion, not from the start of the run, which an
// operation's latency comes before.
func (l *opLog) next(now, end int64) {
	n := len(l.cur)
	if n == 0 || l.sized {
		if n > 0 {
			l.full = append(l.full, l.cur)
		}
		l.cur = make([]check.Op, 0, opLogMin)
		return
	}
	l.sized = true
	size := 2 * n
	if now > l.first && end > now {
		rest := float64(n) * float64(end-now) / float64(now-l.first)
		size = max(size, min(n+int(1.25*rest), opLogLeap))
	}
	l.cur = append(make([]check.Op, 0, size), l.cur...)
}

// all returns every operation added, in order (nil if none).
func (l *opLog) all() []check.Op {
	if len(l.full) == 0 {
		if len(l.cur) == 0 {
			return nil
		}
		return l.cur[:len(l.cur):len(l.cur)]
	}
	n := len(l.cur)
	for _, c := range l.full {
		n += len(c)
	}
	out := make([]check.Op, 0, n)
	for _, c := range l.full {
		out = append(out, c...)
	}
	return append(out, l.cur...)
}

func isWrite(op wire.Op) bool { return op == wire.OpPut || op == wire.OpDelete }

func (rn *runner) checkHistory() *CheckResult {
	model := rn.r.cfg.Check
	if model == "none" || rn.r.cfg.skipCheck {
		return nil
	}
	if rn.r.txns != nil {
		return rn.checkTxns(model)
	}
	if model == "auto" {
		model = rn.r.claimedModel()
	}
	res, err := check.Check(model, rn.hist, check.WithTimeout(60*time.Second), check.WithBudget(5_000_000))
	if err != nil {
		panic(err) // models are validated in resolve
	}
	cr := &CheckResult{Model: model, Verdict: res.Verdict.String(), Key: res.Key, Detail: res.Detail, Ops: len(rn.hist.Ops)}
	// A broken invariant fails the run whatever the history shows: the
	// bug showed at its cause (env.Env.Invariant).
	for _, f := range rn.s.Failures() {
		if f.Violation() {
			cr.Verdict, cr.Key, cr.Detail = check.Violation.String(), "", "invariant: "+f.String()
			break
		}
	}
	return cr
}

// clockError bounds how far any node's clock strays from true time during
// the run, given the drawn offsets and drifts and the skew faults.
func (r *resolved) clockError() time.Duration {
	span := r.cfg.Duration + r.cfg.ClientTimeout + time.Second // the whole run, drain included
	drift := func(ppm float64) time.Duration { return time.Duration(math.Abs(ppm) * 1e-6 * float64(span)) }
	worst := r.cfg.Clock.MaxOffset + drift(r.cfg.Clock.MaxDriftPPM)
	for _, f := range r.faults {
		if f.f.Skew != nil {
			off := f.f.Skew.Offset
			if off < 0 {
				off = -off
			}
			worst = max(worst, off+drift(f.f.Skew.DriftPPM))
		}
	}
	return worst
}

// claimedModel is what the protocol claims for this run: its model when the
// clocks stay within the protocol's bound (and, for one that assumes it,
// no fault steps a running node's clock), otherwise only valid reads.
func (r *resolved) claimedModel() string {
	if b := r.proto.ClockBound(); b > 0 && r.clockError() > b {
		return "valid-reads"
	}
	if sc, ok := r.proto.(protocol.SteadyClocks); ok {
		if ppm, assumes := sc.AssumesSteadyClocks(); assumes && !r.steadyClocks(ppm) {
			return "valid-reads"
		}
	}
	return r.proto.Model()
}

// steadyClocks reports whether no fault steps a running node's clock and
// every clock drifts within ppm. A skew fault sets a node's offset (and
// its end sets it back): a step, unless every offset is 0 throughout.
func (r *resolved) steadyClocks(ppm float64) bool {
	if math.Abs(r.cfg.Clock.MaxDriftPPM) > ppm {
		return false
	}
	for _, f := range r.faults {
		if k := f.f.Skew; k != nil && (k.Offset != 0 || r.cfg.Clock.MaxOffset != 0 || math.Abs(k.DriftPPM) > ppm) {
			return false
		}
	}
	return true
}

func (rn *runner) recordSecond(k opClass, now, us int64) {
	sec := int(now / int64(time.Second))
	ps := rn.perSecond[k]
	for len(ps) <= sec {
		ps = append(ps, nil)
	}
	if ps[sec] == nil {
		ps[sec] = hdrhistogram.New(1, int64(time.Minute/time.Microsecond), 2)
	}
	_ = ps[sec].RecordValue(us)
	rn.perSecond[k] = ps
}

// Check validates c as Run would, without running it.
func Check(c Config) (Config, error) {
	c.EnsureDefaults()
	_, err := resolve(c)
	return c, err
}

// padSep ends a value's identity when Config.PadValues fills it up to the
// workload's value size; no workload key or value contains it.
const padSep = '~'

// valueBytes is the value written for id: id itself, or with
// Config.PadValues id, padSep and filler up to the workload's value_size.
func (rn *runner) valueBytes(id string) []byte {
	n := rn.r.workload.ValueSize
	if !rn.r.cfg.PadValues || len(id)+1 >= n {
		return []byte(id)
	}
	b := make([]byte, n)
	copy(b, id)
	b[len(id)] = padSep
	for i := len(id) + 1; i < n; i++ {
		b[i] = 'x'
	}
	return b
}

// unpadValue is the identity of a value read (valueBytes undone): the
// history and its checkers compare identities, not filler.
func unpadValue(v []byte) string {
	if i := bytes.IndexByte(v, padSep); i >= 0 {
		return string(v[:i])
	}
	return string(v)
}
