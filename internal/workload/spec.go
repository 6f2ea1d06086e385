package workload

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// OpKind is the kind of a generated operation.
type OpKind uint8

// Operation kinds, matching YCSB's READ, UPDATE, INSERT, SCAN and
// READMODIFYWRITE transaction operations.
const (
	Read OpKind = iota
	Update
	Insert
	Scan
	ReadModifyWrite
)

var opKindNames = [...]string{"read", "update", "insert", "scan", "rmw"}

// String returns "read", "update", "insert", "scan" or "rmw".
func (k OpKind) String() string {
	if int(k) < len(opKindNames) {
		return opKindNames[k]
	}
	return fmt.Sprintf("OpKind(%d)", uint8(k))
}

// Op is one generated operation. ScanLen is the number of records to scan
// (only for Scan; zero otherwise).
type Op struct {
	Kind    OpKind
	Key     string
	KeyNum  int64 // Scan: the record number of Key
	ScanLen int
}

// Request distributions.
const (
	DistUniform = "uniform"
	DistZipfian = "zipfian"
	DistLatest  = "latest"
	DistHotspot = "hotspot"
)

// Insert orders.
const (
	InsertHashed  = "hashed"
	InsertOrdered = "ordered"
)

// Scan length distributions.
const (
	ScanUniform = "uniform"
	ScanZipfian = "zipfian"
)

// Defaults, as in YCSB's CoreWorkload / ZipfianGenerator.
const (
	DefaultRecordCount         = 1000
	DefaultOperationCount      = 1000
	DefaultZipfianConstant     = 0.99
	DefaultHotspotDataFraction = 0.2
	DefaultHotspotOpnFraction  = 0.8
	DefaultMinScanLength       = 1
	DefaultMaxScanLength       = 1000
	DefaultValueSize           = 10 * 100 // fieldcount * fieldlength
	DefaultReadProportion      = 0.95
	DefaultUpdateProportion    = 0.05

	// MaxExactZipfKeys bounds the key space of the exact (ZipfExponent > 0)
	// sampler, whose cumulative table costs 8 bytes per key.
	MaxExactZipfKeys = 1 << 24
)

var validDistributions = []string{DistUniform, DistZipfian, DistLatest, DistHotspot}

// Spec describes a YCSB core workload. Field comments give the YCSB
// property name; see the package documentation for details.
type Spec struct {
	Name string `yaml:"name"`

	RecordCount    int `yaml:"record_count"`    // recordcount
	OperationCount int `yaml:"operation_count"` // operationcount

	ReadProportion            float64 `yaml:"read_proportion"`              // readproportion
	UpdateProportion          float64 `yaml:"update_proportion"`            // updateproportion
	InsertProportion          float64 `yaml:"insert_proportion"`            // insertproportion
	ScanProportion            float64 `yaml:"scan_proportion"`              // scanproportion
	ReadModifyWriteProportion float64 `yaml:"read_modify_write_proportion"` // readmodifywriteproportion

	RequestDistribution string  `yaml:"request_distribution"` // requestdistribution: uniform, zipfian, latest, hotspot
	ZipfianConstant     float64 `yaml:"zipfian_constant"`     // ZipfianGenerator.ZIPFIAN_CONSTANT (theta), default 0.99
	ZipfExponent        float64 `yaml:"zipf_exponent"`        // not in YCSB: plain Zipf exponent s, used when > 0

	HotspotDataFraction float64 `yaml:"hotspot_data_fraction"` // hotspotdatafraction
	HotspotOpnFraction  float64 `yaml:"hotspot_opn_fraction"`  // hotspotopnfraction

	MinScanLength          int    `yaml:"min_scan_length"`          // minscanlength
	MaxScanLength          int    `yaml:"max_scan_length"`          // maxscanlength
	ScanLengthDistribution string `yaml:"scan_length_distribution"` // scanlengthdistribution: uniform, zipfian

	ValueSize   int    `yaml:"value_size"`   // fieldcount * fieldlength
	InsertOrder string `yaml:"insert_order"` // insertorder: hashed, ordered
}

var presets = []Spec{
	{Name: "workloada", ReadProportion: 0.5, UpdateProportion: 0.5, RequestDistribution: DistZipfian},
	{Name: "workloadb", ReadProportion: 0.95, UpdateProportion: 0.05, RequestDistribution: DistZipfian},
	{Name: "workloadc", ReadProportion: 1, RequestDistribution: DistZipfian},
	{Name: "workloadd", ReadProportion: 0.95, InsertProportion: 0.05, RequestDistribution: DistLatest},
	{Name: "workloade", ScanProportion: 0.95, InsertProportion: 0.05, RequestDistribution: DistZipfian,
		MaxScanLength: 100, ScanLengthDistribution: ScanUniform},
	{Name: "workloadf", ReadProportion: 0.5, ReadModifyWriteProportion: 0.5, RequestDistribution: DistZipfian},
}

// PresetNames returns the short names of the YCSB core workloads, "a".."f".
func PresetNames() []string {
	names := make([]string, len(presets))
	for i, p := range presets {
		names[i] = strings.TrimPrefix(p.Name, "workload")
	}
	return names
}

// Preset returns YCSB core workload name ("a".."f", or "workloada".."workloadf",
// case-insensitive) with YCSB's parameters and defaults filled in.
func Preset(name string) (Spec, error) {
	short := strings.TrimPrefix(strings.ToLower(strings.TrimSpace(name)), "workload")
	for _, p := range presets {
		if strings.TrimPrefix(p.Name, "workload") == short {
			s := p
			s.RecordCount = DefaultRecordCount
			s.OperationCount = DefaultOperationCount
			s.InsertOrder = InsertHashed
			s.EnsureDefaults()
			return s, nil
		}
	}
	return Spec{}, fmt.Errorf("workload: unknown preset %q; valid presets: %s (or workloada..workloadf)",
		name, strings.Join(PresetNames(), ", "))
}

// EnsureDefaults fills zero-valued fields with YCSB's defaults: record and
// operation count 1000, read/update proportions 0.95/0.05 if all proportions
// are zero, request distribution uniform, zipfian constant 0.99, hotspot
// fractions 0.2/0.8, scan length 1..1000 uniform, value size 1000 bytes,
// insert order hashed.
func (s *Spec) EnsureDefaults() {
	if s.RecordCount == 0 {
		s.RecordCount = DefaultRecordCount
	}
	if s.OperationCount == 0 {
		s.OperationCount = DefaultOperationCount
	}
	if s.ReadProportion == 0 && s.UpdateProportion == 0 && s.InsertProportion == 0 &&
		s.ScanProportion == 0 && s.ReadModifyWriteProportion == 0 {
		s.ReadProportion = DefaultReadProportion
		s.UpdateProportion = DefaultUpdateProportion
	}
	if s.RequestDistribution == "" {
		s.RequestDistribution = DistUniform
	}
	if s.ZipfianConstant == 0 {
		s.ZipfianConstant = DefaultZipfianConstant
	}
	if s.HotspotDataFraction == 0 {
		s.HotspotDataFraction = DefaultHotspotDataFraction
	}
	if s.HotspotOpnFraction == 0 {
		s.HotspotOpnFraction = DefaultHotspotOpnFraction
	}
	if s.MinScanLength == 0 {
		s.MinScanLength = DefaultMinScanLength
	}
	if s.MaxScanLength == 0 {
		s.MaxScanLength = DefaultMaxScanLength
	}
	if s.ScanLengthDistribution == "" {
		s.ScanLengthDistribution = ScanUniform
	}
	if s.ValueSize == 0 {
		s.ValueSize = DefaultValueSize
	}
	if s.InsertOrder == "" {
		s.InsertOrder = InsertHashed
	}
}

// expectedNewKeys is YCSB's prediction of the number of transaction-phase
// inserts: operationcount * insertproportion * 2 (the 2 is YCSB's fudge factor).
func (s Spec) expectedNewKeys() int64 {
	return int64(float64(s.OperationCount) * s.InsertProportion * 2.0)
}

// Validate reports the first problem with s, naming the offending field and
// its valid range or values. It does not apply defaults; call EnsureDefaults
// first to validate a partially filled Spec.
func (s Spec) Validate() error {
	bad := func(format string, args ...any) error {
		return errors.New("workload: " + fmt.Sprintf(format, args...))
	}
	if s.RecordCount < 1 {
		return bad("record_count must be >= 1 (got %d)", s.RecordCount)
	}
	if s.OperationCount < 0 {
		return bad("operation_count must be >= 0 (got %d)", s.OperationCount)
	}
	props := []struct {
		name string
		v    float64
	}{
		{"read_proportion", s.ReadProportion},
		{"update_proportion", s.UpdateProportion},
		{"insert_proportion", s.InsertProportion},
		{"scan_proportion", s.ScanProportion},
		{"read_modify_write_proportion", s.ReadModifyWriteProportion},
	}
	sum := 0.0
	for _, p := range props {
		if !(p.v >= 0 && p.v <= 1) {
			return bad("%s must be in [0, 1] (got %v)", p.name, p.v)
		}
		sum += p.v
	}
	if math.Abs(sum-1) > 1e-9 {
		return bad("read_proportion+update_proportion+insert_proportion+scan_proportion+read_modify_write_proportion must sum to 1 (got %v)", sum)
	}
	switch s.RequestDistribution {
	case DistUniform, DistZipfian, DistLatest, DistHotspot:
	default:
		return bad("request_distribution %q unknown; valid: %s", s.RequestDistribution, strings.Join(validDistributions, ", "))
	}
	if math.IsNaN(s.ZipfExponent) || math.IsInf(s.ZipfExponent, 0) || s.ZipfExponent < 0 {
		return bad("zipf_exponent must be a finite number >= 0 (0 = use zipfian_constant; got %v)", s.ZipfExponent)
	}
	if s.ZipfExponent == 0 && !(s.ZipfianConstant > 0 && s.ZipfianConstant < 1) {
		return bad("zipfian_constant must be in (0, 1) when zipf_exponent is 0 (got %v)", s.ZipfianConstant)
	}
	if s.ZipfExponent > 0 && (s.RequestDistribution == DistZipfian || s.RequestDistribution == DistLatest) {
		if n := int64(s.RecordCount) + s.expectedNewKeys(); n > MaxExactZipfKeys {
			return bad("zipf_exponent > 0 needs record_count + 2*operation_count*insert_proportion <= %d (got %d)", MaxExactZipfKeys, n)
		}
	}
	if !(s.HotspotDataFraction >= 0 && s.HotspotDataFraction <= 1) {
		return bad("hotspot_data_fraction must be in [0, 1] (got %v)", s.HotspotDataFraction)
	}
	if !(s.HotspotOpnFraction >= 0 && s.HotspotOpnFraction <= 1) {
		return bad("hotspot_opn_fraction must be in [0, 1] (got %v)", s.HotspotOpnFraction)
	}
	if s.MinScanLength < 1 {
		return bad("min_scan_length must be >= 1 (got %d)", s.MinScanLength)
	}
	if s.MaxScanLength < s.MinScanLength {
		return bad("max_scan_length must be >= min_scan_length (%d) (got %d)", s.MinScanLength, s.MaxScanLength)
	}
	switch s.ScanLengthDistribution {
	case ScanUniform, ScanZipfian:
	default:
		return bad("scan_length_distribution %q unknown; valid: %s, %s", s.ScanLengthDistribution, ScanUniform, ScanZipfian)
	}
	if s.ValueSize < 1 {
		return bad("value_size must be >= 1 (got %d)", s.ValueSize)
	}
	switch s.InsertOrder {
	case InsertHashed, InsertOrdered:
	default:
		return bad("insert_order %q unknown; valid: %s, %s", s.InsertOrder, InsertHashed, InsertOrdered)
	}
	return nil
}
