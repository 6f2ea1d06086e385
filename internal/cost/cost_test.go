package cost

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/lightcone/lightcone/internal/topo"
)

func TestBuiltinCataloguesParse(t *testing.T) {
	cats, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"aws", "azure"} {
		if cats[p] == nil {
			t.Errorf("Builtin() has no %s catalogue", p)
		}
	}
}

// TestPresetWorldsArePriced: every region of a preset world that claims a
// provider with a catalogue names a cloud region the catalogue lists, and
// every provider the presets name for a cloud (not local, emulated) has a
// catalogue.
func TestPresetWorldsArePriced(t *testing.T) {
	cats := MustBuiltin()
	for _, name := range topo.PresetNames() {
		w, err := topo.Preset(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range w.Regions {
			if r.Provider != "local" && r.Provider != "emulated" && cats[r.Provider] == nil {
				t.Errorf("world %s region %s: provider %q has no catalogue", name, r.Name, r.Provider)
			}
		}
		rates, err := ForWorld(w, cats)
		if err != nil {
			t.Errorf("ForWorld(%s): %v", name, err)
			continue
		}
		for i, r := range w.Regions {
			if rates.Priced(i) != (cats[r.Provider] != nil) {
				t.Errorf("world %s region %s: Priced = %v", name, r.Name, rates.Priced(i))
			}
		}
	}
}

// TestCatalogueUnits: Check refuses prices without a source or an
// assumption, and the unit mistakes the bounds exist for.
func TestCatalogueUnits(t *testing.T) {
	base := MustBuiltin()["azure"]
	for _, tc := range []struct {
		name string
		edit func(c *Catalogue)
		want string
	}{
		{"unchanged", func(c *Catalogue) {}, ""},
		{"no source", func(c *Catalogue) { c.Defaults.StorageGBMonth = &Price{USD: 0.02} }, "neither a source nor an assumption"},
		{"unknown source", func(c *Catalogue) { c.Defaults.StorageGBMonth = &Price{USD: 0.02, Source: "nope"} }, "not in sources"},
		{"request per 1", func(c *Catalogue) { c.Defaults.Requests["read"] = &Price{USD: 0.004, Per: 1, Source: "bandwidth"} }, "per 1000 or per 10000"},
		{"monthly VM price", func(c *Catalogue) { c.Defaults.VMHour["d2s_v3"] = &Price{USD: 70.08, Source: "vm-d2sv3"} }, "unit mistake"},
		{"storage per TB", func(c *Catalogue) { c.Defaults.StorageGBMonth = &Price{USD: 20.8, Source: "bandwidth"} }, "unit mistake"},
		{"op of unpriced class", func(c *Catalogue) { c.Ops["get"] = []string{"fetch"} }, "no price"},
		{"missing op", func(c *Catalogue) { delete(c.Ops, "put_meta") }, "ops.put_meta: required"},
	} {
		c := clone(base)
		tc.edit(c)
		err := c.Check()
		if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: Check() = %v; want %q", tc.name, err, tc.want)
		}
	}
}

func clone(c *Catalogue) *Catalogue {
	d := *c
	d.Ops = map[string][]string{}
	for k, v := range c.Ops {
		d.Ops[k] = v
	}
	d.Defaults.Requests = map[string]*Price{}
	for k, v := range c.Defaults.Requests {
		d.Defaults.Requests[k] = v
	}
	d.Defaults.VMHour = map[string]*Price{}
	for k, v := range c.Defaults.VMHour {
		d.Defaults.VMHour[k] = v
	}
	return &d
}

// TestBillCRICWorld prices a hand-made usage on cric5 and checks each part
// against arithmetic done here from the catalogue's numbers.
func TestBillCRICWorld(t *testing.T) {
	w, err := topo.Preset("cric5")
	if err != nil {
		t.Fatal(err)
	}
	rates, err := ForWorld(w, MustBuiltin())
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, len(w.Regions))
	for i, r := range w.Regions {
		names[i] = r.Name
	}
	eus, jpe := w.RegionIndex("east-us"), w.RegionIndex("japan-east")
	a := NewAccountant(names)
	for range 10000 {
		a.StorageRequest(eus, "put_meta") // Azure: Other, $0.004 / 10k
	}
	a.StorageRequest(eus, "put") // Write, $0.05 / 10k
	a.Stored(eus, 0, GiB)
	a.Transfer(eus, jpe, GiB)    // other continent from North America: $0.05
	a.Transfer(jpe, eus, GiB)    // from Asia: $0.08
	a.Transfer(eus, eus, 10*GiB) // free
	a.AddVMs(VM{Region: jpe, Role: "assistant", Size: "d2s_v3", Count: 2})
	u := a.Usage(time.Duration(Month))
	b, err := rates.Bill(u)
	if err != nil {
		t.Fatal(err)
	}
	want := Bill{Requests: 0.004 + 0.05/10000, Storage: 0.0208, Egress: 0.05 + 0.08, VMs: 2 * 730 * 0.096}
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"requests", b.Requests, want.Requests}, {"storage", b.Storage, want.Storage}, {"egress", b.Egress, want.Egress}, {"vms", b.VMs, want.VMs}} {
		if math.Abs(c.got-c.want) > 1e-9 {
			t.Errorf("Bill %s = %v; want %v", c.name, c.got, c.want)
		}
	}
	if len(b.Unpriced) != 0 {
		t.Errorf("Unpriced = %v; want none", b.Unpriced)
	}
}

// TestAccountantReset: a warm-up's counts are dropped, stored bytes kept.
func TestAccountantReset(t *testing.T) {
	a := NewAccountant([]string{"a"})
	a.StorageRequest(0, "get")
	a.Stored(0, 0, 100)
	a.Reset(time.Second)
	a.StorageRequest(0, "put")
	u := a.Usage(3 * time.Second)
	if got := u.Requests[0]; len(got) != 1 || got["put"] != 1 {
		t.Errorf("Requests after Reset = %v; want put:1", got)
	}
	if want := 100 * 2e9 / GiB / float64(Month); math.Abs(u.StoredGBMonths[0]-want) > 1e-18 {
		t.Errorf("StoredGBMonths = %v; want %v", u.StoredGBMonths[0], want)
	}
	if u.Seconds != 2 {
		t.Errorf("Seconds = %v; want 2", u.Seconds)
	}
}
