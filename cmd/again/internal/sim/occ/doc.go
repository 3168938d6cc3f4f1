// Package occ models clients contending for one row, as in AWS's "Exponential
// Backoff And Jitter".
//
// [Run] runs the model of the AWS Architecture Blog's post (2015), its backoff
// algorithms compared; its results are within a few percent of the post's
// simulator's (testdata/aws-original.csv).
//
// Like every model of package sim, it is a pure function of its
// configuration and a seed, on a virtual clock.
package occ
