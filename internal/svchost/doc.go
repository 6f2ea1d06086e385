// Package svchost runs storage services for the real runtime.
package svchost
