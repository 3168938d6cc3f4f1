module github.com/again-go/again

go 1.25
