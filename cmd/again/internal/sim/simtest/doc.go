// Package simtest holds the helpers the simulator's model tests share.
//
// It is imported by tests only. Its -update flag makes [Golden] rewrite the
// golden files instead of comparing with them.
package simtest
