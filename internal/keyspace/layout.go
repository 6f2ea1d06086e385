package keyspace

// Span is a range of the node's store that holds one keyspace's keys: a
// stored key in [From, To) (To "": no upper bound) is the keyspace's key
// Add + stored[len(Trim):]. The front ends' key listing (RESP SCAN) walks a
// keyspace's spans; the Mux's Store (subEnv.Store) defines the layout.
type Span struct{ From, To, Trim, Add string }

// Key is the keyspace's key for a stored key within the span.
func (s Span) Key(stored string) string { return s.Add + stored[len(s.Trim):] }

// Spans are the ranges of the store holding the keys of the keyspace named
// name, the default keyspace if first, in ascending order. The default
// keyspace's keys are stored as they are, except that a key starting "k/"
// is stored "k//..."; a named keyspace's keys live under "k/<name>/".
func Spans(first bool, name string) []Span {
	if first {
		return []Span{
			{From: "", To: "k/"},
			{From: "k//", To: "k/0", Trim: "k//", Add: "k/"}, // '0' follows '/'
			{From: "k0"},
		}
	}
	p := "k/" + name + "/"
	return []Span{{From: p, To: "k/" + name + "0", Trim: p}}
}
