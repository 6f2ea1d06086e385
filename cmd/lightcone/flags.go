package main

import "github.com/spf13/pflag"

// applyChanged copies, for every flag the user set, its value over the
// config file's, by calling the flag's entry in apply. Flags absent from
// apply are ones the caller reads directly.
func applyChanged(f *pflag.FlagSet, apply map[string]func()) {
	f.Visit(func(fl *pflag.Flag) {
		if fn, ok := apply[fl.Name]; ok {
			fn()
		}
	})
}
