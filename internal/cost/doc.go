// Package cost is the cost accountant of the cloud-storage seeds (seed 001:
// CosTLO §1, SPANStore §2 and CRIC §3 all minimise one bill: storage,
// requests, egress and VM-hours). It has three parts:
//
//   - Price catalogues (prices/<provider>.yaml, Catalogue): list prices per
//     provider and region — storage per GiB-month, requests per class (and
//     which classes each storage-service operation is charged as: Azure's
//     metadata-only write is cheap, S3 has none), egress per GiB by where it
//     goes, VMs per hour by size — each citing its source and retrieval
//     date, or stating the assumption it rests on. DESIGN.md: "price
//     catalogues are data files with their sources".
//   - Rates: a world's prices region by region (topo.Region.CloudRegion
//     keys the catalogue), for cost models to optimise over (SPANStore's
//     placement, CosTLO's configuration search) and for Bill.
//   - Accountant: counts what a run used — storage requests by region and
//     operation, stored bytes over time, bytes sent between regions, VMs a
//     protocol declares — from the simulator (sim.Config.Meter) or the real
//     runtime's storage routing (svchost.Config.Meter, with Collector on
//     /metrics). Usage snapshots it; Rates.Bill prices it.
//
// docs/cost.md describes the catalogue format, the units and what is and is
// not counted.
package cost
