module github.com/again-go/again/scripts/mkproxy

go 1.25

require golang.org/x/mod v0.30.0
