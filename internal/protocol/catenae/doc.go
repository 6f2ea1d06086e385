// Package catenae is Catenae (seed 000 §4.3, Liu's thesis): serializable
// transactions over data fully replicated in every region, committing a
// non-conflicting transaction in about half a round trip and a conflicting
// one in about one. Written up in docs/design/catenae.md.
package catenae
